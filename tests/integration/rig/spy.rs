//! The one compose spy: a stand-in that runs the real compose (or answers
//! `version` as told) and records each call as it starts (did hal run compose at all?) and as it returns (how far
//! hal got in a verb: say, that it is in its wait for health, which reads the
//! Engine API alone).

use std::path::PathBuf;
use std::time::Duration;

use super::{Rig, eventually, script};

/// The calls of compose, made and returned, for every hal run of a rig.
pub(crate) struct ComposeCalls {
    called: PathBuf,
    log: PathBuf,
    version: PathBuf,
}

impl ComposeCalls {
    /// Puts the recorder in front of compose for every later hal run of `rig`.
    pub(crate) fn install(rig: &mut Rig) -> ComposeCalls {
        let called = rig.dir.join("compose-calls.log");
        let log = rig.dir.join("compose-returned.log");
        let version = rig.dir.join("compose-fake-version");
        let body = format!(
            "#!/bin/sh\necho \"$*\" >> '{called}'\nif [ \"$1\" = version ] && [ -s '{version}' ]; then cat '{version}'; exit 0; fi\ndocker compose \"$@\"\nrc=$?\necho \"$*\" >> '{log}'\nexit $rc\n",
            called = called.display(),
            version = version.display(),
            log = log.display()
        );
        let path = script(&rig.dir, "compose-recorder", &body);
        rig.env
            .push(("HAL_COMPOSE".into(), path.display().to_string()));
        ComposeCalls {
            called,
            log,
            version,
        }
    }

    /// Every call made since the last [`ComposeCalls::forget`], one line each
    /// (its arguments); "" when hal ran no compose.
    pub(crate) fn calls(&self) -> String {
        std::fs::read_to_string(&self.called).unwrap_or_default()
    }

    /// Forgets the calls made so far: [`ComposeCalls::calls`] starts again empty.
    pub(crate) fn forget(&self) {
        std::fs::write(&self.called, "").unwrap();
    }

    /// Answers `compose version` with `text` from now on (`""`: compose's own
    /// answer again), as a compose upgrade would.
    pub(crate) fn fake_version(&self, text: &str) {
        std::fs::write(&self.version, text).unwrap();
    }

    /// How many `compose … up …` calls have returned.
    pub(crate) fn ups(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.split_whitespace().any(|w| w == "up"))
            .count()
    }

    /// Waits until the `n`th `up` has returned: hal is then in its wait for
    /// the module to be up, where no compose process runs.
    #[track_caller]
    pub(crate) fn await_up(&self, n: usize) {
        assert!(
            eventually(Duration::from_secs(60), || self.ups() >= n),
            "compose up #{n} did not return within 60s"
        );
    }
}
