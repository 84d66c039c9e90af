//! What every answer is to the printer: a value that serializes for scripts and renders for people in the printer's style.

use serde::Serialize;

/// The version of every JSON document hal prints. Fields are added, never renamed.
pub(crate) const SCHEMA: u32 = 1;

/// How text for people looks, decided once by the printer from the flags and
/// the terminals; a command never chooses it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Style {
    /// Colour in the text being rendered (stdout's decision, or stderr's for
    /// text bound there: see [`Style::for_stderr`]).
    pub color: bool,
    /// Colour on stderr.
    pub color_err: bool,
    /// `-q`: the answer is the exit code; a view shows only what needs a person.
    pub quiet: bool,
}

impl Style {
    /// The style of text printed on stderr: its colour is stderr's.
    pub(crate) fn for_stderr(self) -> Style {
        Style {
            color: self.color_err,
            ..self
        }
    }
}

/// One answer of a command: the JSON document scripts read (its `Serialize`),
/// and the text people read, in the printer's style.
pub(crate) trait View: Serialize {
    fn human(&self, style: &Style) -> String;

    /// The answer in node_exporter's textfile format, for one that has it
    /// (`status`, the one command whose CLI offers it).
    fn prometheus(&self) -> Option<String> {
        None
    }
}

/// Rows of an answer about modules, which people read as one table.
pub(crate) trait Rows: Serialize + Sized {
    fn table(rows: &[Self], style: &Style) -> String;
}

/// `{"schema": 1, "modules": [...]}`: the answer of every command about
/// modules; people read its rows' table.
#[derive(Serialize)]
pub(crate) struct Modules<'a, T> {
    schema: u32,
    modules: &'a [T],
}

impl<'a, T> Modules<'a, T> {
    pub(crate) fn new(modules: &'a [T]) -> Modules<'a, T> {
        Modules {
            schema: SCHEMA,
            modules,
        }
    }
}

impl<T: Rows> View for Modules<'_, T> {
    fn human(&self, style: &Style) -> String {
        T::table(self.modules, style)
    }
}

/// The report of a plan carried out (rescue, adopt): the document of
/// [`Modules`]; people read its table, or nothing under `-q` (each failure
/// was said as it happened).
#[derive(Serialize)]
#[serde(transparent)]
pub(crate) struct PlanReport<'a, T>(Modules<'a, T>);

impl<'a, T> PlanReport<'a, T> {
    pub(crate) fn new(rows: &'a [T]) -> PlanReport<'a, T> {
        PlanReport(Modules::new(rows))
    }
}

impl<T: Rows> View for PlanReport<'_, T> {
    fn human(&self, style: &Style) -> String {
        if style.quiet {
            String::new()
        } else {
            self.0.human(style)
        }
    }
}
