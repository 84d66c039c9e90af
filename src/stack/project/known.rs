//! What compose reads in each module directory, kept between calls (`compose-models.json`), so that a command on an unchanged node stats each module's files and parses none.
//!
//! An entry is trusted only while everything it was read from is as it was:
//! the module directory (device, inode, mtime and ctime in ns: a file added,
//! removed or renamed there changes them), every file read (device, inode,
//! size, mtime, ctime: an edit at the same size within the same second still
//! moves ctime), the paths outside the directory compose looked for and did not
//! find, and the environment variables the result depends on. A stamp taken
//! less than [`SETTLE`] before the read is not kept (a second change within the
//! file system's clock tick could leave it unchanged). The file is written
//! through the store only when an entry changed; one that does not read, or
//! was written by another version, schema or user, is ignored and rebuilt.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::module::compose_files::COMPOSE_FILES;
use crate::stack::project::inputs::{InputError, Inputs, OVERRIDE_FILES, read_listed};
use crate::state::Store;

/// The cache file in the state directory.
const CACHE: &str = "compose-models.json";
/// Its layout; another is ignored.
const SCHEMA: u32 = 1;
/// How old a stamp must be to be kept: more than the file system's clock tick.
const SETTLE: Duration = Duration::from_secs(1);
/// Variables read whatever the files say (`~/` in a path).
const ALWAYS: [&str; 1] = ["HOME"];

/// What `stat` says of a file, as far as a change goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct FileStamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: i128,
    ctime: i128,
}

impl FileStamp {
    /// One `stat` (following a link); `None` when there is nothing there.
    fn of(path: &Path) -> Option<FileStamp> {
        let m = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            ctime: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
        })
    }

    /// Changed more than `settle` before `since`: safe to key on.
    fn settled(&self, since: i128, settle: Duration) -> bool {
        self.ctime < since - settle.as_nanos() as i128 && self.mtime < since
    }
}

/// The names compose looks for in a module directory that are regular files
/// there, as one read of its listing found them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Listing {
    stamp: FileStamp,
    names: Vec<String>,
}

/// A module directory's resolved inputs and what they were read from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Model {
    /// The directory's stamp the model was read with.
    dir: FileStamp,
    /// Every file read, or looked for and not found (`None`), with its stamp.
    files: Vec<(PathBuf, Option<FileStamp>)>,
    /// The environment variables the result depends on, as they were.
    env: BTreeMap<String, Option<String>>,
    inputs: Inputs,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct ModelEntry {
    listing: Option<Listing>,
    model: Option<Model>,
    /// What compose's `config` said of the project while the model holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    config: Option<ComposeSaid>,
}

/// `compose config --format json`'s text, and the compose and project it is of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct ComposeSaid {
    compose: String,
    project: String,
    text: String,
}

/// What this process found of one directory: something new, or that the
/// cache's entry still holds (carried over when the cache is written, never
/// copied on a read: an unchanged node clones nothing).
#[derive(Debug, Default)]
struct Noted {
    /// A listing read anew and kept.
    listing: Option<Listing>,
    /// A model read anew and kept.
    model: Option<Model>,
    /// The cache's listing still holds.
    listing_held: bool,
    /// Compose's `config` text, run while the model held.
    config: Option<ComposeSaid>,
}

/// The cache file.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
struct Doc {
    schema: u32,
    hal: String,
    uid: u32,
    modules: BTreeMap<PathBuf, ModelEntry>,
}

impl Doc {
    fn empty() -> Doc {
        Doc {
            schema: SCHEMA,
            hal: env!("CARGO_PKG_VERSION").to_string(),
            uid: crate::util::sys::euid(),
            modules: BTreeMap::new(),
        }
    }

    fn is_ours(&self) -> bool {
        let ours = Doc::empty();
        self.schema == ours.schema && self.hal == ours.hal && self.uid == ours.uid
    }
}

