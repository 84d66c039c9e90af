//! The runner's face: a verb on many modules from start to end (`verb`), the node it works on (`Node`), many modules' status, and all that the layers above may name of `run/`. Its children (in `run/`) are private and use each other, never this file (ARCHITECTURE.md, `run/`).

mod act;
mod adopt;
mod backend;
mod call;
mod dependents;
mod ended;
mod follow;
mod graph;
mod node;
mod node_state;
mod pulled;
mod rehearsal;
mod report;
mod runner;
mod settle;
mod status;
mod steps;
mod unfinished;
mod update;
mod verb;
mod waiting;
mod would;

// The node every command and the watch work on.
pub(crate) use node::Node;

// A verb from start to end: checked, widened by the graph, run, followed.
pub(crate) use call::{Call, Caller, check, verb};
pub(crate) use verb::{UpdateOpts, Verb};

// The runner alone, for the supervisor's repairs (one module, no graph step),
// and the check `status MODULE/SERVICE` shares.
pub(crate) use runner::{check_services, run};

// A verb's result per module.
pub(crate) use report::{Report, without_step};

// Many modules' status, and the node's state from them.
pub(crate) use node_state::node_summary;
pub(crate) use status::{collect_status, collect_status_of};

// `hal adopt`'s one step under a module's lock.
pub(crate) use adopt::adopt_stack;
