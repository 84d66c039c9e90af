//! Why a start failed and why the watch holds a module, as hal's state keeps them: typed (their words in `output/record_causes.rs`), and a record an older hal wrote as a plain string still reads.

use serde::{Deserialize, Serialize};

/// Why a start failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartCause {
    /// What its containers did, in hal's summary (`did not start: service db exited with code 1`).
    Summary(String),
    /// The error of the engine, compose or systemd, on one line, in its own words.
    Error(String),
    /// Written by an older hal: the cause, already in words.
    #[serde(untagged)]
    Words(String),
}

/// Why the watch holds a module, as its log said it: the causes themselves
/// live in `output/watch_log/`, and are kept here in their words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldCause {
    /// Its trouble, and the other cause that refused the repair (the start limit).
    Refused { trouble: String, refusal: String },
    /// One cause (and what an older hal wrote, a plain string).
    #[serde(untagged)]
    Said(String),
}

impl Default for HoldCause {
    fn default() -> HoldCause {
        HoldCause::Said(String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_hals_plain_string_reads_as_the_cause_in_words() {
        let old: StartCause = serde_json::from_str(r#""did not start: port taken""#).unwrap();
        assert_eq!(old, StartCause::Words("did not start: port taken".into()));
        let old: HoldCause = serde_json::from_str(r#""service web exited""#).unwrap();
        assert_eq!(old, HoldCause::Said("service web exited".into()));
    }

    #[test]
    fn a_typed_cause_is_written_and_read_back_as_itself() {
        for c in [
            StartCause::Summary("did not start".into()),
            StartCause::Error("no such image".into()),
        ] {
            let text = serde_json::to_string(&c).unwrap();
            assert!(text.starts_with('{'), "{text}");
            assert_eq!(serde_json::from_str::<StartCause>(&text).unwrap(), c);
        }
        let h = HoldCause::Refused {
            trouble: "service web exited".into(),
            refusal: "start limit hit".into(),
        };
        let text = serde_json::to_string(&h).unwrap();
        assert_eq!(serde_json::from_str::<HoldCause>(&text).unwrap(), h);
        assert!(text.starts_with(r#"{"refused":"#), "{text}");
    }
}
