//! One verb from start to end, the one entry every command and the supervisor's scheduled update run a verb through: checked, its targets widened by the graph, asked once, run, and the dependents whose tie did not survive restarted after, each step asked of the `Verb`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::error::HalError;
use crate::module::Module;
use crate::module::progress::Progress;
use crate::module::status::{Detail, State};
use crate::module::target::Target;
use crate::run::dependents::dependents_to_restart;
use crate::run::follow::{after_update, restart_dependents};
use crate::run::node::Node;
use crate::run::pulled::{self, Expanded};
use crate::run::rehearsal::{Rehearsal, plan_each};
use crate::run::report::Report;
use crate::run::runner::{check_reachable, check_services, run_targets};
use crate::run::status::collect_status;
use crate::run::verb::{Followers, Verb};
use crate::run::would;

/// A verb on its targets, as the command line (or the schedule) asked it.
pub(crate) struct Call<'a> {
    pub verb: &'a Verb,
    /// The modules (or services of a stack) named, in their order.
    pub targets: Vec<Target>,
    /// At most this many at once (`--jobs`).
    pub jobs: usize,
    /// `--dry-run`: what each target would undergo; nothing is touched.
    pub dry_run: bool,
}

/// What the caller hears along the way and is asked, besides the reports it
/// gets back.
pub(crate) struct Caller<'a> {
    /// Where the backends say what each module is doing.
    pub progress: &'a dyn Progress,
    /// A module the graph added, in words (`db: starting first (app1 requires it)`).
    pub note: &'a dyn Fn(&str),
    /// The one question of a verb on every module (`--all`, asked when
    /// [`Verb::confirms_all`]); `None`: nothing is asked.
    pub confirm: Option<&'a Confirm<'a>>,
    /// Each module's report as its work is over, with the verb it underwent
    /// (a dependent restarted after: `restart`).
    pub finished: &'a dyn Fn(&Report, &Verb),
}

/// Asks a person `question` (yes or no); an error when nobody can answer.
pub(crate) type Confirm<'a> = dyn Fn(&str) -> Result<bool, HalError> + 'a;

/// How a verb ended.
pub(crate) struct Ran {
    /// Each target's report, in the given order, the modules the graph
    /// added first (a `--dry-run`'s: what each would undergo).
    pub reports: Vec<Report>,
    /// The dependents restarted after ([`Followers::Beside`]), each its report.
    pub followers: Vec<Report>,
    /// Each module the graph added, and the targets it was added for.
    pub because: BTreeMap<String, Vec<String>>,
    /// A person said no to the question: nothing was done.
    pub declined: bool,
    /// From the first module's work (after the question) to the last's.
    pub took: Duration,
    /// The state each dependent it may restart after was in before anything
    /// was touched, when [`Verb::reads_followers_before`] (a rescue's rows
    /// say it); empty otherwise.
    pub followers_were: BTreeMap<String, State>,
}

impl Ran {
    /// Nothing done, nothing said.
    fn nothing(because: BTreeMap<String, Vec<String>>) -> Ran {
        Ran {
            reports: Vec::new(),
            followers: Vec::new(),
            because,
            followers_were: BTreeMap::new(),
            declined: false,
            took: Duration::ZERO,
        }
    }
}

/// Runs `call.verb` from start to end: [`check`], the targets widened by
/// the graph (a start's requirements that are not up, a stop's dependents
/// that are: [`Verb::pulls_in`], [`Verb::pushes_out`]), the one question
/// ([`Verb::confirms_all`]), the runner (critical modules first when
/// [`Verb::critical_first`]), then the dependents whose tie did not survive
/// ([`Verb::restarts_dependents`]).
pub(crate) async fn verb(node: &Node, caller: &Caller<'_>, call: Call<'_>) -> anyhow::Result<Ran> {
    let Call {
        verb,
        targets,
        jobs,
        dry_run,
    } = call;
    check(node, &targets, verb).await?;
    let Expanded { targets, because } = expand(node, caller, targets, verb, dry_run).await?;
    if dry_run || verb.only_plans() {
        let began = Instant::now();
        let reports = would::plan(node, targets, verb).await;
        for r in &reports {
            (caller.finished)(r, verb);
        }
        return Ok(Ran {
            reports,
            took: began.elapsed(),
            ..Ran::nothing(because)
        });
    }
    if let Some(ask) = caller.confirm
        && verb.confirms_all()
        && !targets.is_empty()
    {
        let question = format!("{} all {} modules?", verb.name(), targets.len());
        if !ask(&question)? {
            return Ok(Ran {
                declined: true,
                ..Ran::nothing(because)
            });
        }
    }
    let followers_were = if verb.reads_followers_before() {
        were(node, &targets).await
    } else {
        BTreeMap::new()
    };
    let began = Instant::now();
    let finished = |r: &Report| (caller.finished)(r, verb);
    let mut reports = Vec::with_capacity(targets.len());
    // `update --check` (and its `--dry-run`) says the plan of the start after its pull too.
    let planned = verb.updates().then(|| targets.clone());
    for round in rounds(node, verb, targets) {
        reports.extend(run_targets(node, caller.progress, round, verb, jobs, &finished).await);
    }
    if let (Some(how), Some(targets)) = (verb.rehearsal(), planned) {
        beside(node, &targets, &how, &mut reports).await;
    }
    let followers = match verb.restarts_dependents() {
        Some(Followers::Beside(opts)) => {
            let finished =
                |r: &Report| (caller.finished)(r, &Verb::AutoRestart { opts: opts.clone() });
            restart_dependents(node, caller.progress, &reports, &opts, jobs, &finished).await
        }
        Some(Followers::Within) => {
            after_update(node, caller.progress, &mut reports, jobs, caller.finished).await;
            Vec::new()
        }
        None => Vec::new(),
    };
    Ok(Ran {
        reports,
        followers,
        took: began.elapsed(),
        followers_were,
        ..Ran::nothing(because)
    })
}

