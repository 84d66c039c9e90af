//! Log lines as people read them (a coloured `module/service |` prefix) or as scripts do (one JSON object per line).

use std::io::{self, BufWriter, Stdout, Write};

use crate::logs::line::Line;
use crate::logs::stream::Source;
use crate::output::ui::Ui;

/// Writes lines as people or scripts read them.
pub(crate) struct LogLines {
    out: BufWriter<Stdout>,
    json: bool,
    prefix: bool,
    timestamps: bool,
    color: bool,
    width: usize,
}

impl LogLines {
    /// Lines in the printer's format; `prefix` and `timestamps` as asked,
    /// prefixes padded to at least `width`.
    pub(crate) fn new(ui: &Ui, prefix: bool, timestamps: bool, width: usize) -> LogLines {
        LogLines {
            out: BufWriter::with_capacity(64 * 1024, io::stdout()),
            json: ui.json_lines(),
            prefix,
            timestamps,
            color: ui.style().color,
            width,
        }
    }

    pub(crate) fn widen(&mut self, w: usize) {
        self.width = self.width.max(w);
    }

    pub(crate) fn line(&mut self, src: &Source, line: &Line) -> io::Result<()> {
        if self.json {
            let doc = serde_json::json!({
                "module": src.module,
                "source": src.name,
                "stream": line.stream,
                "time": line.time.rfc3339_nanos(),
                "message": line.message,
            });
            return crate::output::json::write_line(&mut self.out, &doc);
        }
        if self.prefix {
            if self.color {
                write!(self.out, "\x1b[{}m", color_for(&src.label))?;
            }
            self.out.write_all(src.label.as_bytes())?;
            for _ in src.label.len()..self.width {
                self.out.write_all(b" ")?;
            }
            self.out.write_all(b" |")?;
            if self.color {
                self.out.write_all(b"\x1b[0m")?;
            }
            self.out.write_all(b" ")?;
        }
        if self.timestamps {
            write!(self.out, "{} ", line.time.rfc3339_nanos())?;
        }
        self.out.write_all(line.message.as_bytes())?;
        self.out.write_all(b"\n")
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// A stable colour per source: the same label gets the same colour every run.
fn color_for(label: &str) -> &'static str {
    const PALETTE: [&str; 6] = ["36", "33", "32", "35", "34", "31"];
    let mut h: u32 = 0x811c_9dc5;
    for b in label.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    PALETTE[(h % PALETTE.len() as u32) as usize]
}
