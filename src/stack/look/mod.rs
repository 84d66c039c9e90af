//! What the containers say: list and inspect as typed facts, each container's verdict and the module's state, whether a project is the module, and what hal saw of it.

pub(crate) mod assess;
pub(crate) mod facts;
pub(crate) mod identity;
pub(crate) mod inspects;
pub(crate) mod netns;
pub(crate) mod node;
pub(crate) mod seen;
pub(crate) mod services;
pub(crate) mod status;
