//! Shell patterns that select modules by name, as systemctl takes them: `*`, `?` and `[...]`.
//!
//! Pure and small on purpose: no `/` rule (module names have none), no
//! brace expansion. `\` makes the next character literal, as in fnmatch(3).

/// Whether a word given on the command line is a pattern rather than a name.
pub(crate) fn is_pattern(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// Whether `name` matches the shell pattern `pattern` as a whole.
///
/// `*` matches any run of characters (also none), `?` any one character,
/// `[abc]`, `[a-z]` one of a set, `[!abc]` or `[^abc]` one not in it. A `[`
/// without its `]` matches itself.
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative wildcard matching with one backtrack point (the last `*`):
    // linear in practice, never exponential.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ni));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                '[' => {
                    if let Some((hit, next)) = class(&p, pi, n[ni]) {
                        if hit {
                            pi = next;
                            ni += 1;
                            continue;
                        }
                    } else if n[ni] == '[' {
                        // No closing `]`: a literal `[`.
                        pi += 1;
                        ni += 1;
                        continue;
                    }
                }
                '\\' if pi + 1 < p.len() => {
                    if p[pi + 1] == n[ni] {
                        pi += 2;
                        ni += 1;
                        continue;
                    }
                }
                c => {
                    if c == n[ni] {
                        pi += 1;
                        ni += 1;
                        continue;
                    }
                }
            }
        }
        // Mismatch: let the last `*` take one more character, or fail.
        match star {
            Some((sp, sn)) => {
                star = Some((sp, sn + 1));
                pi = sp + 1;
                ni = sn + 1;
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Reads the bracket expression at `p[start]` (a `[`) against `c`: whether
/// `c` is in the set and the index after the closing `]`, or `None` when
/// the expression has no `]`.
fn class(p: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    loop {
        let ch = *p.get(i)?;
        // A `]` right after the opening (or after `!`) is a member, not the end.
        if ch == ']' && !first {
            return Some((hit != negate, i + 1));
        }
        first = false;
        let lo = if ch == '\\' {
            i += 1;
            *p.get(i)?
        } else {
            ch
        };
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&h| h != ']') {
            let hi = p[i + 2];
            hit |= lo <= c && c <= hi;
            i += 3;
        } else {
            hit |= lo == c;
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_with_wildcards_are_patterns() {
        assert!(is_pattern("mail*"));
        assert!(is_pattern("w?b"));
        assert!(is_pattern("[ab]x"));
        assert!(!is_pattern("mailu"));
        assert!(!is_pattern("web/worker"));
    }

    #[test]
    fn star_and_question_mark() {
        assert!(matches("mail*", "mail"));
        assert!(matches("mail*", "mailu"));
        assert!(matches("mail*", "mail-relay"));
        assert!(!matches("mail*", "gmail"));
        assert!(matches("*mail*", "gmail-2"));
        assert!(matches("*", ""));
        assert!(matches("*", "anything"));
        assert!(matches("w?b", "web"));
        assert!(!matches("w?b", "wb"));
        assert!(!matches("w?b", "webb"));
        assert!(matches("*-db", "a-db-db"));
        assert!(!matches("*-db", "a-db-x"));
        assert!(matches("a*b*c", "aXbYbZc"));
        assert!(!matches("a*b*c", "aXbYbZ"));
        assert!(matches("**x", "x"));
        assert!(!matches("", "x"));
        assert!(matches("", ""));
    }

    #[test]
    fn bracket_sets_ranges_and_negation() {
        assert!(matches("[abc]", "b"));
        assert!(!matches("[abc]", "d"));
        assert!(matches("web[0-9]", "web7"));
        assert!(!matches("web[0-9]", "webx"));
        assert!(matches("web[!0-9]", "webx"));
        assert!(!matches("web[!0-9]", "web1"));
        assert!(matches("web[^0-9]", "webx"));
        assert!(matches("[]x]", "]"));
        assert!(matches("[a-]", "-"));
        assert!(matches("[a-c-]x", "-x"));
        assert!(matches("node[13]-*", "node3-db"));
        assert!(!matches("node[13]-*", "node2-db"));
    }

    #[test]
    fn unclosed_bracket_and_escapes_are_literal() {
        assert!(matches("a[b", "a[b"));
        assert!(!matches("a[b", "ab"));
        assert!(matches("a\\*", "a*"));
        assert!(!matches("a\\*", "ab"));
        assert!(matches("[\\]]", "]"));
    }

    #[test]
    fn long_names_do_not_blow_up() {
        let name = "a".repeat(2000);
        let pattern = "*a".repeat(50) + "b";
        assert!(!matches(&pattern, &name));
    }
}
