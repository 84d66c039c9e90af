//! Output decisions made once: JSON or human, colour, progress, and whether a person can be asked.

use std::io::IsTerminal;
use std::sync::Arc;

use crate::error::{Exit, HalError};
use crate::module::progress::Progress;
use crate::module::status::Detail;
use crate::output::area::Area;
pub(crate) use crate::output::color::ColorChoice;
use crate::output::color::Colors;
use crate::output::json;
use crate::output::view::{Modules, Style, View};

/// The output flags, as given on the command line.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Asked {
    pub json: bool,
    /// `status --format prometheus`: the answer in node_exporter's text format.
    pub prometheus: bool,
    pub quiet: bool,
    pub yes: bool,
    pub color: ColorChoice,
}

/// How an answer is written: decided once, in [`Ui::new`], and matched only
/// in this file. A new format is a variant here and its flag in `cli/`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Format {
    /// Tables and lines for a person.
    Human,
    /// One JSON document on stdout (or one object per line for streams), nothing else there.
    Json,
    /// node_exporter's textfile format (`status --format prometheus`): the
    /// answer as is on stdout, whatever `--json` or `-q` say, since it was
    /// asked for by name; messages stay as `--json` says.
    Prometheus,
}

/// The one printer: every command's output goes through it.
#[derive(Clone)]
pub(crate) struct Ui {
    format: Format,
    /// `--json`: messages are for scripts too (no lines or notes for people,
    /// the error document on stdout), whatever format the answer is in.
    scripts: bool,
    /// Colour and quiet, for every view and line the printer renders.
    style: Style,
    /// Spinners and bars on stderr.
    pub progress: bool,
    /// stdin and stderr are terminals, so a person can answer a question.
    pub interactive: bool,
    pub yes: bool,
    /// The spinners and bars, bounded to the screen.
    area: Arc<Area>,
}

impl Ui {
    pub(crate) fn new(g: Asked) -> Ui {
        let err_tty = std::io::stderr().is_terminal();
        let in_tty = std::io::stdin().is_terminal();
        let colors = Colors::of_process(g.color);
        let colors = Colors {
            stdout: colors.stdout && !g.json,
            ..colors
        };
        colors.apply();
        let progress = err_tty && !g.json && !g.quiet && !dumb_term();
        Ui {
            format: match (g.prometheus, g.json) {
                (true, _) => Format::Prometheus,
                (false, true) => Format::Json,
                (false, false) => Format::Human,
            },
            scripts: g.json,
            style: Style {
                color: colors.stdout,
                color_err: colors.stderr,
                quiet: g.quiet,
            },
            progress,
            interactive: in_tty && err_tty,
            yes: g.yes,
            area: Arc::new(Area::new(progress)),
        }
    }

    /// Runs `f`, which prints whole lines, above the progress area.
    fn above<R>(&self, f: impl FnOnce() -> R) -> R {
        if self.progress {
            self.area.suspend(f)
        } else {
            f()
        }
    }

    /// How much a status must read: scripts get exact start times and restart
    /// counts; the table only needs what the list call already says about
    /// settled containers.
    pub(crate) fn status_detail(&self) -> Detail {
        if self.scripts {
            Detail::Full
        } else {
            Detail::Settled
        }
    }

    /// Whether a person reads what hal says as it goes (a line per module as
    /// it finishes), rather than a script its one document at the end.
    pub(crate) fn for_people(&self) -> bool {
        !self.scripts
    }

    /// Whether a stream (`logs`, the watch log) writes one JSON object a line,
    /// rather than text for people.
    pub(crate) fn json_lines(&self) -> bool {
        match self.format {
            Format::Json => true,
            Format::Human | Format::Prometheus => false,
        }
    }

    /// The style text for people is rendered in (for the printers of `output/`).
    pub(crate) fn style(&self) -> Style {
        self.style
    }

    /// A command's answer: its JSON document for scripts, or its text for
    /// people (on stdout, as is).
    pub(crate) fn show(&self, view: &impl View) {
        match self.format {
            Format::Json => stdout(&format!("{}\n", json::document(view))),
            Format::Human => stdout(&view.human(&self.style)),
            // Only `status` offers it; an answer without the form reads as for people.
            Format::Prometheus => match view.prometheus() {
                Some(text) => stdout(&text),
                None => stdout(&view.human(&self.style)),
            },
        }
    }

    /// A command's answer, or when it has no rows, why (`none`): said as
    /// [`Ui::nothing`] says it. Prometheus text is written whole either way:
    /// its families stand with no samples.
    pub(crate) fn show_or_nothing(&self, view: &impl View, none: Option<&str>) {
        match (self.format, none) {
            (Format::Prometheus, _) | (Format::Human | Format::Json, None) => self.show(view),
            (Format::Human | Format::Json, Some(why)) => self.nothing(why),
        }
    }

