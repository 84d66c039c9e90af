//! Every file compose reads for a project run in its directory with no `-f`, found by compose's own rules, so the change check misses none.
//!
//! Read fresh at each start rather than remembered from the last compose run:
//! a few small YAML files parse in well under a millisecond, the list can never
//! be stale, and `compose config` does not say which files it read (its output
//! drops `include:`, `extends:` and `env_file`). Where hal cannot tell what
//! compose would read (a file it cannot parse, a path it cannot follow), the
//! answer is `Err`: the start then always goes through compose, which says
//! what is wrong in its own words.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use yaml_serde::Value;

use crate::module::compose_files::COMPOSE_FILES;
use crate::module::deps::Use;
use crate::module::dotenv;

/// The override files compose adds to a default file, in its order of preference.
pub(crate) const OVERRIDE_FILES: [&str; 4] = [
    "compose.override.yaml",
    "compose.override.yml",
    "docker-compose.override.yaml",
    "docker-compose.override.yml",
];

/// The variables (from the environment, else `.env`) that change which files
/// compose reads or which services it sees.
const COMPOSE_VARS: [&str; 4] = [
    "COMPOSE_FILE",
    "COMPOSE_PATH_SEPARATOR",
    "COMPOSE_PROFILES",
    "COMPOSE_PROJECT_NAME",
];

/// What compose reads for one project directory (kept between calls by
/// `known.rs`, keyed on the files and the directory listing).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Inputs {
    /// The compose files (the default file and its override, or `COMPOSE_FILE`'s), in order.
    pub compose_files: Vec<PathBuf>,
    /// Every file read: compose files, `include:` and `extends:` targets,
    /// `env_file`s, `.env`, file-backed configs and secrets; sorted, once each.
    pub files: Vec<PathBuf>,
    /// The variables compose's result depends on, with their values (`None`: unset).
    pub vars: BTreeMap<String, Option<String>>,
    /// The project name the files ask for (`name:`), if any.
    pub name: Option<String>,
    /// What the project uses from other projects, and what it offers them.
    pub outside: Outside,
    /// Paths outside the project directory that compose looks for and did
    /// not find (an included directory's `.env`, a config's file): creating
    /// one changes the project, so the cache (`known.rs`) watches them too.
    pub absent: Vec<PathBuf>,
}

impl Inputs {
    /// The project name compose would pick by itself, when it is not the
    /// directory's: `COMPOSE_PROJECT_NAME`, else `name:`.
    pub(crate) fn own_name(&self) -> Option<(&str, &'static str)> {
        if let Some(Some(n)) = self.vars.get("COMPOSE_PROJECT_NAME")
            && !n.is_empty()
        {
            return Some((n, "COMPOSE_PROJECT_NAME"));
        }
        self.name.as_deref().map(|n| (n, "name:"))
    }
}

/// The raw facts, before the project's name is known.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Outside {
    /// Each service and its `container_name`, if set.
    pub(super) services: BTreeMap<String, Option<String>>,
    /// Each network the project creates: its key and its `name:`, if set.
    pub(super) networks: BTreeMap<String, Option<String>>,
    /// What it uses that it does not create.
    pub(super) uses: Vec<Use>,
}

/// Reads `dir` as compose does when run there with no `-f`.
pub(crate) fn read(dir: &Path) -> Result<Inputs, InputError> {
    read_listed(dir, None)
}

