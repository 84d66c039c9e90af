//! Compose's variable interpolation (`$VAR`, `${VAR:-default}`, …), one reading for the
//! directory's `.env` and for compose files, so hal resolves a value as compose does.

/// Why compose refuses a string it interpolates.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    /// `${VAR:?why}` with `VAR` unset or empty, or `${VAR?why}` with `VAR` unset.
    #[error("required variable {var} is missing a value{}", reason_suffix(.reason))]
    Required { var: String, reason: String },
    /// A `${…}` compose cannot read (no closing brace, no variable name, an unknown operator).
    #[error("invalid interpolation format in {0:?}")]
    Invalid(String),
}

fn reason_suffix(reason: &str) -> String {
    if reason.is_empty() {
        String::new()
    } else {
        format!(": {reason}")
    }
}

/// `s` as compose interpolates it, each variable's value from `var` (`None`:
/// unset): `$$` is a `$`; `$VAR` and `${VAR}`; `${VAR:-word}` and `${VAR-word}`
/// (word when unset or empty / unset); `${VAR:?why}` and `${VAR?why}` (refused
/// when unset or empty / unset); `${VAR:+word}` and `${VAR+word}` (word when set
/// and not empty / set). A word is itself interpolated (`${A:-${B}}`), and only
/// when it is used. A `$` that starts no name stays a `$`.
pub(crate) fn interpolate(
    s: &str,
    var: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<String, Refused> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(r) = after.strip_prefix('$') {
            out.push('$');
            rest = r;
        } else if let Some(r) = after.strip_prefix('{') {
            let end = closing_brace(r).ok_or_else(|| Refused::Invalid(s.to_string()))?;
            out.push_str(&braced(&r[..end], s, var)?);
            rest = &r[end + 1..];
        } else {
            let len = name_len(after);
            if len == 0 {
                out.push('$');
            } else if let Some(v) = var(&after[..len]) {
                out.push_str(&v);
            }
            rest = &after[len..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// One `${…}` (without its braces); `whole` is the string it is in, for an error.
fn braced(
    expr: &str,
    whole: &str,
    var: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<String, Refused> {
    let n = name_len(expr);
    if n == 0 {
        return Err(Refused::Invalid(whole.to_string()));
    }
    let (name, op) = expr.split_at(n);
    if op.is_empty() {
        return Ok(var(name).unwrap_or_default());
    }
    let (colon, op) = match op.strip_prefix(':') {
        Some(o) => (true, o),
        None => (false, op),
    };
    let mut chars = op.chars();
    let (Some(kind), word) = (chars.next(), chars.as_str()) else {
        return Err(Refused::Invalid(whole.to_string()));
    };
    let value = var(name);
    // Set, as the operator counts it: with `:`, set and not empty.
    let set = value.as_deref().is_some_and(|v| !colon || !v.is_empty());
    match kind {
        '-' if set => Ok(value.unwrap_or_default()),
        '-' => interpolate(word, var),
        '?' if set => Ok(value.unwrap_or_default()),
        '?' => Err(Refused::Required {
            var: name.to_string(),
            reason: interpolate(word, var)?,
        }),
        '+' if set => interpolate(word, var),
        '+' => Ok(value.unwrap_or_default()),
        _ => Err(Refused::Invalid(whole.to_string())),
    }
}

/// The index in `s` (just after a `${`) of the brace that closes it, nested braces counted.
fn closing_brace(s: &str) -> Option<usize> {
    let mut depth = 1usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The length of the variable name `s` starts with (`[A-Za-z_][A-Za-z0-9_]*`), 0 for none.
fn name_len(s: &str) -> usize {
    let b = s.as_bytes();
    if !b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return 0;
    }
    b.iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .unwrap_or(b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(s: &str, vars: &[(&str, &str)]) -> Result<String, Refused> {
        let mut var = |n: &str| {
            vars.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        };
        interpolate(s, &mut var)
    }

    fn ok(s: &str, vars: &[(&str, &str)]) -> String {
        with(s, vars).unwrap()
    }

    #[test]
    fn plain_and_braced_names() {
        let v = [("A", "1"), ("B_2", "two")];
        assert_eq!(ok("$A-${B_2}/$C.", &v), "1-two/.");
        assert_eq!(ok("$$A costs $5 and $", &v), "$A costs $5 and $");
        assert_eq!(ok("no vars", &v), "no vars");
    }

    #[test]
    fn defaults_as_compose_reads_them() {
        let v = [("EMPTY", ""), ("SET", "x")];
        assert_eq!(ok("${UNSET:-d}|${EMPTY:-d}|${SET:-d}", &v), "d|d|x");
        assert_eq!(ok("${UNSET-d}|${EMPTY-d}|${SET-d}", &v), "d||x");
        assert_eq!(ok("${UNSET:+a}|${EMPTY:+a}|${SET:+a}", &v), "||a");
        assert_eq!(ok("${UNSET+a}|${EMPTY+a}|${SET+a}", &v), "|a|a");
        assert_eq!(ok("${COMPOSE_FILE:-a.yaml:b.yaml}", &v), "a.yaml:b.yaml");
        assert_eq!(ok("${UNSET:-${SET}-${UNSET:-z}}", &v), "x-z");
    }

    #[test]
    fn required_variables_refuse_with_compose_words() {
        let v = [("EMPTY", ""), ("SET", "x")];
        assert_eq!(ok("${SET:?no}${EMPTY?no}", &v), "x");
        let e = with("${EMPTY:?set it}", &v).unwrap_err();
        assert_eq!(
            e.to_string(),
            "required variable EMPTY is missing a value: set it"
        );
        assert!(matches!(
            with("${UNSET?}", &v),
            Err(Refused::Required { var, .. }) if var == "UNSET"
        ));
    }

    #[test]
    fn malformed_braces_are_refused() {
        for s in ["${A", "${}", "${-x}", "${A!x}"] {
            assert!(
                matches!(with(s, &[]), Err(Refused::Invalid(_))),
                "{s} was read"
            );
        }
    }

    #[test]
    fn only_the_words_used_are_read() {
        let mut read = Vec::new();
        let mut var = |n: &str| {
            read.push(n.to_string());
            (n == "SET").then(|| "x".to_string())
        };
        interpolate("${SET:-$OTHER}${UNSET:-$THIRD}", &mut var).unwrap();
        assert_eq!(read, ["SET", "UNSET", "THIRD"]);
    }
}
