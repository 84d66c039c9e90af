//! What the supervisor does about a module: restart it, hold it, run its `on_failure`, and say so in the log.

use std::rc::Rc;
use std::time::Duration;

use super::{BUSY_RECHECK, EVENT_SETTLE, Stopped, Watcher, WorkDone, hook};
use crate::error::{Exit, HalError, OneLine, exit_of};
use crate::module::Module;
use crate::module::config::PullPolicy;
use crate::module::outcome::StartOpts;
use crate::module::progress::Progress;
use crate::module::status::Desired;
use crate::module::status::State;
use crate::output::watch_log::{
    Cause, Failure, HoldEvent, HookEvent, OnFailure, Plan, Release, RepairEvent, Repaired,
};
use crate::run::Node;
use crate::run::{self, Report, Verb};
use crate::util::timefmt::Stamp;
use crate::watch::policy::{Act, Action, Attempt, RepairScope};

impl Watcher<'_> {
    pub(super) async fn act(&mut self, m: Module, mut a: Action) -> Result<(), Stopped> {
        let name = m.name.clone();
        if a.act == Act::Release {
            self.log.emit(HoldEvent::Released {
                module: name,
                why: Release::Waiting(a.reason),
            });
            return Ok(());
        }
        if a.act == Act::Wait {
            self.log.emit(RepairEvent::Waiting {
                module: name,
                reason: a.reason,
            });
            return Ok(());
        }
        if a.act == Act::Hold {
            self.held(&name, &a.reason, &a.reason);
            return Ok(());
        }
        // A person may have stopped it since its status was read.
        let (state, _) = self.node.store.read();
        if state.modules.get(&name).and_then(|r| r.desired) != Some(Desired::Up) {
            return Ok(());
        }
        if self.node.store.busy(&name) {
            self.mark([name], BUSY_RECHECK);
            return Ok(());
        }
        // Compose restarts the dependents that ask for it (`depends_on: {restart: true}`): so does hal.
        if let RepairScope::Containers(fixes) = &a.scope {
            let stacks = std::sync::Arc::clone(&self.node.stacks);
            let planned = self
                .drive(async {
                    let session = stacks.session().await?;
                    session.plan_repair(&name, fixes.clone()).await
                })
                .await?;
            if let Ok(all) = planned {
                a.scope = RepairScope::Containers(all);
            }
        }
        let entry = trouble_entry(&name, &a);
        self.log.emit(entry);
        self.sup.began(&a, Stamp::now());
        self.inflight.insert(name);
        let (node, progress) = (Rc::clone(&self.node), self.progress);
        self.work.push(Box::pin(
            async move { restart(&node, progress, m, a).await },
        ));
        Ok(())
    }

    pub(super) fn on_done(&mut self, d: WorkDone) {
        match d {
            WorkDone::Restart {
                act,
                reason,
                scope,
                report,
            } => self.restarted(act, *reason, &scope, *report),
            WorkDone::Hook { module, result } => self.hook_done(&module, result),
            WorkDone::Update { module, report } => self.updated(&module, report.as_deref()),
        }
    }

    fn restarted(&mut self, act: Act, reason: Cause, scope: &RepairScope, report: Report) {
        let name = report.module.name.clone();
        self.inflight.remove(&name);
        self.mark([name.clone()], EVENT_SETTLE);
        self.repair_ended();
        let took = report.took;
        let now = Stamp::now();
        let (what, err) = match &report.result {
            Ok(o) if o.state == State::Active => {
                self.sup.record(&name, Attempt::Recovered, now);
                let what = match scope {
                    RepairScope::Containers(fixes) => Repaired::Containers(fixes.clone()),
                    RepairScope::Escalated(_) => Repaired::Recreated,
                    RepairScope::Module => Repaired::Restarted,
                };
                self.log.emit(RepairEvent::Restarted {
                    module: name,
                    containers: matches!(scope, RepairScope::Containers(_)),
                    took,
                    what,
                    warnings: o.warnings.clone(),
                });
                return;
            }
            Ok(o) => (
                Attempt::Failed,
                Cause::RestartedBut {
                    state: o.state,
                    reason: o.reason.clone(),
                },
            ),
            Err(e) if exit_of(e) == Exit::Refused => {
                (Attempt::Refused, Cause::Said(refusal_text(e)))
            }
            Err(e) => (Attempt::Failed, Cause::Said(without_context(e, &name))),
        };
        let hold_began = self.sup.record(&name, what.clone(), now);
        if hold_began {
            self.held(&name, &reason, &err);
            return;
        }
        let next_try = self.sup.hold(&name).map(|h| h.not_before);
        let how = match (what, act) {
            (Attempt::Refused, _) => Failure::Refused,
            (_, Act::Retry) => Failure::Retry,
            _ => Failure::Restart,
        };
        self.log.emit(RepairEvent::RepairFailed {
            module: name,
            how,
            error: err,
            took,
            next_try,
        });
    }

    /// A hold began: say so, and run `on_failure` once if there is one and the config may be trusted.
    /// `HAL_REASON` is the trouble, then the refusal (the same text when they are one).
    pub(super) fn held(&mut self, name: &str, reason: &Cause, refusal: &Cause) {
        let held_for = if reason == refusal {
            reason.clone()
        } else {
            Cause::Then(Box::new(reason.clone()), Box::new(refusal.clone()))
        };
        let env_reason = held_for.to_string();
        // Once per hold, even across a restart of hal watch (the hold is kept in hal's state).
        self.sup.notified(name, &held_for);
        let command = hook::command_of(&self.node, name);
        let blocked = command.as_ref().and_then(|_| hook::refusal(&self.node));
        let on_failure = match (&command, &blocked) {
            (None, _) => OnFailure::None,
            (Some(_), Some(_)) => OnFailure::Refused,
            (Some(_), None) => OnFailure::Runs,
        };
        self.log.emit(HoldEvent::Held {
            module: name.to_string(),
            refusal: refusal.clone(),
            on_failure,
        });
        match (command, blocked) {
            (Some(_), Some(why)) => self.log.emit(HookEvent::Refused {
                module: name.to_string(),
                why,
            }),
            (Some(argv), None) => {
                let module = name.to_string();
                self.work.push(Box::pin(async move {
                    let result = hook::run(&argv, &module, &env_reason).await;
                    WorkDone::Hook { module, result }
                }));
            }
            (None, _) => {}
        }
    }

    fn hook_done(&mut self, name: &str, result: Result<hook::Finished, hook::HookError>) {
        match result {
            Ok(f) => {
                for line in &f.output {
                    self.log.emit(HookEvent::Output {
                        module: name.to_string(),
                        line: line.clone(),
                    });
                }
                self.log.emit(HookEvent::Ran {
                    module: name.to_string(),
                    how: f.how.clone(),
                    ok: f.ok,
                    took: f.took,
                });
            }
            Err(why) => self.log.emit(HookEvent::Failed {
                module: name.to_string(),
                why: why.to_string(),
            }),
        }
    }
}

