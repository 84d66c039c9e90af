//! Why a service's configuration differs from the one its containers were made from, key by key: the file, the key and both values (secrets masked), read against the applied record.

use std::collections::BTreeMap;
use std::path::Path;

use crate::module::dotenv;
use crate::module::secret_names::looks_secret;
use crate::module::service_action::Why;
use crate::stack::project::inputs;
use crate::state::applied::mask;

/// The files a project's configuration comes from, as they are now: where a
/// changed key is said to come from.
#[derive(Debug, Default)]
pub(crate) struct ConfigSources {
    /// Each compose file: its name (relative to the module) and its text.
    compose: Vec<(String, String)>,
    /// The variables `.env` sets.
    dotenv: BTreeMap<String, String>,
    /// Each other file that reads as an env file (an `env_file`): name and variables.
    env_files: Vec<(String, BTreeMap<String, String>)>,
}

impl ConfigSources {
    /// The module's files as compose reads them (none when hal cannot tell).
    pub(crate) fn of_module(dir: &Path) -> ConfigSources {
        let Ok(found) = inputs::read(dir) else {
            return ConfigSources::default();
        };
        let name = |p: &Path| {
            p.strip_prefix(dir)
                .unwrap_or(p)
                .to_string_lossy()
                .into_owned()
        };
        let mut env = |v: &str| std::env::var(v).ok();
        let mut out = ConfigSources::default();
        for f in &found.compose_files {
            if let Ok(text) = std::fs::read_to_string(f) {
                out.compose.push((name(f), text));
            }
        }
        for f in &found.files {
            let yaml = f
                .extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "json");
            if yaml || found.compose_files.contains(f) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(f) else {
                continue;
            };
            let Ok(vars) = dotenv::parse(&text, &mut env) else {
                continue;
            };
            if f == &dir.join(".env") {
                out.dotenv = vars;
            } else {
                out.env_files.push((name(f), vars));
            }
        }
        out
    }

    /// Where a changed key of the service comes from: an `env_file`, `.env`
    /// (and the variable), or a compose file.
    fn origin(&self, key: &str, new: &str) -> String {
        let first = self
            .compose
            .first()
            .map_or_else(|| "the compose file".to_string(), |(n, _)| n.clone());
        if let Some(var) = key.strip_prefix("environment.") {
            // Written in a compose file: that file, or `.env` if it fills it in.
            for (file, text) in &self.compose {
                for line in text.lines() {
                    let t = line.trim_start().trim_start_matches(['-', ' ', '"', '\'']);
                    let named = t
                        .strip_prefix(var)
                        .is_some_and(|rest| rest.starts_with(':') || rest.starts_with('='));
                    if named {
                        return self.through_dotenv(line).unwrap_or_else(|| file.clone());
                    }
                }
            }
            if let Some((file, _)) = self
                .env_files
                .iter()
                .rev()
                .find(|(_, vars)| vars.contains_key(var))
            {
                return file.clone();
            }
            return first;
        }
        // Another key: `.env` when a variable it sets, used under that key, gives the new value.
        let top = key.split('.').next().unwrap_or(key);
        for (file, text) in &self.compose {
            let lines = block(text, top);
            if lines.is_empty() {
                continue;
            }
            for line in &lines {
                let via = vars_in(line).into_iter().find(|v| {
                    self.dotenv
                        .get(v)
                        .is_some_and(|value| !value.is_empty() && new.contains(value.as_str()))
                });
                if let Some(v) = via {
                    return format!(".env ({v})");
                }
            }
            return file.clone();
        }
        first
    }

    /// `.env (VAR)` when `line` uses a variable `.env` sets.
    fn through_dotenv(&self, line: &str) -> Option<String> {
        vars_in(line)
            .into_iter()
            .find(|v| self.dotenv.contains_key(v))
            .map(|v| format!(".env ({v})"))
    }
}

impl ConfigSources {
    /// Each variable a compose file uses with no default that is set
    /// neither in the environment nor in `.env` (compose puts a blank string).
    pub(crate) fn unset(&self) -> Vec<Why> {
        let mut out: Vec<Why> = Vec::new();
        for (file, text) in &self.compose {
            for (n, line) in text.lines().enumerate() {
                if line.trim_start().starts_with('#') {
                    continue;
                }
                for name in bare_vars(line) {
                    if std::env::var_os(&name).is_some() || self.dotenv.contains_key(&name) {
                        continue;
                    }
                    let detail = format!(
                        "{file}:{}: ${{{name}}} is not set and has no default (compose would use a blank string)",
                        n + 1
                    );
                    if !out.iter().any(|w| w.detail == detail) {
                        out.push(Why::new("unset", detail));
                    }
                }
            }
        }
        out
    }
}

/// The variables a line interpolates with no default nor error (`$VAR`,
/// `${VAR}`; not `$$VAR`, compose's literal `$`).
fn bare_vars(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' {
            i += 1;
            continue;
        }
        if b.get(i + 1) == Some(&b'$') {
            i += 2;
            continue;
        }
        let braced = b.get(i + 1) == Some(&b'{');
        let start = i + 1 + usize::from(braced);
        let mut end = start;
        while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
            end += 1;
        }
        let plain = !braced || b.get(end) == Some(&b'}');
        if end > start && plain {
            out.push(line[start..end].to_string());
        }
        i = end.max(i + 1);
    }
    out
}

