//! Errors a person can act on, and the exit codes the spec promises for them.

use std::fmt;

/// The process exit codes of `hal(1)`. Order matters: when several modules fail
/// differently, the highest code wins (see [`Exit::worst`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Exit {
    /// Success; for `status`, every module asked about is `active`.
    Ok = 0,
    /// The operation failed.
    Failed = 1,
    /// Usage error, or a confirmation was needed with no terminal and no `--yes`.
    Usage = 2,
    /// `status`: at least one module is not `active`; `update --check`: an update is
    /// available (something to report, nothing failed).
    NotActive = 3,
    /// No such module.
    NoSuchModule = 4,
    /// Refused: the module's start limit is hit.
    Refused = 5,
    /// The engine (Docker, or the init) is unreachable.
    Unreachable = 6,
    /// Interrupted by Ctrl-C (128 + SIGINT).
    Interrupted = 130,
    /// Ended by SIGTERM (128 + SIGTERM).
    Terminated = 143,
}

impl Exit {
    /// The code that describes a run where both `self` and `other` happened.
    pub fn worst(self, other: Exit) -> Exit {
        self.max(other)
    }

    pub fn code(self) -> u8 {
        self as u8
    }
}

/// An error with a fixed meaning for the user. Everything else travels as
/// `anyhow::Error` and exits 1.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HalError {
    #[error(
        "no such module: {name}{} (`hal module list` shows the modules in {root})",
        meant(suggestion)
    )]
    NoSuchModule {
        name: String,
        root: String,
        /// The nearest module name, when one is close to what was typed.
        suggestion: Option<String>,
    },

    #[error("no module matches {pattern} (`hal module list` shows the modules in {root})")]
    NoMatch { pattern: String, root: String },

    #[error("no such service: {module}/{service} ({})", services_of(module, known))]
    NoSuchService {
        module: String,
        service: String,
        /// The module's services, as compose and its containers say.
        known: Vec<String>,
    },

    #[error("{module} is a host module ({unit}): it has no services; address it as {module}")]
    NoServices { module: String, unit: String },

    #[error("invalid module name {name:?}: {reason}")]
    InvalidName { name: String, reason: String },

    #[error("module {name} is invalid: {reason}")]
    InvalidModule { name: String, reason: String },

    #[error("config {path}: {message}")]
    Config { path: String, message: String },

    #[error("{0}")]
    Usage(String),

    /// A project with the module's name runs from another directory (exit 2).
    #[error(
        "a compose project named {module} runs from {other}, not from {dir}: it is not this module, and hal leaves it alone; stop it there (docker compose --project-directory {other} -p {module} down) or rename one of the two directories"
    )]
    Conflict {
        module: String,
        dir: String,
        other: String,
    },

    #[error("Docker not reachable at {endpoint}: {why}")]
    DockerUnreachable { endpoint: String, why: String },

    #[error(
        "permission denied on {socket}: add {user} to the docker group (usermod -aG docker {user}, then log in again), or use sudo"
    )]
    DockerPermission { socket: String, user: String },

    #[error("{0}")]
    InitUnreachable(String),

    /// The node itself is broken (its services root missing, not a directory
    /// or unreadable): `status` cannot say the node is fine (exit 1).
    #[error("{0}")]
    NodeBroken(String),

    #[error("{0}")]
    Refused(String),

    /// The node's state cannot be written by this user (exit 1, with the group to join).
    #[error("{0}")]
    StateNotWritable(String),

    #[error("interrupted")]
    Interrupted,

    #[error("terminated")]
    Terminated,
}

impl HalError {
    pub fn exit(&self) -> Exit {
        match self {
            HalError::NoSuchModule { .. }
            | HalError::NoMatch { .. }
            | HalError::NoSuchService { .. }
            | HalError::NoServices { .. } => Exit::NoSuchModule,
            HalError::InvalidName { .. }
            | HalError::Config { .. }
            | HalError::Usage(_)
            | HalError::Conflict { .. } => Exit::Usage,
            HalError::InvalidModule { .. }
            | HalError::StateNotWritable(_)
            | HalError::NodeBroken(_) => Exit::Failed,
            HalError::DockerUnreachable { .. }
            | HalError::DockerPermission { .. }
            | HalError::InitUnreachable(_) => Exit::Unreachable,
            HalError::Refused(_) => Exit::Refused,
            HalError::Interrupted => Exit::Interrupted,
            HalError::Terminated => Exit::Terminated,
        }
    }
}

