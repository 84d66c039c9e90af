//! The one place JSON text is made: pretty documents for commands, one compact object per line for streams.

use std::io::{self, Write};

use serde::Serialize;

/// A whole document, pretty-printed (no trailing newline).
pub(crate) fn document<T: Serialize + ?Sized>(doc: &T) -> String {
    serde_json::to_string_pretty(doc)
        .unwrap_or_else(|e| format!("{{\"schema\":1,\"error\":{:?}}}", e.to_string()))
}

/// One object on one line, with its newline, written to `out`.
pub(crate) fn write_line<T: Serialize + ?Sized>(out: &mut impl Write, v: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *out, v).map_err(io::Error::from)?;
    out.write_all(b"\n")
}
