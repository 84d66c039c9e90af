//! A compose stand-in that runs the real compose and records each call as it
//! returns, so a test knows how far hal got in a verb (say, that it is in its
//! wait for health, which reads the Engine API alone).

use std::path::PathBuf;
use std::time::Duration;

use super::{Rig, eventually, script};

/// The calls of compose that returned, for every hal run of a rig.
pub(crate) struct ComposeCalls {
    log: PathBuf,
}

impl ComposeCalls {
    /// Puts the recorder in front of compose for every later hal run of `rig`.
    pub(crate) fn install(rig: &mut Rig) -> ComposeCalls {
        let log = rig.dir.join("compose-returned.log");
        let body = format!(
            "#!/bin/sh\ndocker compose \"$@\"\nrc=$?\necho \"$*\" >> '{}'\nexit $rc\n",
            log.display()
        );
        let path = script(&rig.dir, "compose-recorder", &body);
        rig.env
            .push(("HAL_COMPOSE".into(), path.display().to_string()));
        ComposeCalls { log }
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