    /// A plan for a person to read before a question, on stderr (not with
    /// `--json` or `-q`).
    pub(crate) fn preview(&self, view: &impl View) {
        if !self.scripts && !self.style.quiet {
            let text = view.human(&self.style.for_stderr());
            self.above(|| stderr(&format!("{}\n", text.trim_end_matches('\n'))));
        }
    }

    /// There is nothing to show: an empty document for scripts, `hal: {why}`
    /// on stderr for people (unless quiet).
    pub(crate) fn nothing(&self, why: &str) {
        match self.format {
            Format::Json => stdout(&format!("{}\n", json::document(&Modules::<()>::new(&[])))),
            Format::Human | Format::Prometheus => self.note(why),
        }
    }

    /// A line for people on stdout (not with `--json` or `-q`).
    pub(crate) fn say(&self, text: &str) {
        if !self.scripts && !self.style.quiet {
            self.above(|| stdout(&format!("{text}\n")));
        }
    }

    /// A message for people on stderr, `hal: {text}` (not with `--json` or `-q`).
    pub(crate) fn note(&self, text: &str) {
        if !self.scripts && !self.style.quiet {
            self.above(|| stderr(&said(text)));
        }
    }

    /// Something that went wrong, on stderr for everyone: `hal: {text}`.
    pub(crate) fn problem(&self, text: &str) {
        self.above(|| stderr(&said(text)));
    }

    /// A module's error for people (`hal: what: why`); under `--json` the
    /// document carries it instead.
    pub(crate) fn fail(&self, e: &anyhow::Error) {
        if !self.scripts {
            self.above(|| crate::error::report(e, crate::module::diagnosed::details_of(e)));
        }
    }

    /// The error that ended the command: `hal: what: why` on stderr for
    /// everyone and, under `--json`, the error document on stdout, so that a
    /// script's `jq` gets its input. Returns the exit code it maps to.
    pub(crate) fn error(&self, e: &anyhow::Error) -> Exit {
        crate::error::report(e, crate::module::diagnosed::details_of(e));
        let exit = crate::error::exit_of(e);
        if self.scripts {
            error_document(exit.code(), &crate::error::OneLine(e).to_string());
        }
        exit
    }

    /// Prints a warning on stderr without disturbing progress bars.
    pub(crate) fn warn(&self, text: &str) {
        let warning = paint(self.style.color_err, "33", &format!("{PREFIX}warning:"));
        self.above(|| stderr(&format!("{warning} {text}\n")));
    }

    /// Asks once; `--yes` answers for the person. With no terminal, the
    /// question cannot be asked, and that is a usage error (exit 2).
    pub(crate) fn confirm(&self, question: &str) -> Result<bool, HalError> {
        if self.yes {
            return Ok(true);
        }
        if !self.interactive {
            return Err(HalError::Usage(format!(
                "{question}: confirmation needed, but no terminal is attached: pass --yes (or set HAL_YES=1)"
            )));
        }
        dialoguer::Confirm::new()
            .with_prompt(question)
            .default(false)
            .interact()
            .map_err(|e| HalError::Usage(format!("{question}: {e}")))
    }
}

impl Progress for Ui {
    fn step(&self, module: &str, what: &str) {
        if self.progress {
            self.area.step(module, what);
        }
    }

    fn layer(&self, module: &str, layer: &str, status: &str, bytes: Option<(u64, u64)>) {
        if self.progress {
            self.area.layer(module, layer, status, bytes);
        }
    }

    fn done(&self, module: &str) {
        if self.progress {
            self.area.done(module);
        }
    }
}

/// Prints the error document on stdout: for [`Ui::error`], and for `main`'s
/// usage errors, which happen before there is a printer.
pub fn error_document(exit_code: u8, message: &str) {
    stdout(&format!(
        "{}\n",
        crate::output::render::error_json(exit_code, message)
    ));
}

/// The one rule for hal's messages on stderr: `hal: ` once, then the text
/// (which names what and why, never the prefix again).
fn said(text: &str) -> String {
    format!("{PREFIX}{text}\n")
}

pub(crate) use crate::error::PREFIX;

fn dumb_term() -> bool {
    std::env::var("TERM").is_ok_and(|t| t == "dumb")
}

/// ANSI colour for text, when `on`.
pub(crate) fn paint(on: bool, code: &str, text: &str) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// Writes to stdout. A reader that went away (`hal --json status | head -1`)
/// is no reason to panic: what it did not read is simply not written.
pub(crate) fn stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Writes to stderr, never panicking on a closed stream.
pub(crate) fn stderr(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_says_the_prefix_once() {
        assert_eq!(said("adopt web: refused"), "hal: adopt web: refused\n");
    }
    // That no caller writes the prefix again is a rule of the architecture
    // test (`tests/integration/architecture/tidy/prefix.rs`).
}
