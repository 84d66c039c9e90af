//! The name of hal's own tag on a service's previous image (`hal-previous/MODULE:SERVICE`): a valid Docker reference whatever the module and service are called, so that `docker image prune` (dangling images only) keeps the image a rollback needs; `prune -a` takes it while no container runs it.

use sha2::{Digest, Sha256};

/// The repository every previous image is tagged under, a module's its own path below it.
const ROOT: &str = "hal-previous";

/// The longest tag Docker takes.
const TAG_MAX: usize = 128;

/// The longest repository path component hal makes (Docker's whole name may be 255).
const COMPONENT_MAX: usize = 64;

/// `(repository, tag)` of the tag that keeps `module`'s `service`'s previous image.
pub(crate) fn reference(module: &str, service: &str) -> (String, String) {
    (format!("{ROOT}/{}", component(module)), tag(service))
}

/// A repository path component: lowercase `[a-z0-9]+` joined by one `.`,
/// `_`, `__` or run of `-`; a name that had to change gets a short hash of
/// itself, so two names never meet in one component.
fn component(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            // Any other character is a separator: `-`, never doubled with another kind.
            out.push('-');
        }
    }
    let clean = out.trim_end_matches('-').to_string();
    if clean == name && !clean.is_empty() && clean.len() <= COMPONENT_MAX {
        return clean;
    }
    let mut short: String = clean.chars().take(COMPONENT_MAX - 9).collect();
    short = short.trim_end_matches('-').to_string();
    if short.is_empty() {
        return hash(name);
    }
    format!("{short}-{}", hash(name))
}

/// A tag: `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`; a name that had to change
/// gets a short hash of itself.
fn tag(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.starts_with(['.', '-']) {
        out.replace_range(0..1, "_");
    }
    if out == name && !out.is_empty() && out.len() <= TAG_MAX {
        return out;
    }
    let short: String = out.chars().take(TAG_MAX - 9).collect();
    if short.is_empty() {
        return hash(name);
    }
    format!("{short}-{}", hash(name))
}

/// Eight hex digits of the name's SHA-256.
fn hash(name: &str) -> String {
    let sum = Sha256::digest(name.as_bytes());
    sum.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests;
