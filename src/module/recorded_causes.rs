//! Why a start failed, why an update was rolled back and why the watch holds a module, as hal's state keeps them: typed (their words in `output/record_causes.rs`), and a record an older hal wrote as a plain string still reads.

use serde::{Deserialize, Serialize};

use crate::module::container_trouble::ContainerTrouble;

/// Why a start failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartCause {
    /// What its containers did, in hal's summary (`did not start: service db exited with code 1`),
    /// and the causes it saw, typed.
    Diagnosed {
        summary: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        seen: Vec<SeenCause>,
    },
    /// Written by an older hal: a diagnosis's summary alone.
    Summary(String),
    /// The error of the engine, compose or systemd, on one line, in its own words.
    Error(String),
    /// Written by an older hal: the cause, already in words.
    #[serde(untagged)]
    Words(String),
}

impl StartCause {
    /// The causes the failure saw of its module (none for an error, or a record of an older hal).
    pub fn seen(&self) -> &[SeenCause] {
        match self {
            StartCause::Diagnosed { seen, .. } => seen,
            StartCause::Summary(_) | StartCause::Error(_) | StartCause::Words(_) => &[],
        }
    }
}

/// Why an update was rolled back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RollbackCause {
    /// What the new image did, as a failed start's cause (`new image did not start: …`).
    NewImage(StartCause),
    /// Written by an older hal: the cause, already in words.
    #[serde(untagged)]
    Words(String),
}

/// A cause a failure saw of its module, as its status says it: a container's
/// trouble, or a cause said in words elsewhere (a unit's state).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeenCause {
    Container(ContainerTrouble),
    Said(String),
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
        let old: RollbackCause =
            serde_json::from_str(r#""new image did not start: port taken""#).unwrap();
        assert_eq!(
            old,
            RollbackCause::Words("new image did not start: port taken".into())
        );
        let old: HoldCause = serde_json::from_str(r#""service web exited""#).unwrap();
        assert_eq!(old, HoldCause::Said("service web exited".into()));
    }

    #[test]
    fn a_summary_an_older_hal_wrote_reads_and_saw_nothing() {
        let old: StartCause =
            serde_json::from_str(r#"{"summary":"did not start: service db exited with code 1"}"#)
                .unwrap();
        assert_eq!(
            old,
            StartCause::Summary("did not start: service db exited with code 1".into())
        );
        assert!(old.seen().is_empty());
    }

    #[test]
    fn a_diagnosis_keeps_what_it_saw_typed() {
        use crate::module::container_trouble::Doing;
        let db = ContainerTrouble {
            container: "db".into(),
            doing: Doing::Exited { code: 1 },
        };
        let c = StartCause::Diagnosed {
            summary: "did not start: service db exited with code 1".into(),
            seen: vec![
                SeenCause::Container(db.clone()),
                SeenCause::Said("unit failed".into()),
            ],
        };
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(
            text,
            r#"{"diagnosed":{"summary":"did not start: service db exited with code 1","seen":[{"container":{"container":"db","doing":{"exited":{"code":1}}}},{"said":"unit failed"}]}}"#
        );
        let back: StartCause = serde_json::from_str(&text).unwrap();
        assert_eq!(
            back.seen(),
            [
                SeenCause::Container(db),
                SeenCause::Said("unit failed".into())
            ]
        );
        // Nothing seen: not written, and read back as nothing.
        let bare = r#"{"diagnosed":{"summary":"not active after 5s"}}"#;
        let read: StartCause = serde_json::from_str(bare).unwrap();
        assert!(read.seen().is_empty());
        assert_eq!(serde_json::to_string(&read).unwrap(), bare);
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
