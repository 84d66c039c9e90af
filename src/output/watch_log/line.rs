//! One line of the supervisor's log before it is written: the human line's subject and text, and the JSON line's keys.

use std::time::Duration;

use serde_json::{Map, Value, json};

/// One line of the log, before it is written.
#[derive(Debug, Default)]
pub(super) struct WatchLine {
    /// The module it is about; `None` for the watcher itself or the engine.
    pub module: Option<String>,
    /// What the human line starts with: the module, the engine or `watch`.
    pub subject: String,
    /// What happened: `trouble`, `restarted`, `held`, `engine_lost`…
    pub event: &'static str,
    /// What hal does about it: `restart`, `retry`, `hold`, `reconnect`… or nothing.
    pub action: Option<&'static str>,
    pub reason: Option<String>,
    /// The human line after `subject: `.
    pub text: String,
    /// The JSON line's other keys: `state`, `took_ms`, `retry_in_ms`…
    pub extra: Vec<(&'static str, Value)>,
}

impl WatchLine {
    pub(super) fn module(
        m: &str,
        event: &'static str,
        action: Option<&'static str>,
        text: String,
    ) -> WatchLine {
        WatchLine {
            module: Some(m.to_string()),
            subject: m.to_string(),
            event,
            action,
            reason: None,
            text,
            extra: Vec::new(),
        }
    }

    pub(super) fn about(
        subject: &str,
        event: &'static str,
        action: Option<&'static str>,
        text: String,
    ) -> WatchLine {
        WatchLine {
            module: None,
            ..WatchLine::module(subject, event, action, text)
        }
    }

    pub(super) fn reason(mut self, r: impl Into<String>) -> WatchLine {
        self.reason = Some(r.into());
        self
    }

    pub(super) fn with(mut self, key: &'static str, v: impl Into<Value>) -> WatchLine {
        self.extra.push((key, v.into()));
        self
    }

    /// The JSON line: `time`, `module`, `event`, `action`, `reason`, then the event's own keys.
    pub(super) fn json(self, time: String) -> Value {
        let mut doc = Map::new();
        doc.insert("time".into(), json!(time));
        doc.insert("module".into(), json!(self.module));
        doc.insert("event".into(), json!(self.event));
        doc.insert("action".into(), json!(self.action));
        doc.insert("reason".into(), json!(self.reason));
        for (k, v) in self.extra {
            doc.insert(k.into(), v);
        }
        Value::Object(doc)
    }
}

pub(super) fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

pub(super) fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}