/// Repairs a module through the runner (not forced: it counts against the
/// start limit and takes the module's lock): its containers alone, or the
/// whole module as `hal module restart` would. Images are pulled only when
/// missing: a recovery must not wait on a registry.
async fn restart(node: &Node, progress: &dyn Progress, m: Module, a: Action) -> WorkDone {
    let opts = StartOpts {
        pull: Some(PullPolicy::Missing),
        wait: true,
        timeout: None,
    };
    let verb = match &a.scope {
        RepairScope::Containers(fixes) => Verb::Repair {
            fixes: fixes.clone(),
            opts,
        },
        RepairScope::Module | RepairScope::Escalated(_) => Verb::AutoRestart { opts },
    };
    let report = run::run(node, progress, vec![m.clone()], &verb, 1)
        .await
        .pop()
        .unwrap_or(Report {
            module: m,
            service: None,
            result: Err(anyhow::anyhow!("no report")),
            took: Duration::ZERO,
            changed: false,
            would: None,
            plan: None,
            update: None,
            followed: Vec::new(),
        });
    WorkDone::Restart {
        act: a.act,
        reason: Box::new(a.reason),
        scope: a.scope,
        report: Box::new(report),
    }
}

/// The refusal's own words (when the module is free again, how to clear it).
fn refusal_text(e: &anyhow::Error) -> String {
    e.chain()
        .find_map(|c| c.downcast_ref::<HalError>())
        .map_or_else(|| OneLine(e).to_string(), ToString::to_string)
}

/// The error without ops' `restart NAME: ` prefix.
fn without_context(e: &anyhow::Error, name: &str) -> String {
    let text = OneLine(e).to_string();
    text.strip_prefix(&format!("restart {name}: "))
        .or_else(|| text.strip_prefix(&format!("repair {name}: ")))
        .map_or(text.clone(), str::to_string)
}

/// The watch log's event for a repair about to begin: what it does and why.
fn trouble_entry(name: &str, a: &Action) -> RepairEvent {
    let plan = match &a.scope {
        RepairScope::Containers(fixes) => Plan::Containers {
            fixes: fixes.clone(),
        },
        RepairScope::Escalated(why) => Plan::Recreate { why: why.clone() },
        RepairScope::Module => Plan::Module,
    };
    RepairEvent::Trouble {
        module: name.to_string(),
        reason: a.reason.clone(),
        retry: a.act == Act::Retry,
        plan,
    }
}
