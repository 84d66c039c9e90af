//! Module names: the compose project-name rule, checked before anything is touched.

/// Why `name` is not a valid module name, or `None` when it is.
///
/// The rule is compose v2's project-name rule: lowercase letters, digits, `-`
/// and `_`, starting with a letter or digit. It also keeps every name safe as a
/// path component and as a single argument.
pub(crate) fn problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("the name is empty".into());
    }
    if name.len() > 128 {
        return Some("the name is longer than 128 characters".into());
    }
    let first = name.as_bytes()[0];
    if !(first.is_ascii_lowercase() || first.is_ascii_digit()) {
        return Some("a name starts with a lowercase letter or a digit".into());
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '_'))
    {
        let shown = if bad.is_control() || bad.is_whitespace() {
            format!("{:?}", bad)
        } else {
            format!("'{bad}'")
        };
        return Some(format!(
            "{shown} is not allowed (use lowercase letters, digits, '-' and '_')"
        ));
    }
    None
}

pub fn is_valid(name: &str) -> bool {
    problem(name).is_none()
}

/// Why `service` is not a valid compose service name, or `None` when it is:
/// letters, digits, `.`, `-` and `_`, starting with a letter or digit.
pub(crate) fn service_problem(service: &str) -> Option<String> {
    let Some(first) = service.chars().next() else {
        return Some("the service name is empty".into());
    };
    if service.len() > 128 {
        return Some("the service name is longer than 128 characters".into());
    }
    if !first.is_ascii_alphanumeric() {
        return Some("a service name starts with a letter or a digit".into());
    }
    service
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
        .map(|bad| {
            let shown = if bad.is_control() || bad.is_whitespace() {
                format!("{bad:?}")
            } else {
                format!("'{bad}'")
            };
            format!(
                "{shown} is not allowed in a service name (use letters, digits, '.', '-' and '_')"
            )
        })
}

/// The edit distance between `a` and `b`: insertions, deletions,
/// substitutions and swaps of two neighbours (`ux-wbe` is one from `ux-web`),
/// by character: strsim's optimal string alignment (already built for clap).
pub(crate) fn distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

/// Whether `candidate` is close enough to `typed` to be what was meant: at
/// most one edit for a short word, one per three characters for a longer one.
pub(crate) fn is_close(typed: &str, candidate: &str) -> bool {
    distance(typed, candidate) <= (typed.chars().count() / 3).max(1)
}

/// The candidate nearest to `typed`, if one is close (the first of equals).
pub(crate) fn nearest<'a>(
    typed: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .filter(|c| is_close(typed, c))
        .min_by_key(|c| distance(typed, c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_edits_and_swaps() {
        assert_eq!(distance("ux-wbe", "ux-web"), 1);
        assert_eq!(distance("web", "web"), 0);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("reset-faild", "reset-failed"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
    }

    #[test]
    fn nearest_takes_a_close_name_or_none() {
        let names = ["ux-web", "ux-db", "mailu"];
        assert_eq!(nearest("ux-wbe", names), Some("ux-web"));
        assert_eq!(nearest("mail", names), Some("mailu"));
        assert_eq!(nearest("ghost", names), None);
        assert_eq!(nearest("x", names), None);
    }

    #[test]
    fn accepts_compose_names() {
        for ok in ["web", "mailu", "a", "0day", "my-app_2", "x-"] {
            assert!(is_valid(ok), "{ok}");
        }
    }

    #[test]
    fn refuses_unsafe_and_uncompose_names() {
        for bad in [
            "", "-x", "_x", "My", "a/b", "..", ".", "a b", "a;b", "$(x)", "a\nb", "é", "a.b",
        ] {
            assert!(!is_valid(bad), "{bad:?}");
        }
        assert!(!is_valid(&"a".repeat(129)));
    }

    #[test]
    fn service_names_follow_compose() {
        for ok in ["worker", "Web", "db.primary", "a-b_c", "0"] {
            assert_eq!(service_problem(ok), None, "{ok}");
        }
        for bad in ["", "-x", ".x", "a/b", "a b", "$(x)", "a\nb"] {
            assert!(service_problem(bad).is_some(), "{bad:?}");
        }
    }
}