/// [`read`], with the names of the regular files in `dir` when its listing
/// was read (`known.rs`): a name compose looks for there is looked up in it,
/// not probed with a system call each.
pub(crate) fn read_listed(dir: &Path, listing: Option<&[String]>) -> Result<Inputs, InputError> {
    let here = |name: &str| match listing {
        Some(names) => names.iter().any(|n| n == name),
        None => dir.join(name).is_file(),
    };
    let dotenv_path = dir.join(".env");
    // The variables `.env`'s values interpolate from the environment are inputs too.
    let mut vars = BTreeMap::new();
    let read_dotenv = match listing {
        Some(names) if !names.iter().any(|n| n == ".env") => {
            Err(std::io::ErrorKind::NotFound.into())
        }
        _ => std::fs::read_to_string(&dotenv_path),
    };
    let dotenv = match read_dotenv {
        Ok(text) => {
            let mut env = |name: &str| {
                let v = std::env::var(name).ok();
                vars.insert(name.to_string(), v.clone());
                v
            };
            dotenv::parse(&text, &mut env).map_err(|e| InputError::Unreadable {
                file: dotenv_path.clone(),
                line: Some(e.line),
                why: e.why.to_string(),
            })?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
        Err(e) => {
            return Err(InputError::Unreadable {
                file: dotenv_path,
                line: None,
                why: e.to_string(),
            });
        }
    };
    let mut r = Reader {
        dotenv,
        vars,
        files: Vec::new(),
        name: None,
        seen: Vec::new(),
        outside: Outside::default(),
        extending: false,
        absent: Vec::new(),
    };
    if here(".env") {
        r.files.push(dotenv_path.clone());
    }
    for v in COMPOSE_VARS {
        let value = r.lookup(v);
        r.vars.insert(v.to_string(), value);
    }
    let compose_files = r.compose_files(dir, &dotenv_path, &here)?;
    // Every default and override name present counts, not only the ones this
    // compose generation prefers (v1 and v2 differ): more is only safer.
    for f in COMPOSE_FILES.iter().chain(OVERRIDE_FILES.iter()) {
        if here(f) {
            r.files.push(dir.join(f));
        }
    }
    for f in &compose_files {
        r.document(f, dir, true)?;
    }
    let mut files = r.files;
    files.sort();
    files.dedup();
    let mut absent = r.absent;
    absent.sort();
    absent.dedup();
    Ok(Inputs {
        compose_files,
        files,
        vars: r.vars,
        name: r.name,
        outside: r.outside,
        absent,
    })
}

struct Reader {
    dotenv: BTreeMap<String, String>,
    vars: BTreeMap<String, Option<String>>,
    files: Vec<PathBuf>,
    name: Option<String>,
    /// Documents already read (an include or extends cycle ends here).
    seen: Vec<PathBuf>,
    outside: Outside,
    /// Reading an `extends:` target: its services are not the project's.
    extending: bool,
    /// Paths looked for and not found ([`Inputs::absent`]).
    absent: Vec<PathBuf>,
}

impl Reader {
    /// A variable as compose interpolates it: the environment, else `.env`
    /// (whose values are already interpolated, as compose reads them).
    fn lookup(&self, name: &str) -> Option<String> {
        std::env::var(name)
            .ok()
            .or_else(|| self.dotenv.get(name).cloned())
    }

    fn compose_files(
        &self,
        dir: &Path,
        dotenv: &Path,
        here: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<PathBuf>, InputError> {
        if let Some(Some(list)) = self
            .vars
            .get("COMPOSE_FILE")
            .filter(|v| v.as_deref().is_some_and(|s| !s.is_empty()))
        {
            let sep = match self.vars.get("COMPOSE_PATH_SEPARATOR") {
                Some(Some(s)) if !s.is_empty() => s.clone(),
                _ => ":".to_string(),
            };
            let named_by = if std::env::var_os("COMPOSE_FILE").is_some() {
                PathBuf::from("COMPOSE_FILE")
            } else {
                dotenv.to_path_buf()
            };
            let mut out = Vec::new();
            for part in list.split(sep.as_str()).filter(|p| !p.is_empty()) {
                let path = dir.join(part);
                if !path.is_file() {
                    let line = line_of(&named_by, part);
                    return Err(InputError::Missing {
                        file: path,
                        named_by,
                        line,
                        what: "compose file",
                    });
                }
                out.push(path);
            }
            return Ok(out);
        }
        let first = |names: &[&str]| names.iter().find(|f| here(f)).map(|f| dir.join(f));
        let mut out =
            vec![first(&COMPOSE_FILES).ok_or_else(|| InputError::NoComposeFile(dir.into()))?];
        out.extend(first(&OVERRIDE_FILES));
        Ok(out)
    }

    /// Reads one compose document and everything it names. `base` is where
    /// its relative paths start (the project directory for the project's own
    /// files, the document's directory for an included one).
    fn document(&mut self, file: &Path, base: &Path, own: bool) -> Result<(), InputError> {
        if self.seen.iter().any(|s| s == file) {
            return Ok(());
        }
        self.seen.push(file.to_path_buf());
        self.files.push(file.to_path_buf());
        let text = std::fs::read_to_string(file).map_err(|e| InputError::Unreadable {
            file: file.into(),
            line: None,
            why: e.to_string(),
        })?;
        let mut doc: Value = yaml_serde::from_str(&text).map_err(|e| InputError::Unreadable {
            file: file.into(),
            line: e.location().map(|l| l.line()),
            why: e.to_string(),
        })?;
        // Every variable the document interpolates anywhere (image tags,
        // commands, environment values) is an input, not only those in paths.
        self.scan(&doc);
        let _ = doc.apply_merge();
        if own && let Some(n) = doc.get("name").and_then(Value::as_str) {
            self.name = Some(self.interpolate(n));
        }
        let named = Named { file, text: &text };
        if !self.extending {
            self.outside(&doc, file);
        }
        if let Some(Value::Sequence(items)) = doc.get("include") {
            for item in items {
                let (paths, envs) = match item {
                    Value::Mapping(_) => (strings(item.get("path")), strings(item.get("env_file"))),
                    other => (strings(Some(other)), Vec::new()),
                };
                for p in &paths {
                    let target = self.path(base, p);
                    named.must_exist(&target, p, "include target")?;
                    let dir = target.parent().unwrap_or(base).to_path_buf();
                    let dotenv = dir.join(".env");
                    if envs.is_empty() {
                        if dotenv.is_file() {
                            self.files.push(dotenv);
                        } else {
                            self.absent.push(dotenv);
                        }
                    }
                    self.document(&target, &dir, false)?;
                }
                for e in &envs {
                    let target = self.path(base, e);
                    named.must_exist(&target, e, "env_file")?;
                    self.files.push(target);
                }
            }
        }
        if let Some(Value::Mapping(services)) = doc.get("services") {
            for (_, s) in services {
                self.service(s, base, &named)?;
            }
        }
        for section in ["configs", "secrets"] {
            if let Some(Value::Mapping(items)) = doc.get(section) {
                for (_, item) in items {
                    if let Some(f) = item.get("file").and_then(Value::as_str) {
                        let target = self.path(base, f);
                        if target.is_file() {
                            self.files.push(target);
                        } else {
                            self.absent.push(target);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn service(&mut self, s: &Value, base: &Path, named: &Named<'_>) -> Result<(), InputError> {
        match s.get("env_file") {
            Some(Value::Sequence(items)) => {
                for item in items {
                    let (path, required) = match item {
                        Value::Mapping(_) => (
                            item.get("path").and_then(Value::as_str),
                            item.get("required")
                                .and_then(Value::as_bool)
                                .unwrap_or(true),
                        ),
                        other => (other.as_str(), true),
                    };
                    if let Some(p) = path {
                        self.env_file(base, p, required, named)?;
                    }
                }
            }
            Some(Value::String(p)) => self.env_file(base, p, true, named)?,
            _ => {}
        }
        if let Some(f) = s
            .get("extends")
            .and_then(|e| e.get("file"))
            .and_then(Value::as_str)
        {
            let target = self.path(base, f);
            named.must_exist(&target, f, "extends file")?;
            let dir = target.parent().unwrap_or(base).to_path_buf();
            let was = std::mem::replace(&mut self.extending, true);
            let read = self.document(&target, &dir, false);
            self.extending = was;
            read?;
        }
        Ok(())
    }

    fn env_file(
        &mut self,
        base: &Path,
        p: &str,
        required: bool,
        named: &Named<'_>,
    ) -> Result<(), InputError> {
        let target = self.path(base, p);
        if required {
            named.must_exist(&target, p, "env_file")?;
        }
        // An optional one that is missing counts too: creating it changes the project.
        self.files.push(target);
        Ok(())
    }

    /// A path as written in a compose file: interpolated, relative to `base`.
    fn path(&mut self, base: &Path, written: &str) -> PathBuf {
        let p = self.interpolate(written);
        let p = match p.strip_prefix("~/") {
            Some(rest) => {
                std::env::var_os("HOME").map_or(PathBuf::from(&p), |h| Path::new(&h).join(rest))
            }
            None => PathBuf::from(p),
        };
        base.join(p)
    }
}

/// The document that names a path, for an error that points at the line.
struct Named<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Named<'_> {
    fn must_exist(
        &self,
        target: &Path,
        written: &str,
        what: &'static str,
    ) -> Result<(), InputError> {
        if target.exists() {
            return Ok(());
        }
        Err(InputError::Missing {
            file: target.into(),
            named_by: self.file.into(),
            line: self
                .text
                .lines()
                .position(|l| l.contains(written))
                .map(|i| i + 1),
            what,
        })
    }
}

/// The first line of `file` that mentions `what` (1-based).
fn line_of(file: &Path, what: &str) -> Option<usize> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().position(|l| l.contains(what)).map(|i| i + 1)
}

/// A string or a list of strings.
fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Sequence(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

mod input_error;
mod interpolate;
pub(crate) use input_error::InputError;
#[cfg(test)]
mod tests;
pub(crate) mod ties;
