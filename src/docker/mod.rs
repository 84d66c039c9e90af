//! The Docker adapter: what hal says to a container engine and how it reads the
//! answers. The Engine API client (`engine`, bollard and hal's own GETs), the
//! compose CLI (`compose`), which engine to talk to (`endpoint`), registry
//! credentials, image references (`image_ref`), and the labels compose puts on
//! containers. It knows nothing of hal's verbs or state: only `stack/` (the
//! backend that drives it) and `state/` (where the state lives depends on the
//! endpoint) name it.

pub(crate) mod compose;
pub(crate) mod credentials;
pub(crate) mod endpoint;
pub(crate) mod engine;
pub(crate) mod image_ref;
pub(crate) mod labels;
