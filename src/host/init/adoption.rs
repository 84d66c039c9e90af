//! What an init with template units can do for `hal adopt`: list a template's instances, disarm one, hand one over (a capability, not part of every init); and whether an instance's command lines are the `hal-module@` template's.

use std::path::Path;
use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::module::run_state::Activity;

/// Handing units of a template (systemd's `hal-module@`) over to hal without
/// stopping what they started. An init offers it through
/// [`super::Init::adoption`]. Every call is bounded in time; nothing prints.
pub(crate) trait Adopt: Send + Sync {
    /// Every instance of `template` (e.g. `hal-module`) the manager knows:
    /// running, failed, enabled or merely loaded, and any whose hand-over
    /// ([`Adopt::hand_over`]) was left half-done. For `hal adopt` and `doctor`.
    fn instances<'a>(&'a self, template: &'a str) -> BoxFuture<'a, anyhow::Result<Vec<Instance>>>;

    /// Makes `unit` harmless while it still runs: from now on stopping it runs
    /// no stop command and kills only its own processes, and nothing restarts
    /// it. The first half of [`Adopt::hand_over`]; undone by its end.
    fn disarm<'a>(&'a self, unit: &'a str, timeout: Duration) -> BoxFuture<'a, anyhow::Result<()>>;

    /// Takes `unit` from the init without stopping what it started: disarmed
    /// ([`Adopt::disarm`]), disabled, stopped, then its usual settings back and
    /// no failed state; it ends inactive. Each step can be repeated, so a
    /// hand-over cut short is finished by asking again.
    fn hand_over<'a>(
        &'a self,
        unit: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, anyhow::Result<()>>;
}

/// One instance of a template unit, as [`Adopt::instances`] finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Instance {
    /// `hal-module@web.service`.
    pub unit: String,
    /// `web`.
    pub instance: String,
    pub activity: Activity,
    /// Started by the init on its own (at boot or login).
    pub enabled: bool,
    /// The command lines it starts (argv of each `ExecStart=`).
    pub exec_start: Vec<Vec<String>>,
    /// A hand-over was begun and not finished.
    pub handing_over: bool,
}

/// Why a unit's `ExecStart=` is not the `hal-module@` template's for
/// `instance` under `root`, or `None` when it is: one command,
/// `docker compose` (or `docker-compose`) with `--project-directory
/// ROOT/INSTANCE --project-name INSTANCE up`, and no compose file named (`-f`),
/// so compose reads what hal reads.
pub(crate) fn template_problem(
    commands: &[Vec<String>],
    instance: &str,
    root: &Path,
) -> Option<String> {
    let [argv] = commands else {
        return Some(format!(
            "it has {} ExecStart= commands, the template has one",
            commands.len()
        ));
    };
    let program = argv.first().map(|p| {
        Path::new(p)
            .file_name()
            .map_or_else(|| p.clone(), |f| f.to_string_lossy().into_owned())
    });
    let rest = match program.as_deref() {
        Some("docker") if argv.get(1).map(String::as_str) == Some("compose") => &argv[2..],
        Some("docker-compose") => &argv[1..],
        _ => {
            return Some(format!(
                "its ExecStart= runs `{}`, not the template's `docker compose ... up`",
                argv.join(" ")
            ));
        }
    };
    let value = |long: &str, short: Option<&str>| -> Option<String> {
        let mut it = rest.iter();
        while let Some(w) = it.next() {
            if w == long || Some(w.as_str()) == short {
                return it.next().cloned();
            }
            if let Some(v) = w.strip_prefix(&format!("{long}=")) {
                return Some(v.to_string());
            }
        }
        None
    };
    if rest
        .iter()
        .any(|w| w == "-f" || w == "--file" || w.starts_with("--file="))
    {
        return Some("its ExecStart= names compose files (-f): hal reads the project directory as compose does with no -f".into());
    }
    if value("--project-name", Some("-p")).as_deref() != Some(instance) {
        return Some(format!(
            "its ExecStart= does not say --project-name {instance}"
        ));
    }
    let want = root.join(instance);
    match value("--project-directory", None) {
        Some(d) if Path::new(d.trim_end_matches('/')) == want => {}
        Some(d) => {
            return Some(format!(
                "it runs compose in {d}, not in hal's services root ({})",
                want.display()
            ));
        }
        None => return Some("its ExecStart= has no --project-directory".into()),
    }
    if !rest.iter().any(|w| w == "up") {
        return Some("its ExecStart= does not run `compose up`".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<Vec<String>> {
        vec![s.split_whitespace().map(str::to_string).collect()]
    }

    #[test]
    fn the_template_shape_is_recognised_and_others_named() {
        let root = Path::new("/services");
        let ok = "docker compose --project-directory /services/web --project-name web up --remove-orphans --pull always";
        assert_eq!(template_problem(&argv(ok), "web", root), None);
        let usr = "/usr/bin/docker compose --project-directory /services/web/ -p web up";
        assert_eq!(template_problem(&argv(usr), "web", root), None);
        let srv = ok.replace("/services/web", "/srv/web");
        let cases = [
            ("/bin/sleep infinity", "web", "runs `/bin/sleep infinity`"),
            (ok, "db", "--project-name db"),
            (srv.as_str(), "web", "runs compose in /srv/web"),
            (
                "docker compose -f x.yaml --project-directory /services/web --project-name web up",
                "web",
                "-f",
            ),
            (
                "docker compose --project-directory /services/web --project-name web start",
                "web",
                "compose up",
            ),
        ];
        for (cmd, inst, want) in cases {
            let got = template_problem(&argv(cmd), inst, root).unwrap_or_default();
            assert!(got.contains(want), "{cmd}: {got}");
        }
        assert!(
            template_problem(&[], "web", root)
                .unwrap()
                .contains("0 ExecStart=")
        );
    }
}