/// The lines of `top:` (the key's line and those indented under it) in a compose text.
fn block<'a>(text: &'a str, top: &str) -> Vec<&'a str> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out = Vec::new();
    let mut at: Option<usize> = None;
    for line in text.lines() {
        match at {
            Some(i) if line.trim().is_empty() || indent(line) > i => out.push(line),
            _ => {
                at = None;
                let t = line.trim_start();
                if t.starts_with(&format!("{top}:")) {
                    at = Some(indent(line));
                    out.push(line);
                }
            }
        }
    }
    out
}

/// The variables a line interpolates (`$VAR`, `${VAR}`, `${VAR:-x}`…).
fn vars_in(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find('$') {
        rest = &rest[i + 1..];
        let body = rest.strip_prefix('{').unwrap_or(rest);
        let name: String = body
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

/// The reasons a service's configuration changed: one per key whose value
/// differs between `old` (the record, masked) and `new` (as resolved now).
pub(crate) fn changed_keys(
    old: &serde_json::Value,
    new: &serde_json::Value,
    sources: &ConfigSources,
) -> Vec<Why> {
    let mut was = BTreeMap::new();
    let mut now = BTreeMap::new();
    leaves("", old, &mut was);
    leaves("", &mask(new, false), &mut now);
    let mut keys: Vec<&String> = was.keys().chain(now.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for key in keys {
        let (a, b) = (was.get(key), now.get(key));
        if a == b {
            continue;
        }
        let shown = |v: Option<&String>| v.map_or("(unset)".to_string(), |s| s.clone());
        let raw_new = raw(new, key).unwrap_or_default();
        let origin = sources.origin(key, &raw_new);
        let detail = if looks_secret(key) || looks_secret(&origin) {
            format!("{origin}: {key}: *** -> *** (masked)")
        } else {
            format!("{origin}: {key}: {} -> {}", shown(a), shown(b))
        };
        out.push(Why::new("config", detail));
    }
    out
}

/// A key's value in `v` as shown (`None`: absent).
fn raw(v: &serde_json::Value, key: &str) -> Option<String> {
    let mut all = BTreeMap::new();
    leaves("", v, &mut all);
    all.remove(key)
}

/// Every key of a configuration, `a.b.c`, with its value as shown: objects
/// are walked, a list or a scalar is one value (compact JSON, a string bare).
fn leaves(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, String>) {
    use serde_json::Value;
    match v {
        Value::Object(fields) if !fields.is_empty() => {
            for (k, item) in fields {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(&key, item, out);
            }
        }
        Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sources() -> ConfigSources {
        ConfigSources {
            compose: vec![(
                "compose.yaml".into(),
                "services:\n  app:\n    image: app:${TAG}\n    environment:\n      FOO: ${FOO}\n      X: y\n    command: [\"sleep\", \"1\"]\n".into(),
            )],
            dotenv: [("TAG".to_string(), "2".to_string()), ("FOO".to_string(), "baz".to_string())]
                .into(),
            env_files: vec![(
                "app.env".into(),
                [("A".to_string(), "2".to_string()), ("DB_PASSWORD".to_string(), "n".to_string())].into(),
            )],
        }
    }

    #[test]
    fn a_variable_with_no_default_and_no_value_would_fail() {
        assert_eq!(
            bare_vars("a: ${A} $B $$C ${D:-x} ${E-y} ${F:?no}"),
            ["A", "B"]
        );
        let mut s = sources();
        s.compose[0]
            .1
            .push_str("    labels:\n      x: ${HAL_TEST_NOT_SET_ANYWHERE}\n");
        let why = s.unset();
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(
            why[0]
                .detail
                .starts_with("compose.yaml:9: ${HAL_TEST_NOT_SET_ANYWHERE} is not set")
        );
    }

    #[test]
    fn each_changed_key_names_its_file_and_both_values() {
        let old = mask(
            &json!({"command":["sleep","1"],"environment":{"A":"1","DB_PASSWORD":"o","FOO":"bar","X":"y"},"image":"app:1"}),
            false,
        );
        let new = json!({"command":["sleep","2"],"environment":{"A":"2","DB_PASSWORD":"n","FOO":"baz","X":"y"},"image":"app:2"});
        let why: Vec<String> = changed_keys(&old, &new, &sources())
            .into_iter()
            .map(|w| w.detail)
            .collect();
        assert_eq!(
            why,
            [
                r#"compose.yaml: command: ["sleep","1"] -> ["sleep","2"]"#,
                "app.env: environment.A: 1 -> 2",
                "app.env: environment.DB_PASSWORD: *** -> *** (masked)",
                ".env (FOO): environment.FOO: bar -> baz",
                ".env (TAG): image: app:1 -> app:2",
            ]
        );
    }
}
