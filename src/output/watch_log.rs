//! The supervisor's log: one line per action on stdout, for people and the journal, or one JSON object per line.

use std::io::Write;

use serde_json::{Map, Value, json};

use crate::output::ui::{Format, Ui};
use crate::util::timefmt::Stamp;

/// One line of the log.
pub(crate) struct Entry {
    /// The module it is about; `None` for the watcher itself or the engine.
    pub module: Option<String>,
    /// What the human line starts with: the module, `docker` or `watch`.
    pub subject: String,
    /// What happened: `trouble`, `restarted`, `held`, `engine_lost`…
    pub event: &'static str,
    /// What hal does about it: `restart`, `retry`, `hold`, `reconnect`… or nothing.
    pub action: Option<&'static str>,
    pub reason: Option<String>,
    /// The human line after `subject: `.
    pub text: String,
    /// More JSON fields: `state`, `took_ms`, `exit_code`, `retry_in_ms`…
    pub extra: Vec<(&'static str, Value)>,
}

impl Entry {
    /// A line about module `m`.
    pub(crate) fn module(
        m: &str,
        event: &'static str,
        action: Option<&'static str>,
        text: String,
    ) -> Entry {
        Entry {
            module: Some(m.to_string()),
            subject: m.to_string(),
            event,
            action,
            reason: None,
            text,
            extra: Vec::new(),
        }
    }

    /// A line about the watcher or an engine (`watch`, `docker`).
    pub(crate) fn about(
        subject: &str,
        event: &'static str,
        action: Option<&'static str>,
        text: String,
    ) -> Entry {
        Entry {
            module: None,
            ..Entry::module(subject, event, action, text)
        }
    }

    pub(crate) fn reason(mut self, r: impl Into<String>) -> Entry {
        self.reason = Some(r.into());
        self
    }

    pub(crate) fn with(mut self, key: &'static str, v: impl Into<Value>) -> Entry {
        self.extra.push((key, v.into()));
        self
    }
}

/// Where the lines go.
pub(crate) struct Log {
    format: Format,
}

impl Log {
    /// The log in the printer's format.
    pub(crate) fn new(ui: &Ui) -> Log {
        Log {
            format: ui.format(),
        }
    }

    pub(crate) fn emit(&self, e: Entry) {
        // A log reader that went away must not stop the supervisor.
        let mut out = std::io::stdout().lock();
        let _ = if self.format == Format::Json {
            let mut doc = Map::new();
            doc.insert("time".into(), json!(Stamp::now().rfc3339_nanos()));
            doc.insert("module".into(), json!(e.module));
            doc.insert("event".into(), json!(e.event));
            doc.insert("action".into(), json!(e.action));
            doc.insert("reason".into(), json!(e.reason));
            for (k, v) in e.extra {
                doc.insert(k.into(), v);
            }
            crate::output::json::write_line(&mut out, &Value::Object(doc))
        } else {
            writeln!(out, "{}: {}", e.subject, e.text)
        }
        .and_then(|()| out.flush());
    }
}