/// The module directories' models of one read of the node: the cache as
/// read, and what this process found (shared by the threads that read many).
pub(crate) struct Models {
    was: Doc,
    now: Mutex<BTreeMap<PathBuf, Noted>>,
    /// Each directory's stamp, taken once per process.
    seen: Mutex<BTreeMap<PathBuf, Option<FileStamp>>>,
    /// Directories whose kept model no longer holds: not carried over.
    stale: Mutex<std::collections::BTreeSet<PathBuf>>,
    /// How old a stamp must be to be kept ([`SETTLE`]).
    settle: Duration,
}

impl Models {
    /// The cache in `store`'s directory; empty when it is missing or not ours.
    pub(crate) fn read(store: &Store) -> Models {
        let was = store
            .read_cache::<Doc>(CACHE)
            .filter(Doc::is_ours)
            .unwrap_or_else(Doc::empty);
        Models::from(was)
    }

    fn from(was: Doc) -> Models {
        Models {
            was,
            now: Mutex::new(BTreeMap::new()),
            seen: Mutex::new(BTreeMap::new()),
            stale: Mutex::new(std::collections::BTreeSet::new()),
            settle: SETTLE,
        }
    }

    fn dir_stamp(&self, dir: &Path) -> Option<FileStamp> {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        *seen
            .entry(dir.to_path_buf())
            .or_insert_with(|| FileStamp::of(dir))
    }

    fn was(&self, dir: &Path) -> Option<&ModelEntry> {
        self.was.modules.get(dir)
    }

    fn note(&self, dir: &Path, f: impl FnOnce(&mut Noted)) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        f(now.entry(dir.to_path_buf()).or_default());
    }

    /// The names compose looks for that are regular files in `dir`: the
    /// listing kept when the directory is as it was (one `stat`), else read
    /// once. `None` when `dir` cannot be read.
    pub(crate) fn listing(&self, dir: &Path) -> Option<Vec<String>> {
        let stamp = self.dir_stamp(dir)?;
        if let Some(l) = self.was(dir).and_then(|e| e.listing.as_ref())
            && l.stamp == stamp
        {
            self.note(dir, |e| e.listing_held = true);
            return Some(l.names.clone());
        }
        let since = now_ns();
        let (names, sure) = read_listing(dir)?;
        if sure && stamp.settled(since, self.settle) {
            let l = Listing {
                stamp,
                names: names.clone(),
            };
            self.note(dir, |e| e.listing = Some(l));
        }
        Some(names)
    }

    /// What compose reads in `dir` as the cache keeps it, when nothing it
    /// was read from changed (stats only; nothing is read or parsed).
    pub(crate) fn kept(&self, dir: &Path) -> Option<&Inputs> {
        let stamp = self.dir_stamp(dir)?;
        let m = self.was(dir).and_then(|e| e.model.as_ref())?;
        if m.dir != stamp || !m.still(dir) {
            return None;
        }
        // Not stale: the cache's model is carried over when it is written.
        self.note(dir, |_| {});
        Some(&m.inputs)
    }

    /// What compose reads in `dir`: the model kept when nothing it was read
    /// from changed, else read anew (and kept when it reads).
    pub(crate) fn inputs(&self, dir: &Path) -> Result<Cow<'_, Inputs>, InputError> {
        if let Some(kept) = self.kept(dir) {
            return Ok(Cow::Borrowed(kept));
        }
        let stamp = self.dir_stamp(dir);
        self.stale
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(dir.to_path_buf());
        let listing = self.listing(dir);
        let since = now_ns();
        let inputs = read_listed(dir, listing.as_deref())?;
        if let Some(stamp) = stamp
            && stamp.settled(since, self.settle)
            && let Some(model) = Model::of(stamp, &inputs, since, self.settle)
        {
            self.note(dir, |e| e.model = Some(model));
        }
        Ok(Cow::Owned(inputs))
    }

    /// Writes the cache through `store` when what this process found differs
    /// from what it read: entries of directories it did not look at are dropped
    /// (the node read looks at every one under the root), a model it did not
    /// ask for is carried over, one that no longer holds is not. Never worth
    /// a failed command.
    pub(crate) fn keep(&self, store: &Store) {
        if !self.changed() {
            return;
        }
        let doc = self.doc();
        if doc != self.was {
            let _ = store.keep_cache(CACHE, &doc);
        }
    }

    /// Whether the cache as [`Models::doc`] would write it can differ from
    /// what was read: something read anew, a model that no longer holds, or
    /// another set of directories. Cheap: nothing is cloned.
    fn changed(&self) -> bool {
        let now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        let stale = self.stale.lock().unwrap_or_else(PoisonError::into_inner);
        !stale.is_empty()
            || now.len() != self.was.modules.len()
            || now.iter().any(|(dir, n)| {
                n.listing.is_some()
                    || n.model.is_some()
                    || n.config.is_some()
                    || !n.listing_held
                    || !self.was.modules.contains_key(dir)
            })
    }

    /// The cache as [`Models::keep`] writes it, for a read of the node again
    /// in this process (the watch's): nothing is read from the file.
    pub(crate) fn again(&self) -> Models {
        Models::from(self.doc())
    }

    fn doc(&self) -> Doc {
        let now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        let stale = self.stale.lock().unwrap_or_else(PoisonError::into_inner);
        let mut doc = Doc::empty();
        for (dir, n) in now.iter() {
            let was = self.was(dir);
            let listing = match (&n.listing, n.listing_held) {
                (Some(l), _) => Some(l.clone()),
                (None, true) => was.and_then(|w| w.listing.clone()),
                (None, false) => None,
            };
            let carried = n.model.is_none() && !stale.contains(dir);
            let model = match &n.model {
                Some(m) => Some(m.clone()),
                None if carried => was.and_then(|w| w.model.clone()),
                None => None,
            };
            // Compose's answer holds as long as the model it was asked under.
            let config = match &n.config {
                Some(c) => Some(c.clone()),
                None if carried => was.and_then(|w| w.config.clone()),
                None => None,
            };
            let config = config.filter(|_| model.is_some());
            doc.modules.insert(
                dir.clone(),
                ModelEntry {
                    listing,
                    model,
                    config,
                },
            );
        }
        doc
    }
}

