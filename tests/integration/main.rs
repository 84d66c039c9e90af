//! hal's integration tests: one crate, a module per area.
//!
//! The tests drive the real `hal` binary against the real Docker engine (and a
//! real systemd in a container). Outside CI a test whose engine is missing
//! prints `SKIP <test>: <why>` and passes; with `CI=true` it fails instead.
//! Every test cleans up the containers and networks it made: each rig has a
//! project prefix of its own.
//!
//! All tests run in this one process, two at a time on a small machine: a
//! test that disturbs the whole engine takes it alone (`rig::engine_alone`),
//! and one that changes the shared systemd machine takes that alone
//! (`systemd::scene_alone`).
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test crate exports nothing: `pub` there only shares the rig between areas.
#![allow(unreachable_pub)]

mod lib_paths;
mod rig;

mod addressing;
mod adopt;
mod architecture;
mod argv;
mod auto_update;
mod cli_words;
mod completion;
mod compose_rules;
mod config_manual;
mod corpus;
mod daemon_restart;
mod deps;
mod doc_names;
mod doctor;
mod engine_calls;
mod episodes;
mod fastpath;
mod faults;
mod fleet;
mod fleet_ansible;
mod follow;
mod full_state;
mod guide;
mod help;
mod history;
mod host_modules;
mod identity;
mod install;
mod journal_access;
mod limits;
mod logs;
mod logs_when;
mod man_exit_status;
mod manpages;
mod needs;
mod node_state;
mod ordering;
mod output;
mod plan;
mod podman;
mod props;
mod pulls;
mod quarantine;
mod repair;
mod rescue;
mod shared_state;
mod soak;
mod stacks;
mod start_bounds;
mod status_cache;
mod status_facts;
mod status_reads;
mod status_truth;
mod test_tidy;
mod tls;
mod units_in_systemd;
mod update;
mod update_txn;
mod watch;
