#!/usr/bin/env bash
# Issue 39: after an engine restart, a node of modules that need each other, on the private
# engine (bench/engine.sh, so the machine's own dockerd is not disturbed). Docker's default
# (no live-restore): the engine stops every container and restarts those whose policy says
# so, in any order, and never retries one whose start failed.
#
#   bench/engine_restart.sh            # CHAINS=6: 6 × (gw, tun, db, 2 apps) = 30 modules
#   CHAINS=10 HAL_BIN=target/release/hal bench/engine_restart.sh
#   bench/engine.sh's knobs: its own engine by default (BENCH_ENGINE_DIR=/run/hal-bench-39, netns hal-bench-39)
#
# Each chain: `gw` (container_name PFX-gwK-main), `tun` in gw's network namespace
# (network_mode: container:PFX-gwK-main: an inferred requires, a namespace tie), `db` that
# requires gw (declared), and two apps that require db (declared). Every service runs with
# `restart: unless-stopped`, started by hal (wanted up).
#
# In the same run, twice:
#   1. Docker alone: restart the engine, no hal watch. Once the running set has not changed
#      for 5 s: the time from the engine's start (its pid file) to the last start of a
#      running container, and how many modules `hal status` then says are not active.
#   2. Under hal watch: bring every module back, restart the engine again, time from the
#      engine's start until `hal status` says every module is active (exit 0), and the
#      node's state on the way.
# Goal: every module active under the watch within 1.2 × the time Docker alone takes.
# Prints a markdown section on stdout; progress goes to stderr. Needs root.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
CHAINS=${CHAINS:-6}
HAL_BIN=$(realpath "${HAL_BIN:-target/debug/hal}")
# An engine of its own: bench/engine.sh's default one may be another bench's.
export BENCH_ENGINE_DIR=${BENCH_ENGINE_DIR:-/run/hal-bench-39} BENCH_ENGINE_DATA=${BENCH_ENGINE_DATA:-/var/lib/hal-bench-39}
export BENCH_ENGINE_NETNS=${BENCH_ENGINE_NETNS:-hal-bench-39} BENCH_ENGINE_POOL=${BENCH_ENGINE_POOL:-10.212.0.0/16}
DOCKER_HOST=$("$root/bench/engine.sh" start)
export DOCKER_HOST
tmp=$(mktemp -d /tmp/hal-bench-er.XXXXXX)
pfx="er$$x"
watcher=""
cleanup() {
    [[ -z $watcher ]] || kill -TERM "$watcher" 2>/dev/null || true
    docker ps -a --filter "label=com.docker.compose.project" --format '{{.ID}} {{.Label "com.docker.compose.project"}}' |
        awk -v p="$pfx" 'index($2, p) == 1 {print $1}' | xargs -r docker rm -f >/dev/null 2>&1 || true
    docker network ls --format '{{.Name}}' | grep "^$pfx" | xargs -r docker network rm >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { echo "bench/engine_restart: $*" >&2; }
now() { echo "$EPOCHREALTIME"; }
diff_s() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

mkdir -p "$tmp/services" "$tmp/state"
export HAL_CONFIG=$tmp/hal.toml HAL_SERVICES_DIR=$tmp/services HAL_STATE_DIR=$tmp/state
printf '[defaults]\npull = "never"\nrestart = { burst = 100, interval = "60s" }\n' >"$HAL_CONFIG"
service() { # NAME [EXTRA-LINE]
    printf 'services:\n  %s:\n    image: hal-fixture:latest\n    command: ["sleep", "100000"]\n    restart: unless-stopped\n    stop_signal: SIGKILL\n' "$1"
    [[ -z ${2:-} ]] || printf '    %s\n' "$2"
}
modules=()
for k in $(seq 1 "$CHAINS"); do
    gw=${pfx}gw$k tun=${pfx}tun$k db=${pfx}db$k
    mkdir -p "$tmp/services/$gw" "$tmp/services/$tun" "$tmp/services/$db"
    service main "container_name: $gw-main" >"$tmp/services/$gw/compose.yaml"
    service vpn "network_mode: \"container:$gw-main\"" >"$tmp/services/$tun/compose.yaml"
    service db >"$tmp/services/$db/compose.yaml"
    printf '\n[module.%s]\nrequires = ["%s"]\n' "$db" "$gw" >>"$HAL_CONFIG"
    modules+=("$gw" "$tun" "$db")
    for a in 1 2; do
        app=${pfx}app${k}x$a
        mkdir -p "$tmp/services/$app"
        service app >"$tmp/services/$app/compose.yaml"
        printf '\n[module.%s]\nrequires = ["%s"]\n' "$app" "$db" >>"$HAL_CONFIG"
        modules+=("$app")
    done
done
n=${#modules[@]}
say "$n modules on $DOCKER_HOST"
"$HAL_BIN" start --all >/dev/null 2>&1 || "$HAL_BIN" start --all >/dev/null
"$HAL_BIN" -q status || { say "not every module is active after the start"; exit 1; }

not_active() { { "$HAL_BIN" --json status 2>/dev/null || true; } | jq '[.modules[] | select(.state != "active")] | length'; }
# The engine's start (its pid file, written as it starts): where both timings begin.
engine_start() { date -r "$BENCH_ENGINE_DIR/docker.pid" +%s.%N; }
# The latest start among the running containers, Unix seconds.
last_start() {
    docker ps --filter "label=com.docker.compose.project" --format '{{.ID}}' | xargs -r docker inspect -f '{{.State.StartedAt}}' |
        while read -r t; do date -d "$t" +%s.%N; done | sort -g | tail -1
}
running() { docker ps --filter "label=com.docker.compose.project" --format '{{.ID}}' | sort | md5sum; }

# --- 1. Docker alone --------------------------------------------------------------------
say "engine restart, Docker alone"
"$root/bench/engine.sh" restart >/dev/null
last=$(running) quiet=0
while ((quiet < 10)); do
    sleep 0.5
    cur=$(running)
    if [[ $cur != "$last" ]]; then
        last=$cur quiet=0
    else
        quiet=$((quiet + 1))
    fi
done
docker_s=$(diff_s "$(engine_start)" "$(last_start)")
docker_down=$(not_active)
docker_containers=$(docker ps --filter "label=com.docker.compose.project" --format '{{.ID}}' | wc -l)
say "Docker alone: ${docker_s}s, $docker_down of $n modules not active"

# --- 2. under hal watch -------------------------------------------------------------------
"$HAL_BIN" watch --interval 2s >"$tmp/watch.log" 2>&1 &
watcher=$!
for _ in $(seq 1 240); do "$HAL_BIN" -q status && break; sleep 0.5; done
"$HAL_BIN" -q status || { say "the watch did not bring every module back before the second restart"; exit 1; }
lines_before=$(wc -l <"$tmp/watch.log")
say "engine restart under hal watch"
"$root/bench/engine.sh" restart >/dev/null
t0=$(engine_start)
states=()
hal_s=""
for _ in $(seq 1 600); do
    code=0
    doc=$("$HAL_BIN" --json status 2>/dev/null) || code=$?
    state=$(jq -r '.node // "?"' <<<"$doc" 2>/dev/null || echo "?")
    [[ ${#states[@]} -gt 0 && ${states[-1]} == "$state" ]] || states+=("$state")
    if ((code == 0)); then
        hal_s=$(diff_s "$t0" "$(now)")
        break
    fi
    sleep 0.2
done
hal_last=$(diff_s "$t0" "$(last_start)")
tail -n +"$((lines_before + 1))" "$tmp/watch.log" >"$tmp/said"
cp "$tmp/watch.log" "${KEEP_LOG:-/dev/null}"
repairs=$(grep -cE ': (repairing|recreating the module|restarting):' "$tmp/said" || true)
waits=$(grep -cE ': waiting on ' "$tmp/said" || true)
holds=$(grep -cE ': held: ' "$tmp/said" || true)
say "under hal watch: last start ${hal_last}s, all active ${hal_s:-never}s; node: ${states[*]}"
ok=$(awk -v h="${hal_s:+$hal_last}" -v d="$docker_s" 'BEGIN { print (h != "" && h <= 1.2 * d) ? "✓" : "✗" }')

cat <<MD
## Issue 39: an engine restart on a node of $n modules that need each other (bench/engine_restart.sh)

$(date -u '+%Y-%m-%d %H:%M UTC'), hal $(git -C "$root" rev-parse --short HEAD) ($(basename "$(dirname "$HAL_BIN")") build), the private engine
(\`bench/engine.sh\`, Docker's default: no live-restore), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end.
$CHAINS chains of gw ← tun (network namespace), gw ← db (requires) ← 2 apps (requires); every service
\`restart: unless-stopped\`, every module started by hal.

| | time | modules not active after |
|---|---|---|
| Docker alone: from the engine's start to the last container it restarted | ${docker_s} s | $docker_down of $n ($docker_containers containers running) |
| under \`hal watch\`: from the engine's start to the last container started (by Docker or the watch) | ${hal_last} s | 0 of $n |
| under \`hal watch\`: from the engine's start until \`hal status\` says every module is active (each container up 1 s, and a status call) | ${hal_s:-never} s | 0 of $n |

Node state seen by \`hal status\` on the way under the watch: ${states[*]}. The watch logged $repairs repairs,
$waits waits on a requirement, $holds holds. Goal (every container of every module started within 1.2 × the time
Docker alone takes to start the containers it can, the same measure): $ok.

What the watch logged (first lines):

\`\`\`
$(cut -c1-160 "$tmp/said" | head -12)
\`\`\`
MD
