//! The host backend against a scripted init: starts, waits, stops and failures, without systemd.

use super::*;

fn unit(activity: Activity, words: &str) -> UnitStatus {
    UnitStatus {
        unit: "n.service".into(),
        load: Load::Loaded,
        activity,
        words: words.into(),
        auto_restart: words == "activating/auto-restart",
        result: None,
        main_exit: None,
        main_pid: None,
        restarts: Some(0),
        active_since: Some(Stamp::from_secs(1_700_000_000)),
        changed: None,
        exited_at: None,
        triggers: Vec::new(),
        next_run: None,
        last_trigger: None,
    }
}

#[test]
fn states_map_to_the_spec() {
    assert_eq!(
        assess(&unit(Activity::Active, "active/running")),
        (State::Active, None)
    );
    assert_eq!(
        assess(&unit(Activity::Activating, "activating/start")).0,
        State::Starting
    );
    assert_eq!(
        assess(&unit(Activity::Reloading, "reloading/reload")).0,
        State::Starting
    );
    assert_eq!(
        assess(&unit(Activity::Inactive, "inactive/dead")),
        (State::Inactive, Some("n.service is inactive (dead)".into()))
    );
    let failed = UnitStatus {
        result: Some("exit-code".into()),
        main_exit: Some(MainExit::Exited(3)),
        ..unit(Activity::Failed, "failed/failed")
    };
    assert_eq!(
        assess(&failed),
        (
            State::Failed,
            Some("n.service failed: exit-code, status 3".into())
        )
    );
    let killed = UnitStatus {
        result: Some("signal".into()),
        main_exit: Some(MainExit::Signal(9)),
        ..unit(Activity::Failed, "failed/failed")
    };
    assert_eq!(
        assess(&killed).1.as_deref(),
        Some("n.service failed: signal, signal 9")
    );
    let looping = UnitStatus {
        restarts: Some(4),
        result: Some("exit-code".into()),
        main_exit: Some(MainExit::Exited(1)),
        ..unit(Activity::Activating, "activating/auto-restart")
    };
    assert_eq!(
        assess(&looping),
        (
            State::Starting,
            Some(
                "n.service restarting after a failure (exit-code, status 1), 4 restarts so far"
                    .into()
            )
        )
    );
}

#[test]
fn missing_and_broken_units_are_invalid() {
    let gone = UnitStatus {
        load: Load::NotFound,
        ..unit(Activity::Inactive, "inactive/dead")
    };
    assert_eq!(
        assess(&gone),
        (State::Invalid, Some("unit n.service not found".into()))
    );
    let masked = UnitStatus {
        load: Load::Masked,
        ..unit(Activity::Inactive, "inactive/dead")
    };
    assert_eq!(assess(&masked).0, State::Invalid);
    let odd = unit(Activity::Other("maintenance".into()), "maintenance/x");
    assert_eq!(assess(&odd).0, State::Unknown);
}

#[test]
fn unit_becomes_a_service_row() {
    let s = UnitStatus {
        main_exit: Some(MainExit::Signal(15)),
        restarts: Some(2),
        ..unit(Activity::Inactive, "inactive/dead")
    };
    let row = service_status(&s);
    assert_eq!(row.name, "n.service");
    assert_eq!(row.unit.as_deref(), Some("n.service"));
    assert_eq!(row.container, None);
    assert_eq!(row.state.as_str(), "inactive/dead");
    assert_eq!(row.state.unit(), Some(&Activity::Inactive));
    assert_eq!(row.exit_code, Some(143));
    assert_eq!(row.restart_count, Some(2));
    assert_eq!(
        row.started_at.map(Stamp::rfc3339).as_deref(),
        Some("2023-11-14T22:13:20Z")
    );
}

mod scripted {
    //! The backend's verbs against [`Memory`], the scripted init.

    use std::sync::Arc;
    use std::time::Duration;

    use crate::host::init::memory::{Memory, Script};
    use crate::host::{Inits, UnitLaunch, launch, node_status, stop, wait};
    use crate::module::config::{PullPolicy, RestartLimit, Scope};
    use crate::module::diagnosed::details_of;
    use crate::module::outcome::{Outcome, StartPlan};
    use crate::module::progress::Silent;
    use crate::module::status::State;
    use crate::module::{Kind, Module};

    const TIMEOUT: Duration = Duration::from_secs(10);

    async fn start(init: &Arc<Memory>, unit: &str) -> anyhow::Result<Outcome> {
        let plan = StartPlan {
            pull: PullPolicy::Never,
            pull_timeout: TIMEOUT,
            timeout: TIMEOUT,
            wait: true,
            limit: RestartLimit::default(),
        };
        match launch(init.clone(), &Silent, "m", unit, &plan).await? {
            UnitLaunch::Done(o) => Ok(o),
            UnitLaunch::Wait(p) => wait(&Silent, p).await,
        }
    }

    #[tokio::test]
    async fn a_good_unit_starts_and_stays_active() {
        let init = Arc::new(Memory::new().unit("web.service", Script::Runs));
        let o = start(&init, "web.service").await.unwrap();
        assert_eq!((o.state, o.reason.text()), (State::Active, None));
        assert_eq!(init.calls(), ["start web.service"]);
    }

