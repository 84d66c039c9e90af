//! The rule that an invalid module's refusal is made in one place,
//! `Module::usable` (`module/mod.rs`): no verb builds `InvalidModule` itself
//! or words its own "invalid module".

use super::{Rule, View};

/// The error's name, or a refusal worded again as a whole string literal.
pub(in crate::architecture) const INVALID_MODULE: Rule = Rule {
    name: "an invalid module is refused only by Module::usable (module/mod.rs): \
           no other `InvalidModule` or \"invalid module\"",
    words: &["InvalidModule", "\"invalid module\""],
    view: View::Text,
    whole: true,
    tail: false,
    allowed: &[
        (
            "module/mod.rs",
            "InvalidModule",
            "Module::usable: the one place an invalid module is refused",
        ),
        (
            "error.rs",
            "InvalidModule",
            "the error itself: its variant and its exit code",
        ),
    ],
};

#[cfg(test)]
mod self_tests {
    use super::super::words;
    use super::*;

    fn one(path: &str, text: &str) -> Vec<(String, String)> {
        vec![(path.to_string(), text.to_string())]
    }

    #[test]
    fn an_invalid_module_refused_outside_usable_is_reported() {
        for planted in [
            "return Err(HalError::InvalidModule { name, reason }.into());",
            "anyhow::anyhow!(\"invalid module\")",
        ] {
            let v = words(&INVALID_MODULE, &one("run/steps.rs", planted));
            assert_eq!(v.len(), 1, "{planted}: {v:?}");
            assert!(v[0].starts_with("src/run/steps.rs:1: "), "{v:?}");
        }
        let usable = "Err(HalError::InvalidModule { name, reason })";
        assert!(words(&INVALID_MODULE, &one("module/mod.rs", usable)).is_empty());
        // The config's own words for a bad name are not the refusal.
        let name = "format!(\"invalid module name: {why}\")";
        assert!(words(&INVALID_MODULE, &one("module/config.rs", name)).is_empty());
    }
}