/// `; did you mean web?`, for [`HalError::NoSuchModule`].
fn meant(suggestion: &Option<String>) -> String {
    suggestion
        .as_ref()
        .map_or_else(String::new, |s| format!("; did you mean {s}?"))
}

impl HalError {
    /// What a status row says when this error kept hal from reading it: the
    /// cause alone, when the fix applies to every row and is printed once.
    pub fn row_reason(&self) -> String {
        match self {
            HalError::DockerPermission { socket, .. } => format!("permission denied on {socket}"),
            HalError::DockerUnreachable { endpoint, .. } => {
                format!("Docker not reachable at {endpoint}")
            }
            other => other.to_string(),
        }
    }
}

/// [`HalError::row_reason`] of the first `HalError` in the chain, else the
/// whole error on one line.
pub(crate) fn row_reason(err: &anyhow::Error) -> String {
    err.chain()
        .find_map(|e| e.downcast_ref::<HalError>())
        .map_or_else(|| OneLine(err).to_string(), HalError::row_reason)
}

/// An I/O error in words, as a person reads them (`no such file or
/// directory`), without the `(os error 2)` the standard library adds.
pub(crate) fn io_words(e: &std::io::Error) -> String {
    without_os_error(&e.to_string())
}

/// `text` with every ` (os error N)` taken out, and a system message that
/// starts it lowercased (`No such file or directory` reads as the rest of a
/// `hal: what: why` line).
pub(crate) fn without_os_error(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(" (os error ") {
        let tail = &rest[at + " (os error ".len()..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(')') {
            out.push_str(&lowercase_first(&rest[..at]));
            rest = &tail[digits + 1..];
        } else {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// The system's message (`No such file or directory`) at the end of `text`,
/// after the last `: `, with a lowercase first letter, unless it reads as a name.
fn lowercase_first(text: &str) -> String {
    let start = text.rfind(": ").map_or(0, |i| i + 2);
    let (head, msg) = text.split_at(start);
    let mut chars = msg.chars();
    match (chars.next(), chars.next()) {
        (Some(c), Some(d)) if c.is_ascii_uppercase() && d.is_ascii_lowercase() => {
            format!("{head}{}{}", c.to_ascii_lowercase(), &msg[1..])
        }
        _ => text.to_string(),
    }
}

/// `web has services: www, worker`, for [`HalError::NoSuchService`].
fn services_of(module: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!("{module} has no services")
    } else {
        format!("{module} has services: {}", known.join(", "))
    }
}

/// The exit code an arbitrary error maps to: a [`HalError`] anywhere in the
/// chain decides, otherwise 1.
pub(crate) fn exit_of(err: &anyhow::Error) -> Exit {
    err.chain()
        .find_map(|e| e.downcast_ref::<HalError>())
        .map_or(Exit::Failed, HalError::exit)
}

/// Renders an error as the single line `what: why: why` (no debug formatting).
pub(crate) struct OneLine<'a>(pub &'a anyhow::Error);

impl fmt::Display for OneLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        one_line(f, self.0.chain())
    }
}

/// [`OneLine`] without the error's outermost context: what a context that
/// is said apart (the runner's step, `start web`) was added to.
pub(crate) struct UnderContext<'a>(pub &'a anyhow::Error);

impl fmt::Display for UnderContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        one_line(f, self.0.chain().skip(1))
    }
}

fn one_line<'a>(
    f: &mut fmt::Formatter<'_>,
    chain: impl Iterator<Item = &'a (dyn std::error::Error + 'static)>,
) -> fmt::Result {
    let mut first = true;
    for cause in chain {
        let text = without_os_error(&cause.to_string());
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        if !first {
            f.write_str(": ")?;
        }
        // Keep the message on one line: engines sometimes answer with several.
        let mut words = text.split('\n').map(str::trim).filter(|l| !l.is_empty());
        if let Some(w) = words.next() {
            f.write_str(w)?;
        }
        for w in words {
            f.write_str("; ")?;
            f.write_str(w)?;
        }
        first = false;
    }
    Ok(())
}

