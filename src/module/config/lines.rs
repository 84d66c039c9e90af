//! Where in the config file a key is: the line a TOML error or a bad value
//! points at, and the error that names file, line and key.

use std::path::Path;

use crate::error::HalError;

/// `config PATH: line N, key KEY: MESSAGE`.
pub(super) fn key_error(text: &str, path: &Path, key: &str, message: String) -> HalError {
    let line = line_of_key(text, key).map_or(String::new(), |n| format!("line {n}, "));
    HalError::Config {
        path: path.display().to_string(),
        message: format!("{line}key {key}: {message}"),
    }
}

/// One line from a toml error: `line N, key a.b: message`.
pub(super) fn describe(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim().to_string();
    let Some(span) = e.span() else {
        return message;
    };
    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
    match key_at(text, span.start) {
        Some(key) => format!("line {line}, key {key}: {message}"),
        None => format!("line {line}: {message}"),
    }
}

/// The dotted key at byte `offset`: the nearest table header above it plus
/// the key on that line.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = text[line_start..line_end].trim();
    let header = |l: &str| -> Option<String> {
        let l = l.trim();
        let inner = l.strip_prefix("[[").or_else(|| l.strip_prefix('['))?;
        let inner = inner.split(']').next()?;
        Some(inner.trim().replace(['"', ' '], ""))
    };
    if line.starts_with('[') {
        return header(line);
    }
    let table = text[..line_start].lines().rev().find_map(|l| {
        let t = l.trim();
        if t.starts_with('[') { header(t) } else { None }
    });
    let key = line
        .split('=')
        .next()
        .map(|k| k.trim().replace(['"', ' '], ""))
        .filter(|k| !k.is_empty() && !k.starts_with('#'));
    match (table, key) {
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (None, Some(k)) => Some(k),
        (Some(t), None) => Some(t),
        (None, None) => None,
    }
}

/// The line number where `dotted` (e.g. `module.web.restart`) is set, if found.
pub(super) fn line_of_key(text: &str, dotted: &str) -> Option<usize> {
    let mut table = String::new();
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.starts_with('[') {
            table = l
                .trim_matches(|c| c == '[' || c == ']')
                .replace(['"', ' '], "");
            if table == dotted {
                return Some(i + 1);
            }
            continue;
        }
        if let Some(k) = l.split('=').next() {
            let k = k.trim().replace(['"', ' '], "");
            let full = if table.is_empty() {
                k
            } else {
                format!("{table}.{k}")
            };
            if full == dotted {
                return Some(i + 1);
            }
        }
    }
    None
}
