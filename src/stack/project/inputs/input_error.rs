//! Why hal cannot say what compose reads for a project: a file missing or unreadable, named with the line that names it.

use std::path::{Path, PathBuf};

/// Why hal cannot say what compose reads.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub(crate) enum InputError {
    #[error("{}: {what} {} is not there", at(.named_by, *.line), .file.display())]
    Missing {
        file: PathBuf,
        named_by: PathBuf,
        line: Option<usize>,
        what: &'static str,
    },
    #[error("{}: {why}", at(.file, *.line))]
    Unreadable {
        file: PathBuf,
        line: Option<usize>,
        why: String,
    },
    #[error("no compose file in {}", .0.display())]
    NoComposeFile(PathBuf),
}

fn at(file: &Path, line: Option<usize>) -> String {
    match line {
        Some(n) => format!("{}:{n}", file.display()),
        None => file.display().to_string(),
    }
}