/// What every message of hal on stderr starts with (the printer's rule too).
pub(crate) const PREFIX: &str = "hal: ";

/// Prints `hal: <error>` once on stderr, with its detail lines under it.
pub(crate) fn report(err: &anyhow::Error, details: &[String]) {
    use std::io::Write;
    let mut text = format!("{PREFIX}{}\n", OneLine(err));
    for d in details {
        text.push_str(&format!("    {d}\n"));
    }
    // A closed stderr is no reason to panic.
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn worst_prefers_higher_codes() {
        assert_eq!(Exit::Failed.worst(Exit::Unreachable), Exit::Unreachable);
        assert_eq!(Exit::Ok.worst(Exit::NotActive), Exit::NotActive);
    }

    /// Every code hal exits with has its description in the long help (which
    /// hal(1)'s EXIT STATUS is made from); a new code fails here until it has.
    #[test]
    fn every_exit_code_is_described() {
        use clap::CommandFactory;
        let help = crate::cli::Cli::command()
            .get_after_long_help()
            .map(|t| t.to_string())
            .unwrap_or_default();
        let words: Vec<&str> = help
            .split(|c: char| c.is_whitespace() || c == ';')
            .collect();
        for e in [
            Exit::Ok,
            Exit::Failed,
            Exit::Usage,
            Exit::NotActive,
            Exit::NoSuchModule,
            Exit::Refused,
            Exit::Unreachable,
            Exit::Interrupted,
            Exit::Terminated,
        ] {
            match e {
                Exit::Ok
                | Exit::Failed
                | Exit::Usage
                | Exit::NotActive
                | Exit::NoSuchModule
                | Exit::Refused
                | Exit::Unreachable
                | Exit::Interrupted
                | Exit::Terminated => {}
            }
            let code = e.code().to_string();
            assert!(
                words.contains(&code.as_str()),
                "exit {code} ({e:?}) undescribed: {help}"
            );
        }
    }

    #[test]
    fn exit_found_through_context() {
        let e = Err::<(), _>(HalError::Refused("x".into()))
            .context("start web")
            .unwrap_err();
        assert_eq!(exit_of(&e), Exit::Refused);
        assert_eq!(exit_of(&anyhow::anyhow!("plain")), Exit::Failed);
    }

    #[test]
    fn io_errors_read_as_words() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(io_words(&e), "no such file or directory");
        let e = anyhow::Error::new(std::io::Error::from_raw_os_error(13))
            .context("create state directory /x");
        assert_eq!(
            OneLine(&e).to_string(),
            "create state directory /x: permission denied"
        );
        assert_eq!(
            without_os_error("config /x: No such file or directory (os error 2)"),
            "config /x: no such file or directory"
        );
        assert_eq!(without_os_error("a (os error x) b"), "a (os error x) b");
    }

    #[test]
    fn a_row_gets_the_cause_and_not_the_fix() {
        let e = HalError::DockerPermission {
            socket: "/var/run/docker.sock".into(),
            user: "ann".into(),
        };
        assert_eq!(e.row_reason(), "permission denied on /var/run/docker.sock");
        let e = anyhow::Error::new(e).context("list containers");
        assert_eq!(row_reason(&e), "permission denied on /var/run/docker.sock");
        assert_eq!(row_reason(&anyhow::anyhow!("a\nb")), "a; b");
    }

    #[test]
    fn no_such_module_names_the_nearest() {
        let e = HalError::NoSuchModule {
            name: "ux-wbe".into(),
            root: "/services".into(),
            suggestion: Some("ux-web".into()),
        };
        assert_eq!(
            e.to_string(),
            "no such module: ux-wbe; did you mean ux-web? (`hal module list` shows the modules in /services)"
        );
    }

    #[test]
    fn one_line_joins_chain_and_lines() {
        let e = Err::<(), _>(anyhow::anyhow!("first\nsecond\n"))
            .context("start web")
            .unwrap_err();
        assert_eq!(OneLine(&e).to_string(), "start web: first; second");
    }
}