impl Model {
    /// The model of `inputs`, read from `dir` at `since`; `None` when a stamp
    /// is too fresh to key on.
    fn of(stamp: FileStamp, inputs: &Inputs, since: i128, settle: Duration) -> Option<Model> {
        let mut files = Vec::new();
        for p in inputs.files.iter().chain(&inputs.absent) {
            let s = FileStamp::of(p);
            if s.is_some_and(|s| !s.settled(since, settle)) {
                return None;
            }
            files.push((p.clone(), s));
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        files.dedup_by(|a, b| a.0 == b.0);
        let env = inputs
            .vars
            .keys()
            .map(String::as_str)
            .chain(ALWAYS)
            .map(|k| (k.to_string(), std::env::var(k).ok()))
            .collect();
        Some(Model {
            dir: stamp,
            files,
            env,
            inputs: inputs.clone(),
        })
    }

    /// Whether everything the model was read from is as it was; the
    /// directory's own stamp is checked by the caller. A file of the
    /// directory that was not there is not there still while the directory
    /// is unchanged, so only the others are looked at.
    fn still(&self, dir: &Path) -> bool {
        self.env
            .iter()
            .all(|(k, v)| std::env::var(k).ok().as_ref() == v.as_ref())
            && self.files.iter().all(|(p, was)| {
                (was.is_none() && p.parent() == Some(dir)) || FileStamp::of(p) == *was
            })
    }
}

/// The names compose looks for among `dir`'s entries that are regular files
/// (a link followed), and whether the listing can be kept: not when such a
/// name is a link to no regular file (its target could appear unseen).
fn read_listing(dir: &Path) -> Option<(Vec<String>, bool)> {
    let mut names = Vec::new();
    let mut sure = true;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !is_looked_for(name) {
            continue;
        }
        let file = match entry.file_type() {
            Ok(t) if t.is_file() => true,
            Ok(t) if t.is_dir() => false,
            _ => {
                let file = entry.path().is_file();
                sure &= file;
                file
            }
        };
        if file {
            names.push(name.to_string());
        }
    }
    names.sort();
    Some((names, sure))
}

fn is_looked_for(name: &str) -> bool {
    name == ".env" || COMPOSE_FILES.contains(&name) || OVERRIDE_FILES.contains(&name)
}

fn now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

mod compose_said;
#[cfg(test)]
mod tests;
