//! What hal remembers per module (start times, desired state, what compose resolved) and the rules on those records: pure data, no files.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::HalError;
use crate::module::ServiceImage;
use crate::module::config::RestartLimit;
use crate::module::recorded_causes::{HoldCause, RollbackCause, StartCause};
use crate::module::status::Desired;
use crate::util::stored;
use crate::util::timefmt::Stamp;

/// The version of the state file this hal writes.
pub(crate) const SCHEMA: u32 = 1;

/// What hal remembers about one module.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModuleRecord {
    /// The starts counted against the limit (written in Unix milliseconds).
    #[serde(default, with = "stored::unix_ms::list")]
    pub starts: Vec<Stamp>,
    #[serde(default)]
    pub desired: Option<Desired>,
    /// Set when the last start ran a cached image because a pull failed.
    #[serde(default)]
    pub pull_warning: Option<String>,
    /// Digest of the compose files and `.env` when hal last brought the module up.
    #[serde(default)]
    pub digest: Option<String>,
    /// The services and images compose resolved for that digest.
    #[serde(default)]
    pub services: Option<Vec<ServiceImage>>,
    /// The version of the compose that resolved `services`. A start that
    /// needs compose reuses the list (and skips `compose config`) only when
    /// the digest and this version are both the same.
    #[serde(default)]
    pub compose_version: Option<String>,
    /// Set while `hal watch` holds the module (its start limit is hit): kept
    /// here so that a restarted watch holds it still and does not page again.
    #[serde(default)]
    pub hold: Option<HoldRecord>,
    /// Services a person stopped alone (`hal stop web/worker`): expected down
    /// until a start of that service or of the whole module.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stopped: Vec<String>,
    /// The last start that failed, until a start succeeds, a stop or `reset-failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureRecord>,
    /// The last update hal rolled back (an update's, or a start's that pulled
    /// a new image), until an update succeeds or `reset-failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback: Option<RollbackRecord>,
    /// How many updates hal has rolled back, ever (a counter, for metrics).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rollbacks: u64,
    /// Each service's image id before the last update that changed it (what
    /// the `hal-previous` tag keeps), by service.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub previous: BTreeMap<String, String>,
    /// The last `update --check`'s answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_check: Option<CheckRecord>,
    /// An update in progress: its step, written before the step is taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub txn: Option<crate::state::txn::TxnRecord>,
    /// The module's checkpoint, taken by its last update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<crate::state::txn::CheckpointRecord>,
    /// The digests hal rolled back, one per service: never applied again
    /// by an update, a start under pull `always` or the watch's rounds,
    /// until another digest is applied or `update --force` tries it once more.
    #[serde(default, skip_serializing_if = "Quarantine::is_empty")]
    pub quarantine: Quarantine,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// An update that did not become active in time and was rolled back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RollbackRecord {
    /// When it was rolled back (written in Unix milliseconds).
    #[serde(with = "stored::unix_ms")]
    pub at: Stamp,
    /// Why: what the new image did (its words: `output/record_causes.rs`).
    pub reason: RollbackCause,
    /// The services put back on their previous image.
    pub services: Vec<RolledBackService>,
    /// Whether the previous images became active again.
    pub restored: bool,
}

/// One service an update rolled back: the image it refused and the one it runs again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolledBackService {
    pub service: String,
    /// The service's image reference (`registry/repo:tag`).
    pub image: String,
    /// The new image's id, which did not become active.
    pub failed: String,
    /// The previous image's id, which the reference points at again.
    pub restored: String,
}

pub(crate) use crate::state::quarantined::{Quarantine, QuarantineRecord};

/// What the last `update --check` found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRecord {
    /// When it asked (written in Unix milliseconds).
    #[serde(with = "stored::unix_ms")]
    pub at: Stamp,
    /// The services whose registry has an image other than the one they run.
    pub available: Vec<String>,
    /// Why the registry could not be asked about some image, if it could not.
    #[serde(default)]
    pub error: Option<String>,
}

/// A start that failed: the module reads `failed`, with this as its reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureRecord {
    /// When it failed (written in Unix milliseconds).
    #[serde(with = "stored::unix_ms")]
    pub at: Stamp,
    /// The cause (its words: `output/record_causes.rs`).
    pub reason: StartCause,
    /// The service that was started (`MODULE/SERVICE`), or none for the whole module.
    #[serde(default)]
    pub service: Option<String>,
}

/// What a verb's end changes in a module's record (see [`ModuleRecord::after`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// A person's start of the module (`None`) or of one service succeeded.
    Started(Option<String>),
    /// The supervisor's repair or restart succeeded: the failure is over,
    /// what a person stopped stays stopped.
    Repaired,
    /// A start failed, for this reason.
    StartFailed(Option<String>, StartCause),
    /// The module (`None`) or one service was stopped by request.
    Stopped(Option<String>),
}

impl ModuleRecord {
    /// The module runs what its registries serve (an update applied, or found
    /// nothing new): an old rollback no longer describes it, and no update is
    /// available as of now, whatever the last `--check` said.
    pub fn up_to_date(&mut self) {
        self.rollback = None;
        if let Some(check) = &mut self.update_check {
            check.at = Stamp::now().whole_milli();
            check.available.clear();
            check.error = None;
        }
    }

