//! What hal sees of a module's containers goes into its ledger (`state::ledger`): from listings and events it has anyway, and at a stop each one's log driver, so `hal logs` finds every generation in the journal by its id.

use std::collections::BTreeMap;

use crate::docker::engine::{Engine, EngineEvent, Inspected, Listed};
use crate::docker::labels::Identity;
use crate::stack::look::inspects::Inspects;
use crate::state::Store;
use crate::state::ledger::Sighting;
use crate::util::timefmt::Stamp;

/// A container of a compose project (never a one-off `run`), and its module.
fn of_identity(
    who: Option<Identity>,
    id: &str,
    created: Stamp,
    journal: Option<bool>,
) -> Option<(String, Sighting)> {
    let who = who.filter(|w| !w.oneoff && !id.is_empty())?;
    Some((
        who.project,
        Sighting {
            id: id.to_string(),
            service: who.service,
            number: who.number,
            created,
            journal,
        },
    ))
}

/// Whether an inspect says the container logs to the journal (`None`: it did not say).
pub(crate) fn journal_of(i: Option<&Inspected>) -> Option<bool> {
    i.and_then(|i| i.log.as_ref()).map(|l| l.to_journal())
}

/// A listed container and its module.
pub(crate) fn of_listed(c: &Listed, journal: Option<bool>) -> Option<(String, Sighting)> {
    of_identity(c.identity.clone(), &c.id, c.created, journal)
}

/// The container a start event is about, and its module.
pub(crate) fn seen_in_event(ev: &EngineEvent) -> Option<(String, Sighting)> {
    let id = ev.id.as_deref()?;
    of_identity(Identity::of(&ev.attributes), id, ev.at.whole_second(), None)
}

/// Sightings grouped by module.
pub(crate) fn seen_by_module(
    seen: impl IntoIterator<Item = (String, Sighting)>,
) -> Vec<(String, Vec<Sighting>)> {
    let mut out: BTreeMap<String, Vec<Sighting>> = BTreeMap::new();
    for (m, s) in seen {
        out.entry(m).or_default().push(s);
    }
    out.into_iter().collect()
}

/// Adds a listing's containers (of the projects `keep` accepts) to their
/// modules' ledgers: one index read when none is new (`state::ledger::index`).
pub(crate) async fn listed(
    store: &Store,
    list: &[Listed],
    keep: impl Fn(&str) -> bool,
) -> anyhow::Result<()> {
    let seen = list
        .iter()
        .filter_map(|c| of_listed(c, None))
        .filter(|(m, _)| keep(m));
    store.saw_listed(seen_by_module(seen)).await
}

/// Before a stop removes them: the module's listed containers, each with
/// whether it logs to the journal (an inspect of those the ledger cannot say
/// yet, through what `inspects` was told already), so their lines are found
/// after they are gone.
pub(crate) async fn before_stop(
    engine: &Engine,
    store: &Store,
    module: &str,
    list: &[Listed],
    inspects: &Inspects,
) -> anyhow::Result<()> {
    let known = store.ledger(module);
    let mut seen = Vec::new();
    for c in list {
        let told = known
            .containers
            .iter()
            .find(|g| g.id == c.id)
            .and_then(|g| g.journal);
        let journal = match told {
            Some(j) => Some(j),
            None => journal_of(inspects.of(engine, &c.id).await?.as_ref()),
        };
        seen.extend(of_listed(c, journal).filter(|(m, _)| m == module));
    }
    store.saw_listed(seen_by_module(seen)).await
}
