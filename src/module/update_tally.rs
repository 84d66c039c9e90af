//! What `hal update` left of a module, as the metrics say it: whether its last check found another image, and how many updates were rolled back (the state keeps them; the printer reads only this).

/// One module's update figures, taken from hal's state (`Store::update_tallies`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct UpdateTally {
    /// Whether the last `hal update --check` found another image for some
    /// service; `None` when it was never checked, or when its last check
    /// could not ask a registry.
    pub available: Option<bool>,
    /// Updates hal rolled back, ever.
    pub rollbacks: u64,
    /// The services whose rolled-back digest is quarantined.
    pub quarantined: Vec<String>,
}