    #[tokio::test]
    async fn a_slow_unit_is_waited_for() {
        let init = Arc::new(Memory::new().unit("slow.service", Script::SlowToStart(3)));
        let o = start(&init, "slow.service").await.unwrap();
        assert_eq!(o.state, State::Active);
    }

    #[tokio::test]
    async fn a_one_shot_that_ended_well_is_done() {
        let init = Arc::new(Memory::new().unit("job.service", Script::Finishes));
        let o = start(&init, "job.service").await.unwrap();
        assert_eq!(o.state, State::Inactive);
    }

    #[tokio::test]
    async fn a_failed_start_job_says_why_with_the_last_lines() {
        let init = Arc::new(
            Memory::new()
                .unit("bad.service", Script::FailsToStart(3))
                .journal(
                    "bad.service",
                    &["reading config", "no such file: /etc/bad.conf"],
                ),
        );
        let e = start(&init, "bad.service").await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "did not start: bad.service failed: exit-code, status 3"
        );
        assert_eq!(
            details_of(&e),
            [
                "bad.service: state failed/failed, result exit-code, exit status 3, 0 restarts",
                "  m | reading config",
                "  m | no such file: /etc/bad.conf",
            ]
        );
        let calls = init.calls();
        assert_eq!(calls[..2], ["start bad.service", "settle-logs"]);
        assert!(
            calls[2..].iter().all(|c| c == "journal bad.service"),
            "{calls:?}"
        );
    }

    #[tokio::test]
    async fn a_unit_that_dies_right_after_its_start_did_not_start() {
        let init = Arc::new(
            Memory::new()
                .unit("flaky.service", Script::DiesAfterStart(1))
                .journal("flaky.service", &["panic: oops"]),
        );
        let e = start(&init, "flaky.service").await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "did not start: flaky.service failed: exit-code, status 1"
        );
        assert_eq!(details_of(&e).last().unwrap(), "  m | panic: oops");
    }

    #[tokio::test]
    async fn a_missing_unit_is_not_found() {
        let init = Arc::new(Memory::new());
        let e = start(&init, "ghost.service").await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "unit ghost.service not found: check `unit` in the config, and that the unit is installed (and the init reloaded)"
        );
        let e = stop(&*init, &Silent, "m", "ghost.service", TIMEOUT)
            .await
            .unwrap_err();
        assert!(
            e.to_string().starts_with("unit ghost.service not found"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn stopping_a_failed_unit_forgets_the_failure() {
        let init = Arc::new(Memory::new().unit("bad.service", Script::FailsToStart(2)));
        assert!(start(&init, "bad.service").await.is_err());
        let o = stop(&*init, &Silent, "m", "bad.service", TIMEOUT)
            .await
            .unwrap();
        assert_eq!(o.state, State::Inactive);
        assert_eq!(
            o.reason.text().as_deref(),
            Some("bad.service is inactive (dead)")
        );
        let calls = init.calls();
        assert_eq!(
            calls[calls.len() - 2..],
            ["stop bad.service", "reset-failed bad.service"]
        );
        // A unit that stopped cleanly has nothing to forget.
        let init = Arc::new(Memory::new().unit("web.service", Script::Runs));
        start(&init, "web.service").await.unwrap();
        stop(&*init, &Silent, "m", "web.service", TIMEOUT)
            .await
            .unwrap();
        assert!(!init.calls().iter().any(|c| c.starts_with("reset-failed")));
    }

    fn host(name: &str, unit: &str, scope: Scope) -> Module {
        Module {
            name: name.into(),
            kind: Kind::Host {
                unit: unit.into(),
                scope,
            },
        }
    }

    #[tokio::test]
    async fn node_status_asks_each_scope_its_own_init() {
        let user = Arc::new(Memory::new().unit("a.service", Script::Runs));
        let system = Arc::new(Memory::new().down("no manager here"));
        let hosts = Inits::with(user.clone(), system);
        let modules = [
            host("a", "a.service", Scope::User),
            host("gone", "gone.service", Scope::User),
            host("s", "s.service", Scope::System),
        ];
        let (all, unreachable) = node_status(&hosts, &modules).await;
        assert!(unreachable);
        assert_eq!(all["a"].state, State::Inactive);
        assert_eq!(all["gone"].state, State::Invalid);
        assert_eq!(all["s"].state, State::Unknown);
        assert_eq!(all["s"].reason.text().as_deref(), Some("no manager here"));
    }

    #[test]
    fn unit_names_follow_the_init_s_rule() {
        let cfg = crate::module::config::Config::parse(
            "[module.a]\nunit = \"plain\"\n",
            std::path::Path::new("h.toml"),
        )
        .unwrap();
        let memory = Inits::with(Arc::new(Memory::new()), Arc::new(Memory::new()));
        assert!(memory.check_units(&cfg).is_ok());
        let e = Inits::default().check_units(&cfg).unwrap_err().to_string();
        assert!(e.contains("line 2, key module.a.unit"), "{e}");
    }
}
