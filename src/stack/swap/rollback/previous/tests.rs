use proptest::prelude::*;

use super::*;

/// Docker's grammar for one repository path component.
fn valid_component(c: &str) -> bool {
    let b = c.as_bytes();
    let alnum = |x: u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if alnum(b[i]) {
            i += 1;
            continue;
        }
        // A separator: `.`, `_`, `__`, or a run of `-`, between alphanumerics.
        let start = i;
        match b[i] {
            b'.' => i += 1,
            b'_' => {
                i += 1;
                if i < b.len() && b[i] == b'_' {
                    i += 1;
                }
            }
            b'-' => {
                while i < b.len() && b[i] == b'-' {
                    i += 1;
                }
            }
            _ => return false,
        }
        if i == start || i >= b.len() || !alnum(b[i]) {
            return false;
        }
    }
    true
}

/// Docker's grammar for a tag.
fn valid_tag(t: &str) -> bool {
    let b = t.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b[1..]
            .iter()
            .all(|x| x.is_ascii_alphanumeric() || matches!(x, b'_' | b'.' | b'-'))
}

#[test]
fn plain_names_are_kept_as_they_are() {
    assert_eq!(
        reference("web", "api"),
        ("hal-previous/web".into(), "api".into())
    );
    assert_eq!(
        reference("mail-2", "db_1"),
        ("hal-previous/mail-2".into(), "db_1".into())
    );
}

#[test]
fn names_docker_refuses_are_made_valid_and_told_apart() {
    let (repo, tag) = reference("Web", ".API");
    assert!(repo.starts_with("hal-previous/web-"), "{repo}");
    assert!(tag.starts_with("_API-"), "{tag}");
    // Two names that sanitize alike stay apart.
    assert_ne!(reference("a_b", "x"), reference("a-b", "x"));
    assert_ne!(reference("web", "-x"), reference("web", ".x"));
    // Nothing usable left: the hash alone.
    let (repo, _) = reference("___", "x");
    assert!(valid_component(&repo["hal-previous/".len()..]), "{repo}");
}

proptest! {
    #[test]
    fn every_name_makes_a_valid_reference(module in "\\PC{0,80}", service in "\\PC{0,200}") {
        let (repo, tag) = reference(&module, &service);
        let component = repo.strip_prefix("hal-previous/").unwrap_or_default();
        prop_assert!(valid_component(component), "{repo}");
        prop_assert!(component.len() <= 64, "{repo}");
        prop_assert!(valid_tag(&tag), "{tag}");
    }

    #[test]
    fn compose_like_names_make_distinct_references(
        a in "[a-zA-Z0-9._-]{1,40}",
        b in "[a-zA-Z0-9._-]{1,40}",
    ) {
        prop_assume!(a != b);
        prop_assert_ne!(reference(&a, "s"), reference(&b, "s"));
        prop_assert_ne!(reference("m", &a), reference("m", &b));
    }
}
