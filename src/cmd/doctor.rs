//! `hal doctor`: checks the node, one line per check with ✓ or ✗, and says what to fix.

mod adopt;
mod check;
mod checkpoints;
mod deps;
mod history;
mod identity;
mod init;
mod local;
mod modules;
mod podman_pools;
mod pools;
mod states;
mod units;

use self::check::Check;
use crate::cmd::ctx::Ctx;
use crate::error::{Exit, HalError, OneLine};
use crate::stack::{ComposeFound, Session};

/// Runs every check (the slow ones concurrently), prints them, and exits 0
/// only when all pass.
pub(crate) async fn run(ctx: &Ctx) -> anyhow::Result<Exit> {
    // Asked once: every check that needs the engine gets it from here.
    let session = ctx.node.stacks.session().await;
    let (
        docker,
        (compose_line, compose),
        (init_lines, unit_problems),
        rescue_line,
        adoption,
        ident,
    ) = tokio::join!(
        docker_checks(ctx, &session),
        compose_checks(ctx),
        init::checks(ctx),
        units::check(&ctx.node.hosts),
        adopt::check(ctx, session.as_ref().ok()),
        identity::check(ctx, session.as_ref().ok())
    );
    let history_line = history::check(ctx, session.as_ref().ok()).await;
    let mut problems = modules::problems(ctx, compose.as_ref()).await;
    problems.extend(unit_problems);
    problems.sort_by(|a, b| a.name.cmp(&b.name));

    let mut checks = Vec::new();
    let (docker_line, events_line, pools_line) = docker;
    checks.push(docker_line);
    checks.push(events_line);
    checks.push(compose_line);
    checks.push(local::services_root(ctx));
    checks.push(modules::summary(ctx, &problems, compose.is_some()));
    checks.extend(problems);
    checks.push(deps::check(ctx));
    checks.push(ident);
    checks.push(pools_line);
    checks.push(history_line);
    checks.extend(init_lines);
    checks.extend(rescue_line);
    checks.push(adoption);
    checks.push(local::state_dir(ctx));
    checks.extend(states::one_state(ctx));
    checks.extend(checkpoints::check(ctx));
    checks.push(local::permissions(ctx));

    ctx.ui.show(&check::Checks::new(&checks));
    Ok(if checks.iter().all(|c| c.ok) {
        Exit::Ok
    } else {
        Exit::Failed
    })
}

/// The engine answers (with its API version), delivers events, and its address pools can hold every stack's network.
async fn docker_checks(ctx: &Ctx, session: &Result<Session, HalError>) -> (Check, Check, Check) {
    let session = match session {
        Ok(session) => session,
        Err(e) => {
            let hint = match e {
                HalError::DockerPermission { user, .. } => format!(
                    "add {user} to the docker group (usermod -aG docker {user}, then log in again), or run hal with sudo"
                ),
                HalError::Usage(_) => {
                    "fix the endpoint named above (-H, DOCKER_HOST, DOCKER_CONTEXT or `docker context use`)".into()
                }
                _ => "start the Docker daemon (systemctl start docker), or point hal at it with -H or DOCKER_HOST".into(),
            };
            let line = Check::fail("docker", e.to_string(), hint);
            return (
                line,
                check::engine_missing("events"),
                check::engine_missing("address-pools"),
            );
        }
    };
    let line = Check::pass(
        "docker",
        format!(
            "reachable at {} (from {}), API {}; compose is handed the same endpoint",
            session.endpoint(),
            ctx.node
                .stacks
                .endpoint()
                .map_or_else(|_| "?".to_string(), |e| e.source.to_string()),
            session.api_version()
        ) + if session.is_podman() {
            " (Podman's Docker-compatible API)"
        } else {
            ""
        },
    );
    let (events, pools) = tokio::join!(events_check(session), pools_check(ctx, session));
    (line, events, pools)
}

/// How long the engine takes to deliver an event to hal (what `hal watch` repairs on).
const EVENT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The engine delivers an event of hal's own making (a test volume made and removed) in time.
async fn events_check(session: &Session) -> Check {
    match session.probe(EVENT_WAIT).await {
        Ok(took) => Check::pass(
            "events",
            format!(
                "the engine delivered a test event in {} ms",
                took.as_millis()
            ),
        ),
        Err(why) => Check::fail(
            "events",
            why.to_string(),
            "without events `hal watch` repairs only at its --resync interval: check the engine's event log (Podman: events_logger in containers.conf)",
        ),
    }
}

/// Enough subnets are left in the default address pools for every stack that has no network yet.
async fn pools_check(ctx: &Ctx, session: &Session) -> Check {
    let fail = |detail: String| {
        Check::fail(
            "address-pools",
            detail,
            "check that the engine answers `docker network ls` and that /etc/docker/daemon.json is valid JSON",
        )
    };
    let podman = session.is_podman();
    let (pools, source) = match session.address_pools().await {
        // Podman's API states no pools: its own configuration does.
        _ if podman => {
            match podman_pools::read(&podman_pools::Places::here(user_config().as_deref())) {
                Ok(found) => found,
                Err(e) => return fail(e.to_string()),
            }
        }
        Ok(Some(p)) => (p, "the engine's default-address-pools".to_string()),
        Ok(None) => match pools::read_daemon_json(std::path::Path::new(pools::DAEMON_JSON)) {
            Ok(Some(p)) => (p, pools::DAEMON_JSON.to_string()),
            Ok(None) => (pools::stock(), "Docker's stock pools".to_string()),
            Err(e) => return fail(e.to_string()),
        },
        Err(e) => return fail(OneLine(&e).to_string()),
    };
    let networks = match session.networks().await {
        Ok(n) => n,
        Err(e) => return fail(OneLine(&e).to_string()),
    };
    let stacks = ctx.node.inventory.stack_names();
    let need = stacks
        .iter()
        .filter(|s| !networks.iter().any(|n| n.project.as_deref() == Some(**s)))
        .count();
    let widen = if podman {
        podman_pools::widen_hint
    } else {
        pools::widen_hint
    };
    pools::verdict_with(
        pools::capacity(&pools),
        pools::used(&pools, &networks),
        u64::try_from(need).unwrap_or(u64::MAX),
        &source,
        widen,
    )
}

/// A rootless user's configuration directory (Podman reads its containers.conf there too).
fn user_config() -> Option<std::path::PathBuf> {
    if crate::util::sys::is_root() {
        return None;
    }
    std::env::var_os("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".config")))
}

/// Compose is found, with its version.
async fn compose_checks(ctx: &Ctx) -> (Check, Option<ComposeFound>) {
    match ctx.node.stacks.compose_found().await {
        Ok(c) => {
            let line = Check::pass(
                "compose",
                format!("{} {} ({})", c.label, c.version, c.generation),
            );
            (line, Some(c))
        }
        Err(e) => {
            let line = Check::fail(
                "compose",
                OneLine(&e).to_string(),
                "install the Docker Compose plugin (v2) or docker-compose (v1), or set HAL_COMPOSE to the compose command",
            );
            (line, None)
        }
    }
}