    /// Records how a verb ended (`now`, to the millisecond).
    pub fn after(&mut self, ended: Ended, now: Stamp) {
        match ended {
            Ended::Started(service) => {
                self.failure = None;
                match service {
                    Some(s) => self.stopped.retain(|x| *x != s),
                    None => self.stopped.clear(),
                }
            }
            Ended::Repaired => self.failure = None,
            Ended::StartFailed(service, reason) => {
                self.failure = Some(FailureRecord {
                    at: now,
                    reason,
                    service,
                });
            }
            Ended::Stopped(None) => {
                self.failure = None;
                self.stopped.clear();
            }
            Ended::Stopped(Some(s)) => {
                if self
                    .failure
                    .as_ref()
                    .is_some_and(|f| f.service.as_ref() == Some(&s))
                {
                    self.failure = None;
                }
                if !self.stopped.contains(&s) {
                    self.stopped.push(s);
                }
            }
        }
    }
}

/// A hold of the supervisor's, as remembered across its restarts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HoldRecord {
    /// When the hold began. Times here are written in Unix milliseconds.
    #[serde(with = "stored::unix_ms")]
    pub since: Stamp,
    /// Before when the supervisor does not try again.
    #[serde(with = "stored::unix_ms")]
    pub not_before: Stamp,
    /// The pause after the next failed try (written in milliseconds).
    #[serde(rename = "backoff_ms", with = "stored::span_ms")]
    pub backoff: Duration,
    /// When the start limit frees a start, as last seen.
    #[serde(default, with = "stored::unix_ms::option")]
    pub free_at: Option<Stamp>,
    /// Why it is held (its words: `output/record_causes.rs`).
    #[serde(default)]
    pub reason: HoldCause,
    /// Whether `on_failure` has been run (or refused) for this hold: once per hold.
    #[serde(default)]
    pub notified: bool,
}

impl HoldRecord {
    /// When the supervisor tries again: after the backoff, once the limit frees a start.
    pub fn until(&self) -> Stamp {
        let free = self
            .free_at
            .map_or(self.not_before, |f| f.plus(Duration::from_secs(1)));
        self.not_before.max(free)
    }
}

/// The whole state file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StateFile {
    #[serde(default)]
    pub schema: u32,
    #[serde(default)]
    pub modules: BTreeMap<String, ModuleRecord>,
}

/// Figures of a module's start limit at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct LimitUse {
    pub used: u32,
    pub burst: u32,
    pub interval: Duration,
    /// When the oldest counted start leaves the window, if the limit is hit.
    pub free_at: Option<Stamp>,
}

impl ModuleRecord {
    /// Forget starts that have left the window.
    pub fn prune(&mut self, limit: RestartLimit, now: Stamp) {
        let now = now.whole_milli();
        self.starts
            .retain(|&t| now.since(t) < limit.interval && t <= now);
    }

    pub fn limit_use(&self, limit: RestartLimit, now: Stamp) -> LimitUse {
        let mut r = self.clone();
        r.prune(limit, now);
        let used = u32::try_from(r.starts.len()).unwrap_or(u32::MAX);
        let free_at = (used >= limit.burst).then(|| {
            // The start that must leave the window before another fits.
            let idx = r.starts.len() - limit.burst as usize;
            let mut sorted = r.starts.clone();
            sorted.sort_unstable();
            sorted[idx].plus(limit.interval)
        });
        LimitUse {
            used,
            burst: limit.burst,
            interval: limit.interval,
            free_at,
        }
    }
}

/// The exit-5 refusal, saying when the module is free and how to clear it.
pub(crate) fn refusal(name: &str, u: &LimitUse, now: Stamp) -> HalError {
    let free = u
        .free_at
        .map(|t| {
            let wait = t.since(now).as_secs().max(1);
            format!(", free again at {} UTC (in {wait}s)", t.clock())
        })
        .unwrap_or_default();
    HalError::Refused(format!(
        "start limit hit: {} starts in {}{free}; `hal module reset-failed {name}` clears it, `--force` starts once anyway",
        u.used,
        crate::util::duration::format(u.interval),
    ))
}

/// Why a state file's text is no state hal can use (the store begins again).
#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    /// Not JSON, or not the shape of a state file.
    #[error(transparent)]
    Shape(#[from] serde_json::Error),
    /// Written by a newer hal.
    #[error("schema {0} is newer than this hal understands")]
    Newer(u32),
}