/// The state now of each module a restart of `targets` would take with it
/// (their namespace dependents that are not targets themselves).
async fn were(node: &Node, targets: &[Target]) -> BTreeMap<String, State> {
    let names = pulled::names_of(targets);
    let more: Vec<Module> = dependents_to_restart(node, &names, &names)
        .into_iter()
        .filter_map(|d| node.inventory.get(&d).cloned())
        .collect();
    if more.is_empty() {
        return BTreeMap::new();
    }
    let read = collect_status(node, &more, Detail::Settled).await;
    read.modules
        .into_iter()
        .filter(|s| s.service.is_none())
        .map(|s| (s.name, s.state))
        .collect()
}

/// Each report's plan beside what the verb found (`update --check`): a
/// module that cannot be planned has none, its report says what the check
/// found.
async fn beside(node: &Node, targets: &[Target], how: &Rehearsal, reports: &mut [Report]) {
    let plans = plan_each(node, targets, how).await;
    for (t, plan) in targets.iter().zip(plans) {
        let Ok(plan) = plan else { continue };
        if let Some(r) = reports
            .iter_mut()
            .find(|r| r.module.name == t.module.name && r.service == t.service)
        {
            r.plan = Some(plan);
        }
    }
}

/// Refuses, before anything is touched, what `verb` cannot go on with: an
/// engine nobody can reach (exit 6, [`Verb::checks_reachable`]), a
/// `MODULE/SERVICE` whose stack has no such service (exit 4), a module graph
/// that cannot be built (exit 2, naming the cycle or the `requires`:
/// [`Verb::refuses_a_bad_graph`]). A command that asks before it calls
/// [`verb`] (rescue) checks first, so a person is not asked in vain.
pub(crate) async fn check(node: &Node, targets: &[Target], verb: &Verb) -> anyhow::Result<()> {
    if verb.checks_reachable() {
        check_reachable(node, targets, verb).await?;
    }
    check_services(node, targets).await?;
    if verb.refuses_a_bad_graph() {
        node.graph()?;
    }
    Ok(())
}

/// The targets with what the graph adds for `verb`, each added module said
/// to the caller (as what it would undergo under `--dry-run`).
async fn expand(
    node: &Node,
    caller: &Caller<'_>,
    targets: Vec<Target>,
    verb: &Verb,
    dry_run: bool,
) -> anyhow::Result<Expanded> {
    let (expanded, starting) = if verb.pulls_in() {
        (pulled::pull_in(node, targets).await?, true)
    } else if verb.pushes_out() {
        (pulled::push_out(node, targets).await?, false)
    } else {
        return Ok(Expanded {
            targets,
            because: BTreeMap::new(),
        });
    };
    for t in &expanded.targets {
        if let Some(why) = expanded.because.get(&t.module.name) {
            (caller.note)(&pulled::words(&t.module.name, why, starting, dry_run));
        }
    }
    Ok(expanded)
}

/// The rounds the targets go in, each whole before the next begins: one,
/// or for [`Verb::critical_first`] the critical modules and what they
/// require or come after among the targets, then the rest.
fn rounds(node: &Node, verb: &Verb, targets: Vec<Target>) -> Vec<Vec<Target>> {
    if !verb.critical_first() {
        return vec![targets];
    }
    let names = pulled::names_of(&targets);
    let mut first: Vec<String> = names
        .iter()
        .filter(|n| node.config.modules.get(*n).is_some_and(|m| m.critical))
        .cloned()
        .collect();
    if let Ok(graph) = node.graph() {
        let mut i = 0;
        while i < first.len() {
            for e in graph.of(&first[i]) {
                if names.contains(&e.to) && !first.contains(&e.to) {
                    first.push(e.to.clone());
                }
            }
            i += 1;
        }
    }
    let (critical, rest) = targets
        .into_iter()
        .partition(|t| first.contains(&t.module.name));
    vec![critical, rest]
}
