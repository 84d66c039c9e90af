//! Compose's variable interpolation in the documents of a project, as far as the change check needs it: the value a string reads as, and which variables it read.

use yaml_serde::Value;

use super::Reader;
use crate::module::interpolate::interpolate;

impl Reader {
    /// Reads every string of a document (keys and values) as compose
    /// interpolates it, so that each variable it names joins `vars`.
    pub(super) fn scan(&mut self, v: &Value) {
        match v {
            Value::String(s) => {
                self.interpolate(s);
            }
            Value::Sequence(items) => items.iter().for_each(|i| self.scan(i)),
            Value::Mapping(m) => {
                for (k, v) in m {
                    self.scan(k);
                    self.scan(v);
                }
            }
            Value::Tagged(t) => self.scan(&t.value),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// A string as compose interpolates it (`module::interpolate`), each
    /// variable read joining `vars`. One compose refuses (`${X:?}` with `X`
    /// unset, a malformed `${`) reads as written: compose says what is wrong
    /// when it runs, and the variables read so far are inputs already.
    pub(super) fn interpolate(&mut self, s: &str) -> String {
        interpolate(s, &mut |name| self.var(name)).unwrap_or_else(|_| s.to_string())
    }

    fn var(&mut self, name: &str) -> Option<String> {
        let v = self.lookup(name);
        self.vars.insert(name.to_string(), v.clone());
        v
    }
}
