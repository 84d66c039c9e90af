//! What a verb tells while it works: the backends report here, the printer decides whether and how to draw it.

/// Where a backend reports what it is doing. Implementations must be cheap:
/// they are called from the middle of a start.
pub(crate) trait Progress: Send + Sync {
    /// `module` is now doing `what` (`starting`, `waiting (service db starting)`).
    fn step(&self, module: &str, what: &str);
    /// A pull moved: `layer` of `module`'s image is at `status`, `current` of `total` bytes.
    fn layer(&self, module: &str, layer: &str, status: &str, bytes: Option<(u64, u64)>);
    /// `module`'s work is over: whatever was drawn for it goes away.
    fn done(&self, module: &str);
}

/// Progress nobody sees: for the backends' unit tests.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct Silent;

#[cfg(test)]
impl Progress for Silent {
    fn step(&self, _: &str, _: &str) {}
    fn layer(&self, _: &str, _: &str, _: &str, _: Option<(u64, u64)>) {}
    fn done(&self, _: &str) {}
}