/// Parses the state file text; any shape problem is an error, never a panic.
pub fn parse_state(text: &str) -> Result<StateFile, StateFileError> {
    let s: StateFile = serde_json::from_str(text)?;
    if s.schema > SCHEMA {
        return Err(StateFileError::Newer(s.schema));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn why_a_state_file_is_unusable_reads_as_it_did() {
        let newer = format!("{{\"schema\":{},\"modules\":{{}}}}", SCHEMA + 1);
        assert_eq!(
            parse_state(&newer).unwrap_err().to_string(),
            format!("schema {} is newer than this hal understands", SCHEMA + 1)
        );
        let shape = "{\"schema\":\"one\"}";
        assert_eq!(
            parse_state(shape).unwrap_err().to_string(),
            serde_json::from_str::<StateFile>(shape)
                .unwrap_err()
                .to_string()
        );
    }

    #[test]
    fn a_failure_lasts_until_a_start_or_a_stop() {
        let mut r = ModuleRecord::default();
        r.after(
            Ended::StartFailed(None, StartCause::Error("image missing".into())),
            Stamp::from_millis(5),
        );
        assert_eq!(
            r.failure.as_ref().unwrap().reason,
            StartCause::Error("image missing".into())
        );
        r.after(Ended::Stopped(Some("worker".into())), Stamp::from_millis(6));
        assert!(r.failure.is_some(), "another service's stop");
        assert_eq!(r.stopped, ["worker"]);
        r.after(Ended::Repaired, Stamp::from_millis(7));
        assert!(r.failure.is_none());
        assert_eq!(r.stopped, ["worker"], "the supervisor keeps it stopped");
        r.after(
            Ended::StartFailed(Some("worker".into()), StartCause::Error("port".into())),
            Stamp::from_millis(8),
        );
        r.after(Ended::Stopped(Some("worker".into())), Stamp::from_millis(9));
        assert!(r.failure.is_none());
        r.after(
            Ended::Started(Some("worker".into())),
            Stamp::from_millis(10),
        );
        assert!(r.stopped.is_empty());
        r.after(Ended::Stopped(Some("db".into())), Stamp::from_millis(11));
        r.after(
            Ended::StartFailed(None, StartCause::Error("yaml".into())),
            Stamp::from_millis(12),
        );
        r.after(Ended::Stopped(None), Stamp::from_millis(13));
        assert!(r.failure.is_none() && r.stopped.is_empty());
    }

    #[test]
    fn a_rollback_record_round_trips_and_an_old_file_has_none() {
        let old = parse_state("{\"schema\":1,\"modules\":{\"web\":{\"starts\":[]}}}").unwrap();
        let web = &old.modules["web"];
        assert!(web.rollback.is_none() && web.rollbacks == 0 && web.previous.is_empty());
        let rec = ModuleRecord {
            rollback: Some(RollbackRecord {
                at: Stamp::from_millis(5),
                reason: RollbackCause::NewImage(StartCause::Error(
                    "did not start: service api exited with code 1".into(),
                )),
                services: vec![RolledBackService {
                    service: "api".into(),
                    image: "r/api:latest".into(),
                    failed: "sha256:2".into(),
                    restored: "sha256:1".into(),
                }],
                restored: true,
            }),
            rollbacks: 2,
            previous: [("api".to_string(), "sha256:1".to_string())].into(),
            ..ModuleRecord::default()
        };
        let mut file = StateFile::default();
        file.modules.insert("web".into(), rec);
        let text = serde_json::to_string(&file).unwrap();
        assert_eq!(parse_state(&text).unwrap(), file);
        // Empty fields stay out of the file.
        let empty = serde_json::to_string(&ModuleRecord::default()).unwrap();
        assert!(
            !empty.contains("rollback") && !empty.contains("previous"),
            "{empty}"
        );
    }
}

#[cfg(test)]
mod on_disk {
    //! A state file in the shape hal writes today (times as unix milliseconds) still loads, and is written back unchanged.

    use super::*;

    const TODAY: &str = r#"{"schema":1,"modules":{"web":{
        "starts":[1764900000000,1764900060500],"desired":"up","pull_warning":null,
        "digest":"sha256:ab","services":null,"compose_version":"2.30.0",
        "hold":{"since":1764900000000,"not_before":1764900030000,"backoff_ms":30000,
                "free_at":1764900600000,"reason":"start limit hit","notified":true},
        "stopped":["worker"],
        "failure":{"at":1764900061000,"reason":"exited","service":"web"},
        "rollback":{"at":1764900062000,"reason":"not active","restored":true,
                    "services":[{"service":"web","image":"nginx","failed":"sha256:1","restored":"sha256:0"}]},
        "rollbacks":2,"previous":{"web":"sha256:0"},
        "update_check":{"at":1764900063000,"available":["web"],"error":null}}}}"#;

    #[test]
    fn todays_state_file_loads_and_round_trips() {
        let s = parse_state(TODAY).unwrap();
        let web = &s.modules["web"];
        assert_eq!(
            web.starts.iter().map(|t| t.millis()).collect::<Vec<_>>(),
            vec![1_764_900_000_000, 1_764_900_060_500]
        );
        let hold = web.hold.as_ref().unwrap();
        assert_eq!(hold.until(), Stamp::from_millis(1_764_900_601_000));
        assert_eq!(Stamp::from_millis(1_764_900_060_500).nanos(), 500_000_000);
        assert_eq!(
            Stamp::from_millis(1_764_900_060_500).millis(),
            1_764_900_060_500
        );
        assert_eq!(web.failure.as_ref().unwrap().at.millis(), 1_764_900_061_000);
        let want: serde_json::Value = serde_json::from_str(TODAY).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), want);
    }
}
