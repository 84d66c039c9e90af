//! The rule that a container's words (its run state, health and restart
//! policy as the engine words them) are read and written in one place: the
//! engine adapter reads its answers, `module/run_state.rs` defines the words
//! hal publishes, and everything else matches the types.

use super::{Rule, View};

/// A container word as a whole string literal (`"running"`, not `"is
/// running"`): a match, a comparison or a conversion of the engine's word
/// outside the two places that own them.
pub(in crate::architecture) const CONTAINER_WORDS: Rule = Rule {
    name: "container state words (\"running\", \"exited\", \"unhealthy\", \"unless-stopped\"…) \
           only in module/run_state.rs and docker/engine*",
    words: &[
        "\"running\"",
        "\"exited\"",
        "\"restarting\"",
        "\"paused\"",
        "\"created\"",
        "\"dead\"",
        "\"removing\"",
        "\"healthy\"",
        "\"unhealthy\"",
        "\"unless-stopped\"",
        "\"on-failure\"",
    ],
    view: View::Text,
    whole: false,
    tail: false,
    allowed: &[
        (
            "module/run_state.rs",
            "",
            "the words of a container's run state, health and restart policy, defined once",
        ),
        (
            "docker/engine.rs",
            "",
            "the engine adapter: its answers read",
        ),
        ("docker/engine/", "", "the engine adapter: its answers read"),
        (
            "host/init/",
            "\"running\"",
            "systemd's own SubState word (active/running), the init's",
        ),
        (
            "module/node_state.rs",
            "\"running\"",
            "the node's state in `systemctl is-system-running`'s words, not a container's",
        ),
        (
            "output/watch_log/view.rs",
            "\"restarting\"",
            "the supervisor's word for its own restart of a module, in its log",
        ),
        (
            "state/last_run.rs",
            "\"unhealthy\"",
            "a kept run's one-word note for people (exit 1, unhealthy)",
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
    fn a_container_word_outside_its_places_is_reported() {
        for planted in [
            "let up = c.status == \"running\";",
            "matches!(s.as_str(), \"exited\" | \"dead\")",
            "if h.as_deref() == Some(\"unhealthy\") {}",
            "match p { \"unless-stopped\" => 1, _ => 0 }",
        ] {
            let v = words(&CONTAINER_WORDS, &one("stack/assess.rs", planted));
            assert_eq!(v.len(), 1, "{planted}: {v:?}");
            assert!(v[0].starts_with("src/stack/assess.rs:1: "), "{v:?}");
        }
        for ok in [
            "module/run_state.rs",
            "docker/engine.rs",
            "docker/engine/answers.rs",
        ] {
            assert!(words(&CONTAINER_WORDS, &one(ok, "\"running\" | \"exited\"")).is_empty());
        }
        // Words inside a longer text, comments and test code are not the engine's words.
        for fine in [
            "format!(\"{who} is running\")",
            "// \"running\"",
            "fn f() {}\n#[cfg(test)]\nmod tests { const S: &str = \"exited\"; }",
        ] {
            assert!(
                words(&CONTAINER_WORDS, &one("stack/assess.rs", fine)).is_empty(),
                "{fine}"
            );
        }
        // The named exceptions hold for their word only.
        assert!(
            words(
                &CONTAINER_WORDS,
                &one("host/init/systemd/bus.rs", "\"running\"")
            )
            .is_empty()
        );
        assert_eq!(
            words(
                &CONTAINER_WORDS,
                &one("host/init/systemd/bus.rs", "\"exited\"")
            )
            .len(),
            1
        );
    }
}
