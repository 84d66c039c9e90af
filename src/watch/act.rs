//! What the supervisor does about a module: restart it, hold it, run its `on_failure`, and say so in the log.

use std::time::Duration;

use super::{BUSY_RECHECK, Done, EVENT_SETTLE, Stopped, Watcher, hook};
use crate::error::{Exit, HalError, OneLine, exit_of};
use crate::module::Module;
use crate::module::config::PullPolicy;
use crate::module::outcome::StartOpts;
use crate::module::progress::Progress;
use crate::module::status::Desired;
use crate::module::status::State;
use crate::output::watch_log::Entry;
use crate::run::node::Node;
use crate::run::{self, Report, Verb};
use crate::stack::Fix;
use crate::util::timefmt::Stamp;
use crate::watch::policy::{Act, Action, Attempt, RepairScope};

impl Watcher<'_> {
    pub(super) async fn act(&mut self, m: Module, mut a: Action) -> Result<(), Stopped> {
        let name = m.name.clone();
        if a.act == Act::Release {
            self.log.emit(
                Entry::module(
                    &name,
                    "released",
                    Some("release"),
                    format!("hold released: {}", a.reason),
                )
                .reason(a.reason),
            );
            return Ok(());
        }
        if a.act == Act::Wait {
            self.log
                .emit(Entry::module(&name, "waiting", None, a.reason.clone()).reason(a.reason));
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
            let stacks = &self.node.stacks;
            let planned = self
                .drive(async {
                    let engine = stacks.engine().await?;
                    crate::stack::plan_repair(&engine, &name, fixes.clone()).await
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
        let (node, progress) = (self.node, self.progress);
        self.work.push(Box::pin(restart(node, progress, m, a)));
        Ok(())
    }

    pub(super) fn on_done(&mut self, d: Done) {
        match d {
            Done::Restart {
                act,
                reason,
                scope,
                report,
            } => self.restarted(act, reason, &scope, report),
            Done::Hook { module, result } => self.hook_done(&module, result),
            Done::Update { module, report } => self.updated(&module, report.as_deref()),
        }
    }

    fn restarted(&mut self, act: Act, reason: String, scope: &RepairScope, report: Report) {
        let name = report.module.name.clone();
        self.inflight.remove(&name);
        self.mark([name.clone()], EVENT_SETTLE);
        let took = report.took;
        let took_text = format!("{:.1}s", took.as_secs_f64());
        let took_ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
        let now = Stamp::now();
        let (what, err) = match &report.result {
            Ok(o) if o.state == State::Active => {
                self.sup.record(&name, Attempt::Recovered, now);
                let what = match scope {
                    RepairScope::Containers(fixes) => describe(fixes, true),
                    RepairScope::Escalated(_) => "recreated the module".to_string(),
                    RepairScope::Module => "restarted the module".to_string(),
                };
                let notes = if o.warnings.is_empty() {
                    String::new()
                } else {
                    format!("; {}", o.warnings.join("; "))
                };
                let text = format!("restarted, active ({took_text}; {what}{notes})");
                self.log.emit(
                    Entry::module(&name, "restarted", None, text)
                        .with("state", "active")
                        .with("repair", scope_word(scope))
                        .with("took_ms", took_ms),
                );
                return;
            }
            Ok(o) => (
                Attempt::Failed,
                format!(
                    "restarted but {}: {}",
                    o.state.as_str(),
                    o.reason.as_deref().unwrap_or("")
                ),
            ),
            Err(e) if exit_of(e) == Exit::Refused => (Attempt::Refused, refusal_text(e)),
            Err(e) => (Attempt::Failed, without_context(e, &name)),
        };
        let hold_began = self.sup.record(&name, what.clone(), now);
        if hold_began {
            self.held(&name, &reason, &err);
            return;
        }
        let next = self
            .sup
            .hold(&name)
            .map(|h| format!("; still held, next try after {} UTC", h.not_before.clock()))
            .unwrap_or_default();
        let (event, verb) = match (what, act) {
            (Attempt::Refused, _) => ("refused", "refused"),
            (_, Act::Retry) => ("retry_failed", "retry failed"),
            _ => ("restart_failed", "restart failed"),
        };
        self.log.emit(
            Entry::module(
                &name,
                event,
                None,
                format!("{verb}: {err} ({took_text}){next}"),
            )
            .reason(err)
            .with("took_ms", took_ms),
        );
    }

    /// A hold began: say so, and run `on_failure` once if there is one and the config may be trusted.
    /// `HAL_REASON` is the trouble, then the refusal (the same text when they are one).
    pub(super) fn held(&mut self, name: &str, reason: &str, refusal: &str) {
        let env_reason = if reason == refusal {
            reason.to_string()
        } else {
            format!("{reason}; {refusal}")
        };
        // Once per hold, even across a restart of hal watch (the hold is kept in hal's state).
        self.sup.notified(name, &env_reason);
        let command = hook::command_of(self.node, name);
        let blocked = command.as_ref().and_then(|_| hook::refusal(self.node));
        let tail = match (&command, &blocked) {
            (None, _) => "",
            (Some(_), Some(_)) => "; on_failure not run",
            (Some(_), None) => "; running on_failure",
        };
        self.log.emit(
            Entry::module(name, "held", Some("hold"), format!("held: {refusal}{tail}"))
                .reason(refusal),
        );
        match (command, blocked) {
            (Some(_), Some(why)) => self.log.emit(
                Entry::module(
                    name,
                    "on_failure_refused",
                    None,
                    format!("on_failure not run: {why}"),
                )
                .reason(why),
            ),
            (Some(argv), None) => {
                let module = name.to_string();
                self.work.push(Box::pin(async move {
                    let result = hook::run(&argv, &module, &env_reason).await;
                    Done::Hook { module, result }
                }));
            }
            (None, _) => {}
        }
    }

    fn hook_done(&mut self, name: &str, result: Result<hook::Finished, String>) {
        match result {
            Ok(f) => {
                for line in &f.output {
                    self.log.emit(
                        Entry::module(
                            name,
                            "on_failure_output",
                            None,
                            format!("on_failure: {line}"),
                        )
                        .reason(line.clone()),
                    );
                }
                self.log.emit(
                    Entry::module(
                        name,
                        "on_failure",
                        None,
                        format!("on_failure {} ({:.1}s)", f.how, f.took.as_secs_f64()),
                    )
                    .reason(f.how.clone())
                    .with("ok", f.ok)
                    .with(
                        "took_ms",
                        u64::try_from(f.took.as_millis()).unwrap_or(u64::MAX),
                    ),
                );
            }
            Err(why) => self.log.emit(
                Entry::module(
                    name,
                    "on_failure",
                    None,
                    format!("on_failure could not run: {why}"),
                )
                .reason(why)
                .with("ok", false),
            ),
        }
    }
}

/// The repair's words for the log: `started container web-app-1 again, then restarted …`.
fn describe(fixes: &[Fix], done: bool) -> String {
    let all: Vec<String> = fixes.iter().map(|f| f.describe(done)).collect();
    all.join(", then ")
}

fn scope_word(scope: &RepairScope) -> &'static str {
    match scope {
        RepairScope::Containers(_) => "containers",
        RepairScope::Module | RepairScope::Escalated(_) => "module",
    }
}

/// Repairs a module through the runner (not forced: it counts against the
/// start limit and takes the module's lock): its containers alone, or the
/// whole module as `hal module restart` would. Images are pulled only when
/// missing: a recovery must not wait on a registry.
async fn restart(node: &Node, progress: &dyn Progress, m: Module, a: Action) -> Done {
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
            update: None,
        });
    Done::Restart {
        act: a.act,
        reason: a.reason,
        scope: a.scope,
        report,
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

/// The watch log's line for a repair about to begin: what it does and why.
fn trouble_entry(name: &str, a: &Action) -> Entry {
    let (verb, action, repair) = match (&a.act, &a.scope) {
        (Act::Retry, _) => (
            "retrying after hold".to_string(),
            "retry",
            scope_word(&a.scope),
        ),
        (_, RepairScope::Containers(fixes)) => (
            "repairing".to_string(),
            fixes.first().map_or("restart", |f| f.how.word()),
            "containers",
        ),
        (_, RepairScope::Escalated(_)) => {
            ("recreating the module".to_string(), "recreate", "module")
        }
        _ => ("restarting".to_string(), "restart", "module"),
    };
    let plan = match &a.scope {
        RepairScope::Containers(fixes) => format!("; {}", describe(fixes, false)),
        RepairScope::Escalated(why) => format!("; {why}"),
        RepairScope::Module => String::new(),
    };
    let mut entry = Entry::module(
        name,
        "trouble",
        Some(action),
        format!("{verb}: {}{plan}", a.reason),
    )
    .reason(a.reason.clone())
    .with("repair", repair);
    if let RepairScope::Containers(fixes) = &a.scope {
        let names: Vec<String> = fixes.iter().map(|f| f.container.clone()).collect();
        entry = entry.with("containers", names);
    }
    entry
}
