//! One container to repair, and how: what the supervisor plans and the stack backend does, typed until its words are said (the watch's log, a repair's progress line).

/// How one container is repaired.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum How {
    /// It exited and Docker will not restart it: start the same container again (Engine API).
    Start,
    /// It is running but unhealthy, or crash-looping: restart it (Engine API).
    Restart,
    /// It cannot be started as it is (dead, or gone): `compose up -d --no-deps --force-recreate SERVICE`.
    Recreate,
    /// Its service has fewer containers than compose runs for it: `compose up
    /// -d --no-deps SERVICE` makes the missing ones, the others stay as they are.
    Create,
}

impl How {
    /// The log's `action` word.
    pub(crate) fn word(self) -> &'static str {
        match self {
            How::Start => "start",
            How::Restart => "restart",
            How::Recreate => "recreate_service",
            How::Create => "create_service",
        }
    }
}

/// One container to repair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fix {
    pub service: String,
    /// The container's name (`web-app-1`).
    pub container: String,
    pub how: How,
    /// Why it is touched although it did not fail: `depends on app with restart: true`.
    pub because: Option<String>,
}

impl Fix {
    /// What the repair does, for the log: `started container web-app-1 again`.
    pub(crate) fn describe(&self, done: bool) -> String {
        let what = match (self.how, done) {
            (How::Start, false) => format!("starting container {} again", self.container),
            (How::Start, true) => format!("started container {} again", self.container),
            (How::Restart, false) => format!("restarting container {}", self.container),
            (How::Restart, true) => format!("restarted container {}", self.container),
            (How::Recreate, false) => {
                format!("recreating service {} (compose up --no-deps)", self.service)
            }
            (How::Recreate, true) => format!("recreated service {}", self.service),
            (How::Create, false) => {
                format!("creating service {} (compose up --no-deps)", self.service)
            }
            (How::Create, true) => format!("created service {}", self.service),
        };
        match &self.because {
            Some(b) => format!("{what} ({b})"),
            None => what,
        }
    }
}
