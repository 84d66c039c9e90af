//! A look: the status of the marked modules read at once, the supervisor's decisions acted on.

use std::collections::BTreeSet;
use std::time::Duration;

use super::{BUSY_RECHECK, Stopped, Watcher, deaths};
use crate::module::status::State;
use crate::output::watch_log::WatchOwn;
use crate::util::timefmt::Stamp;

/// How soon a requirement something waits on is looked at again: while it is starting (a
/// quarter of its settle second, so a layer of dependents starts within 250 ms of it: issue 39), and otherwise.
const WAITED_STARTING: Duration = Duration::from_millis(250);
const WAITED_OTHER: Duration = Duration::from_secs(5);

impl Watcher<'_> {
    /// Reads the status of the marked modules and acts on what the supervisor decides.
    pub(super) async fn look(&mut self) -> Result<(), Stopped> {
        let names = std::mem::take(&mut self.dirty);
        self.dirty_at = None;
        let mut busy = Vec::new();
        let mut mods = Vec::new();
        for name in names {
            let Some(m) = self.modules.iter().find(|m| m.name == name) else {
                continue;
            };
            let stack = m.is_stack();
            if self.inflight.contains(&name) || (stack && !self.link.up()) {
                // Looked at again when its restart ends, or when the engine is back.
                continue;
            }
            if self.node.store.busy(&name) {
                busy.push(name);
                continue;
            }
            mods.push(m.clone());
        }
        self.mark(busy, BUSY_RECHECK);
        if mods.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = mods.iter().map(|m| m.name.clone()).collect();
        let detail = self.deaths.detail(&names, self.detail);
        let node = std::rc::Rc::clone(&self.node);
        let node = self
            .drive(async move {
                let node = crate::run::collect_status(&node, &mods, detail).await;
                (mods, node)
            })
            .await?;
        let (mods, node) = node;
        self.problems(&node.errors, &node.warnings);
        if let Some(m) = &mut self.metrics {
            m.saw(&node.modules);
        }
        if let Some(why) = node.errors.first()
            && self.link.up()
        {
            let why = why.clone();
            self.engine_down(&why, "lost connection");
        }
        self.learn_netns(&node.modules);
        let again = self.deaths.settle(&node.modules, Stamp::now());
        self.mark(again, deaths::RELOOK);
        // Started (running, perhaps not past its settle second): its waiting
        // dependents are looked at now, and the status read then says whether
        // their tie lets them start ([`crate::module::status::ModuleStatus::started`]).
        let active: Vec<&str> = node
            .modules
            .iter()
            .filter(|s| s.started(true))
            .map(|s| s.name.as_str())
            .collect();
        let unblocked = self.sup.unblocked(&active);
        self.mark(unblocked, Duration::ZERO);
        let actions = self.sup.decide(&node.modules, Stamp::now());
        for action in self.in_order(actions) {
            if let Some(m) = mods.iter().find(|m| m.name == action.module) {
                self.act(m.clone(), action).await?;
            }
        }
        self.recheck_waited_on(&node.modules);
        Ok(())
    }

    /// A requirement turns active without an event (a container counts as up
    /// once it has stayed up a moment): while something waits on it, it is
    /// looked at again soon, sooner while it is starting.
    fn recheck_waited_on(&mut self, read: &[crate::module::status::ModuleStatus]) {
        for r in self.sup.waited_on() {
            let delay = match read.iter().find(|s| s.name == r).map(|s| s.state) {
                Some(State::Active) => continue,
                Some(State::Starting) | None => WAITED_STARTING,
                Some(_) => WAITED_OTHER,
            };
            self.mark([r], delay);
        }
    }

    /// Logs status problems when they change, not at every pass.
    fn problems(&mut self, errors: &[String], warnings: &[String]) {
        // The services root is reported by `rediscover`, which reads it every pass.
        let root = self.node.inventory.root_problem.as_ref();
        let now: BTreeSet<String> = errors
            .iter()
            .chain(warnings.iter().filter(|w| Some(*w) != root))
            .cloned()
            .collect();
        for p in now.difference(&self.problems) {
            self.log.emit(WatchOwn::Problem {
                module: None,
                why: p.clone(),
            });
        }
        self.problems = now;
    }
}
