//! Compose's variable interpolation, as far as the change check needs it: the value a string reads as, and which variables it read.

use yaml_serde::Value;

use super::Reader;

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

    /// Compose's interpolation: `$VAR`, `${VAR}`, `${VAR:-default}`,
    /// `${VAR-default}`, `$$`. Each variable read joins `vars`.
    pub(super) fn interpolate(&mut self, s: &str) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            if let Some(r) = after.strip_prefix('$') {
                out.push('$');
                rest = r;
            } else if let Some(r) = after.strip_prefix('{') {
                let end = r.find('}').unwrap_or(r.len());
                let expr = &r[..end];
                let (name, default, colon) = match expr.find([':', '-', '?', '+']) {
                    Some(j) => {
                        let colon = expr[j..].starts_with(':');
                        let op = if colon { &expr[j + 1..] } else { &expr[j..] };
                        let default = op.strip_prefix('-').unwrap_or("");
                        (&expr[..j], Some(default), colon)
                    }
                    None => (expr, None, false),
                };
                let value = self.var(name);
                match (value, default) {
                    (Some(v), Some(d)) if colon && v.is_empty() => out.push_str(d),
                    (Some(v), _) => out.push_str(&v),
                    (None, Some(d)) => out.push_str(d),
                    (None, None) => {}
                }
                rest = r.get(end + 1..).unwrap_or("");
            } else {
                let len = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                if len == 0 {
                    out.push('$');
                } else if let Some(v) = self.var(&after[..len]) {
                    out.push_str(&v);
                }
                rest = &after[len..];
            }
        }
        out.push_str(rest);
        out
    }

    fn var(&mut self, name: &str) -> Option<String> {
        let v = self.lookup(name);
        self.vars.insert(name.to_string(), v.clone());
        v
    }
}
