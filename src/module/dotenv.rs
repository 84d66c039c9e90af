//! A project's `.env` read by compose's rules (compose-go's `dotenv`): quoting,
//! comments, `export `, and values interpolated against the environment and the
//! lines above, so `COMPOSE_FILE=${COMPOSE_FILE:-a.yaml:b.yaml}` reads as compose reads it.

use std::collections::BTreeMap;

use crate::module::interpolate::{Refused, interpolate};

/// Why compose would refuse the file: the line and the reason, in compose's words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub(crate) struct DotenvError {
    pub line: usize,
    pub why: Refusal,
}

/// What is wrong with one line, in compose's words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("no variable name")]
    NoName,
    #[error("key cannot contain a space: {0:?}")]
    Space(String),
    #[error("unexpected character {ch:?} in variable name {key:?}")]
    Character { ch: char, key: String },
    /// A quote opened and never closed, with the value as written.
    #[error("unterminated quoted value {0}")]
    Unterminated(String),
    #[error(transparent)]
    Interpolation(#[from] Refused),
}

/// The variables a `.env` text sets, as compose reads it. `env` is the
/// process's environment (each name interpolation looks up is asked of it
/// first, then of the lines above, as compose does). Compose's rules:
/// blank and `#` lines skipped; an optional `export `; `KEY=value` or
/// `KEY: value`; a bare `KEY` takes the environment's value, if any; an
/// unquoted value ends at the line's end or at ` #`, trimmed, and is
/// interpolated; `"…"` may span lines, knows `\n`, `\t`, `\"`, `\\`, `\$`
/// and is interpolated; `'…'` is taken as written. The values are the
/// file's: that the environment wins over them is the caller's rule.
pub(crate) fn parse(
    text: &str,
    env: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<BTreeMap<String, String>, DotenvError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = BTreeMap::new();
    let mut i = 0;
    while i < lines.len() {
        let line = i + 1;
        let stmt = lines[i].trim_start();
        i += 1;
        if stmt.is_empty() || stmt.starts_with('#') {
            continue;
        }
        let fail = |why: Refusal| DotenvError { line, why };
        let stmt = match stmt.strip_prefix("export") {
            Some(r) if r.starts_with([' ', '\t']) => r.trim_start(),
            _ => stmt,
        };
        let Some(at) = stmt.find(['=', ':']) else {
            // A bare name: the environment's value, when it has one.
            let key = key(stmt.trim_end()).map_err(fail)?;
            if let Some(v) = env(key) {
                out.insert(key.to_string(), v);
            }
            continue;
        };
        let key = key(stmt[..at].trim_end()).map_err(fail)?.to_string();
        let raw = stmt[at + 1..].trim_start_matches([' ', '\t']);
        let written = match raw.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let (body, used) = quoted(&raw[1..], q, &lines[i..])
                    .ok_or_else(|| fail(Refusal::Unterminated(raw.trim_end().to_string())))?;
                i += used;
                if q == '\'' {
                    out.insert(key, body);
                    continue;
                }
                body
            }
            _ => {
                let v = raw.split(" #").next().unwrap_or(raw);
                v.trim_end().to_string()
            }
        };
        let mut lookup = |n: &str| env(n).or_else(|| out.get(n).cloned());
        let value = interpolate(&written, &mut lookup).map_err(|e| fail(e.into()))?;
        out.insert(key, value);
    }
    Ok(out)
}

/// A key as compose accepts it: letters, digits and `_ . - [ ]`, no space.
fn key(k: &str) -> Result<&str, Refusal> {
    if k.is_empty() {
        return Err(Refusal::NoName);
    }
    if k.contains(char::is_whitespace) {
        return Err(Refusal::Space(k.to_string()));
    }
    match k
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '[' | ']')))
    {
        Some(ch) => Err(Refusal::Character {
            ch,
            key: k.to_string(),
        }),
        None => Ok(k),
    }
}

/// A quoted value from just after its opening quote `q` to the closing one,
/// continuing on the `more` lines when it spans lines: the value (escapes read
/// for `"`) and how many more lines it took. `None`: never closed.
fn quoted(first: &str, q: char, more: &[&str]) -> Option<(String, usize)> {
    let mut body = String::new();
    let mut escaped = false;
    let mut text = first;
    let mut used = 0;
    loop {
        for c in text.chars() {
            if escaped {
                escaped = false;
                if c != q {
                    body.push('\\');
                }
                body.push(c);
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                return Some((if q == '"' { unescape(&body) } else { body }, used));
            } else {
                body.push(c);
            }
        }
        text = more.get(used)?;
        used += 1;
        body.push('\n');
    }
}

/// The shell escapes compose reads in a double-quoted value; `\$` is a `$`
/// interpolation leaves alone (`$$`); any other `\x` stays as written.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some('$') => out.push_str("$$"),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests;
