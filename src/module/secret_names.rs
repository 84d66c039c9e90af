//! Which configuration keys look like they hold a secret, so that their values are never shown (`hal plan`) nor kept in clear (the applied record).

/// The words that make a key look secret, matched in its upper case.
const WORDS: [&str; 9] = [
    "PASSWORD",
    "PASSWD",
    "PASS",
    "TOKEN",
    "SECRET",
    "KEY",
    "CREDENTIAL",
    "PRIVATE",
    "AUTH",
];

/// Whether a key (`DB_PASSWORD`, `api_key`, `environment.JWT_SECRET`) looks like it holds a secret.
pub(crate) fn looks_secret(key: &str) -> bool {
    let upper = key.to_ascii_uppercase();
    WORDS.iter().any(|w| upper.contains(w))
}

/// What is shown or kept in place of a secret's value: its length and a
/// short digest, enough to tell that it changed and nothing more.
pub(crate) fn masked(value: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(value.as_bytes());
    format!("masked:{:02x}{:02x}{:02x}{:02x}", d[0], d[1], d[2], d[3])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_keys_are_told_apart() {
        for k in [
            "DB_PASSWORD",
            "api_key",
            "GITHUB_TOKEN",
            "environment.JWT_SECRET",
            "PGPASS",
        ] {
            assert!(looks_secret(k), "{k}");
        }
        for k in ["FOO", "command", "environment.TZ", "image"] {
            assert!(!looks_secret(k), "{k}");
        }
        assert_eq!(masked("a"), masked("a"));
        assert_ne!(masked("a"), masked("b"));
        assert!(!masked("hunter2").contains("hunter2"));
    }
}
