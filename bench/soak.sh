#!/usr/bin/env bash
# Issue 50: a soak. `hal watch` supervises a node of 12 modules for a set time under seeded
# random faults; at the end the node must be whole, with no false alarm, no lost line and no
# leftover, and the watch alive.
#
#   bench/soak.sh                          # --minutes 10, a seed from the clock (printed)
#   HAL_BIN=target/debug/hal bench/soak.sh --minutes 3 --seed 50
#   bench/soak.sh --minutes 60 --engine-restarts 2     # restarts the machine's dockerd: run it alone
#   bench/soak.sh --minutes 60 --engine-restarts 2 --own-engine   # a private dockerd instead
#   SOAK_REGISTRY_PORT=5057 (its registry's port, 5055 by default), SOAK_KEEP=DIR (keep the logs there)
#
# The node (every image the fixture hal-fixture:latest, one module's pushed to a
# registry of the script's own on 127.0.0.1:5055; every service logs to the journal):
#   gw (container_name PFX-gw-main) ← tun (network_mode: container:PFX-gw-main: a namespace pair)
#   db ← api ← web;  db ← worker;  db ← init (a one-shot job);  cache (2 services) ← queue;
#   batch (a one-shot job, then its app); reg (image from the registry); web, gw ← edge
# (`requires` in the config). Each long-running container prints `soak MODULE/SERVICE RUN SEQ`
# every 2 s and appends the same line to a file in a bind mount ($tmp/out), to compare with
# `hal logs`; db exits 3 while $tmp/flags/broken exists.
#
# Faults, planned from the seed before the run (the plan is printed), one at a time:
#   kill      `docker kill` of a service's container, behind hal's back
#   stop      `docker stop` of one
#   provider  `docker restart` of gw's container (tun is left in a dead namespace)
#   operator  `hal restart MODULE`
#   watchkill the watch SIGKILLed, and started again
#   broken    db's command exits 3 for a while (the one injected real failure: db's start
#             limit is small, so its on_failure must run; no other module's may)
#   registry  the registry stopped, `hal update reg` (must fail and leave reg running), the
#             registry back, `hal update reg` again
#   statefull HAL_STATE_DIR (a 2 MiB tmpfs) filled for 25 s, then freed; a container of batch
#             (which requires nothing) is killed inside that window
#   engine    (--engine-restarts N, default 0) dockerd SIGTERMed (/var/run/docker.pid) and
#             started again as scripts/provision.sh does; it disturbs every user of the engine
#             (with --own-engine, the private dockerd's pid, started again with the same arguments)
# --own-engine: the soak runs on a dockerd of its own (the same /usr/sbin/dockerd), so its
# engine restarts disturb nobody: data root /var/lib/hal-soak-docker, socket, pid file and exec
# root under /run/hal-soak-docker, a default bridge of its own (hsoak0, made by the script) and
# no address pools (both so that it never deletes the host's docker0: see own_args below), no
# iptables rules (two daemons would fight over the chains), its log in
# /var/log/hal-soak-docker.log (SOAK_ENGINE_DIR, _DATA, _LOG, _BRIDGE, _BRIDGE_ADDR move them).
# DOCKER_HOST points at it for docker, compose and hal; the fixture image is copied into it.
# The daemon, its data root and its bridges are removed at the end.
# Then it waits (--settle, 240 s at most) for the node to come back, checks, prints a summary
# and exits 1 if a check failed:
#   every module active and the node `running`; no module held; on_failure ran for db only;
#   every line a container wrote is in `hal logs`; every state file parses; no container
#   duplicated or left `created`; db active again within 30 s of its fix (SOAK_DB_BACK_MAX);
#   the watch alive (its RSS and CPU time).
# It removes what it made: containers, networks, volumes, the tmpfs, its registry and images.
# Progress on stderr; the summary (markdown) on stdout. Needs root (mount), jq, curl,
# docker-registry.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
MINUTES=10
SEED=""
ENGINE_RESTARTS=0
SETTLE=240
OWN_ENGINE=0
DB_BACK_MAX=${SOAK_DB_BACK_MAX:-30}
while (($#)); do
    case $1 in
        --minutes) MINUTES=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        --engine-restarts) ENGINE_RESTARTS=$2; shift 2 ;;
        --settle) SETTLE=$2; shift 2 ;;
        --own-engine) OWN_ENGINE=1; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench/soak: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ $MINUTES =~ ^[0-9]+$ && $MINUTES -ge 1 ]] || { echo "bench/soak: --minutes takes a whole number ≥ 1" >&2; exit 2; }
[[ $ENGINE_RESTARTS =~ ^[0-9]+$ ]] || { echo "bench/soak: --engine-restarts takes a whole number" >&2; exit 2; }
[[ -n $SEED ]] || SEED=$(($(date +%s) % 100000))
[[ $SEED =~ ^[0-9]+$ ]] || { echo "bench/soak: --seed takes a whole number" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "bench/soak: needs root (a tmpfs for the state dir)" >&2; exit 1; }

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_init soak hsk docker jq curl docker-registry awk
if ((OWN_ENGINE)) && [[ $ENGINE != docker ]]; then
    say "--own-engine starts a dockerd: not with ENGINE=$ENGINE"
    exit 2
fi
if ((ENGINE_RESTARTS > 0 && !OWN_ENGINE)) && [[ $ENGINE != docker || ! -s /var/run/docker.pid ]]; then
    say "--engine-restarts needs the machine's dockerd (ENGINE=docker, /var/run/docker.pid), as scripts/provision.sh starts it, or --own-engine"
    exit 2
fi
say "seed $SEED, $MINUTES minute(s) of faults, $ENGINE_RESTARTS engine restart(s)$( ((OWN_ENGINE)) && echo " of a private dockerd"); hal: $HAL_BIN"
echo "seed $SEED" >&2
REG_PORT=${SOAK_REGISTRY_PORT:-5055}
REG=127.0.0.1:$REG_PORT
FIXTURE=${FIXTURE:-hal-fixture:latest} # scripts/provision.sh: scratch + busybox-static
LABELS=com.docker.compose.project,com.docker.compose.service,com.docker.compose.project.working_dir,com.docker.compose.container-number
watcher="" reg_pid="" db_poll="" made_images=()
own_started=0

# shellcheck disable=SC2317 # called by the trap
soak_cleanup() {
    set +e
    [[ -z $watcher ]] || { kill -KILL "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null; }
    [[ -z $db_poll ]] || kill "$db_poll" 2>/dev/null
    local p
    for p in "${engine_polls[@]}"; do kill "$p" 2>/dev/null; done
    bench_cleanup_engine
    [[ -z $reg_pid ]] || { kill "$reg_pid" 2>/dev/null; wait "$reg_pid" 2>/dev/null; }
    mountpoint -q "$tmp/state" && umount "$tmp/state"
    ((own_started == 0)) || own_engine_remove
    rm -rf "$tmp"
}
# bench_cleanup without its rm (the tmpfs is unmounted first), and the volumes and images.
bench_cleanup_engine() {
    local ids nets vols imgs
    ids=$(docker ps -a --filter label=com.docker.compose.project \
        --format '{{.ID}} {{.Label "com.docker.compose.project"}}' | awk -v p="$pfx" 'index($2, p) == 1 {print $1}')
    [[ -z $ids ]] || docker rm -f $ids >/dev/null 2>&1
    nets=$(docker network ls --format '{{.Name}}' | grep "^$pfx" || true)
    [[ -z $nets ]] || docker network rm $nets >/dev/null 2>&1
    vols=$(docker volume ls --format '{{.Name}}' | grep "^$pfx" || true)
    [[ -z $vols ]] || docker volume rm $vols >/dev/null 2>&1
    imgs=$(docker image ls --format '{{.Repository}}:{{.Tag}}' | grep -E "^$REG/soak/$pfx|^hal-previous/.*$pfx" || true)
    [[ -z $imgs ]] || docker rmi $imgs >/dev/null 2>&1
    [[ ${#made_images[@]} -eq 0 ]] || docker rmi -f "${made_images[@]}" >/dev/null 2>&1
    return 0
}
trap soak_cleanup EXIT

# --- the engine of its own (--own-engine) ----------------------------------------------------
# Its socket and pid file side by side (hal reads the engine's start from the docker.pid beside
# the socket), its exec root (and the containerd it supervises) beside them.
# It must never delete the host's docker0, which breaks every `docker run` on the machine's
# engine until that engine restarts. dockerd 20.10 deletes it (by that name, whatever its own
# bridge is called: removeDefaultBridgeInterface) at every start with --bridge=none, and at every
# restart when it has default address pools (flag or config) and no live-restore. So its default
# bridge is one the script makes (hsoak0, 10.231.0.1/24), and it has no pools of its own: its
# networks come from dockerd's built-in pools (172.17.0.0/16 …), which skip any subnet the host
# routes already (the machine's engine uses 10.200 and 10.201, /etc/docker/daemon.json).
OWN_DIR=${SOAK_ENGINE_DIR:-/run/hal-soak-docker} OWN_ROOT=${SOAK_ENGINE_DATA:-/var/lib/hal-soak-docker}
OWN_LOG=${SOAK_ENGINE_LOG:-/var/log/hal-soak-docker.log} OWN_BRIDGE=${SOAK_ENGINE_BRIDGE:-hsoak0}
OWN_BRIDGE_ADDR=${SOAK_ENGINE_BRIDGE_ADDR:-10.231.0.1/24}
OWN_PIDFILE=$OWN_DIR/docker.pid
own_args=(--config-file "$OWN_DIR/daemon.json" --data-root "$OWN_ROOT" --exec-root "$OWN_DIR/exec"
    --pidfile "$OWN_PIDFILE" -H "unix://$OWN_DIR/docker.sock" --bridge="$OWN_BRIDGE" --iptables=false)
own_engine_start() {
    local i pid
    echo "=== $(date -Is) bench/soak: starting dockerd ${own_args[*]}" >>"$OWN_LOG"
    setsid nohup /usr/sbin/dockerd "${own_args[@]}" >>"$OWN_LOG" 2>&1 </dev/null 9>&- &
    pid=$!
    own_started=1
    for i in $(seq 1 600); do
        docker info >/dev/null 2>&1 && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    say "the private dockerd did not answer on $DOCKER_HOST within 60 s (see $OWN_LOG):"
    tail -5 "$OWN_LOG" >&2
    exit 1
}
own_engine_stop() { # SIGTERM to the pid in its pid file; waits up to 60 s
    local pid i
    pid=$(cat "$OWN_PIDFILE" 2>/dev/null || true)
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid"
    for i in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    say "the private dockerd (pid $pid) did not stop in 60 s"
    return 1
}
own_engine_dirs_remove() { # what a stopped daemon left mounted, then its dirs
    local m
    awk -v a="$OWN_ROOT" -v b="$OWN_DIR" 'index($2, a) == 1 || index($2, b) == 1 {print $2}' /proc/mounts |
        sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
    rm -rf "$OWN_ROOT" "$OWN_DIR"
}
# shellcheck disable=SC2317 # called by the trap
own_engine_remove() {
    local nets n pid
    nets=$(docker network ls -q --no-trunc --filter driver=bridge 2>/dev/null || true)
    if ! own_engine_stop; then
        pid=$(cat "$OWN_PIDFILE" 2>/dev/null || true)
        [[ -z $pid ]] || kill -KILL "$pid" 2>/dev/null
        sleep 2
    fi
    # Its bridges (a stopped dockerd leaves them), then whatever it left mounted, then its dirs.
    for n in $nets; do ip link delete "br-${n:0:12}" 2>/dev/null || true; done
    ip link delete "$OWN_BRIDGE" 2>/dev/null || true
    own_engine_dirs_remove
    own_started=0
    say "removed the private dockerd, its data root and its networks (its log: $OWN_LOG)"
}
if ((OWN_ENGINE)); then
    if [[ -s $OWN_PIDFILE ]] && kill -0 "$(cat "$OWN_PIDFILE")" 2>/dev/null; then
        say "a private dockerd already runs (pid $(cat "$OWN_PIDFILE"), $OWN_PIDFILE): another soak?"
        exit 1
    fi
    machine_host=$DOCKER_HOST own_started=1
    own_engine_dirs_remove
    mkdir -p "$OWN_DIR" "$OWN_ROOT"
    echo '{}' >"$OWN_DIR/daemon.json" # not /etc/docker/daemon.json: the machine's pools
    if [[ ! -e /sys/class/net/$OWN_BRIDGE ]]; then
        ip link add "$OWN_BRIDGE" type bridge
        ip addr add "$OWN_BRIDGE_ADDR" dev "$OWN_BRIDGE"
        ip link set "$OWN_BRIDGE" up
    fi
    export DOCKER_HOST=unix://$OWN_DIR/docker.sock
    own_engine_start
    bench_engine # ENGINE_SOCK and ENGINE_DESC of the private one
    ENGINE_DESC="$ENGINE_DESC, a private dockerd (bench/soak.sh --own-engine)"
    FIXTURE=${FIXTURE:-hal-fixture:latest}
    DOCKER_HOST=$machine_host docker save "$FIXTURE" | docker load -q >/dev/null
    say "a private dockerd on $DOCKER_HOST (pid $(cat "$OWN_PIDFILE"), log $OWN_LOG), $FIXTURE loaded"
fi

docker image inspect "$FIXTURE" >/dev/null 2>&1 || { say "no $FIXTURE (scripts/provision.sh)"; exit 1; }
if curl -fs -o /dev/null --max-time 1 "http://$REG/v2/"; then
    say "something already answers on $REG (SOAK_REGISTRY_PORT picks another port)"
    exit 1
fi

# --- the registry of its own ---------------------------------------------------------------
mkdir -p "$tmp/registry" "$tmp/out" "$tmp/flags" "$tmp/services" "$tmp/state"
cat >"$tmp/registry.yml" <<YML
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: $tmp/registry
  delete:
    enabled: true
http:
  addr: $REG
YML
registry_start() {
    docker-registry serve "$tmp/registry.yml" >>"$tmp/registry.log" 2>&1 &
    reg_pid=$!
    local i
    for i in $(seq 1 100); do
        curl -fs -o /dev/null --max-time 1 "http://$REG/v2/" && return 0
        sleep 0.1
    done
    say "the registry on $REG did not answer (see $tmp/registry.log)"
    exit 1
}
registry_stop() {
    kill "$reg_pid" 2>/dev/null || true
    wait "$reg_pid" 2>/dev/null || true
    reg_pid=""
}
registry_start
reg_img=$REG/soak/${pfx}reg:latest
n_built=0
# publish: a new image of the fixture (a new label) pushed to the registry; the node's tag
# stays where it was (only a pull brings it).
publish() {
    local keep id
    keep=$(docker image inspect -f '{{.Id}}' "$reg_img" 2>/dev/null || true)
    n_built=$((n_built + 1))
    id=$(printf 'FROM %s\nLABEL hal.soak=%s-%s\n' "$FIXTURE" "$pfx" "$n_built" |
        DOCKER_BUILDKIT=0 docker build -q -t "$reg_img" - 2>/dev/null)
    made_images+=("$id")
    docker push -q "$reg_img" >/dev/null
    if [[ -n $keep ]]; then docker tag "$keep" "$reg_img"; fi
}
publish

# --- the node ------------------------------------------------------------------------------
# The state dir: a small tmpfs, to fill during the run.
mount -t tmpfs -o size=2m,mode=0700 "hal-soak-$pfx" "$tmp/state"
export HAL_CONFIG=$tmp/hal.toml HAL_SERVICES_DIR=$tmp/services HAL_STATE_DIR=$tmp/state
cat >"$tmp/on_failure.sh" <<'SH'
#!/bin/sh
echo "$(date -u +%H:%M:%S) $HAL_MODULE $HAL_REASON" >>"$(dirname "$0")/on_failure.log"
SH
chmod 0755 "$tmp/on_failure.sh"
: >"$tmp/on_failure.log"

# loop MODULE SERVICE: a long-running command printing (and appending to /out) a numbered
# line every 2 s. `$$` is compose's `$`.
loop() {
    printf '%s' "run=\$\$(cut -c1-8 /proc/sys/kernel/random/uuid); i=0; while :; do i=\$\$((i+1)); l=\"soak $1/$2 \$\$run \$\$i\"; echo \"\$\$l\"; echo \"\$\$l\" >>/out/$1-$2.log; sleep 2; done"
}
# job MODULE SERVICE: a one-shot job: three numbered lines, exit 0.
job() {
    printf '%s' "run=\$\$(cut -c1-8 /proc/sys/kernel/random/uuid); for i in 1 2 3; do l=\"soak $1/$2 \$\$run \$\$i\"; echo \"\$\$l\"; echo \"\$\$l\" >>/out/$1-$2.log; done"
}
# service SERVICE COMMAND [EXTRA-YAML]: one service's YAML.
service() {
    cat <<YAML
  $1:
    image: ${IMAGE:-$FIXTURE}
    command: ["sh", "-c", $(jq -Rn --arg c "$2" '$c')]
    stop_signal: SIGKILL
    volumes: ["$tmp/out:/out", "$tmp/flags:/flag"]
    logging:
      driver: journald
      options:
        labels: "$LABELS"
${3:-}
YAML
}
keep='    restart: unless-stopped'
modules=()
for m in gw tun db api web worker cache queue batch init reg edge; do modules+=("$pfx$m"); done
stack() { # MODULE: its compose file from stdin
    mkdir -p "$tmp/services/$pfx$1"
    { echo "services:"; cat; } >"$tmp/services/$pfx$1/compose.yaml"
}
service main "$(loop gw main)" "$keep
    container_name: ${pfx}gw-main" | stack gw
service vpn "$(loop tun vpn)" "$keep
    network_mode: \"container:${pfx}gw-main\"" | stack tun
service main "if [ -e /flag/broken ]; then l=\"soak db/main \$\$(cut -c1-8 /proc/sys/kernel/random/uuid) broken\"; echo \"\$\$l\"; echo \"\$\$l\" >>/out/db-main.log; exit 3; fi; $(loop db main)" "$keep" | stack db
for m in api web worker queue edge; do service main "$(loop $m main)" "$keep" | stack $m; done
{ service main "$(loop cache main)" "$keep"; service side "$(loop cache side)" "$keep"; } | stack cache
{
    service migrate "$(job batch migrate)" '    restart: "no"'
    service app "$(loop batch app)" "$keep
    depends_on:
      migrate:
        condition: service_completed_successfully"
} | stack batch
service job "$(job init job)" '    restart: "no"' | stack init
IMAGE=$reg_img service app "$(loop reg app)" "$keep" | stack reg

# Long-running services, the targets of kills and stops: "module service".
targets=("gw main" "tun vpn" "db main" "api main" "web main" "worker main" "cache main" "cache side"
    "queue main" "batch app" "reg app" "edge main")

hook="on_failure = [\"$tmp/on_failure.sh\"]"
{
    cat <<TOML
[defaults]
pull = "never"
restart = { burst = 10, interval = "120s" }
timeout = "90s"
TOML
    for m in "${modules[@]}"; do
        printf '\n[module.%s]\n%s\n' "$m" "$hook"
        case ${m#"$pfx"} in
            db) echo 'restart = { burst = 3, interval = "30s" }' ;;
            api | worker | init) echo "requires = [\"${pfx}db\"]" ;;
            web) echo "requires = [\"${pfx}api\"]" ;;
            queue) echo "requires = [\"${pfx}cache\"]" ;;
            edge) echo "requires = [\"${pfx}web\", \"${pfx}gw\"]" ;;
            reg) echo 'pull = "missing"' ;;
        esac
    done
} >"$tmp/hal.toml"

say "${#modules[@]} modules under $tmp/services (prefix $pfx)"
t_start=$(date +%s)
"$HAL_BIN" start --all >"$tmp/start.out" 2>&1 || { cat "$tmp/start.out" >&2; say "hal start --all failed"; exit 1; }

# --- the watch -----------------------------------------------------------------------------
# Its log, each line stamped with the time (the human log has none).
stamp() { while IFS= read -r l; do printf '%(%H:%M:%S)T %s\n' -1 "$l"; done; }
watch_start() {
    local before i
    before=$(grep -c 'subscribed to container events' "$tmp/watch.log" 2>/dev/null || true)
    "$HAL_BIN" watch --interval 5s --metrics "$tmp/metrics.prom" > >(stamp >>"$tmp/watch.log") 2>&1 &
    watcher=$!
    watch_starts=$((${watch_starts:-0} + 1))
    for i in $(seq 1 300); do
        (($(grep -c 'subscribed to container events' "$tmp/watch.log" || true) > before)) && return 0
        kill -0 "$watcher" 2>/dev/null || { say "the watch ended at its start"; tail -5 "$tmp/watch.log" >&2; exit 1; }
        sleep 0.2
    done
    say "the watch did not subscribe within 60 s"
}
: >"$tmp/watch.log"
watch_start

# --- the plan ------------------------------------------------------------------------------
RANDOM=$SEED
T=$((MINUTES * 60))
plan=()                                   # "second kind argument"
add() { plan+=("$1 $2 ${3:--}"); }
broken_at=$((T / 5)) broken_for=$((T / 6 > 45 ? T / 6 : 45))
add "$broken_at" broken on
add $((broken_at + broken_for)) broken off
add $((T * 2 / 5)) watchkill
add $((T / 2)) registry
add $((T * 13 / 20)) statefull on
add $((T * 13 / 20 + 8)) kill batch/app # a module that waits on nothing: repaired while the state dir is full?
add $((T * 13 / 20 + 25)) statefull off
add $((T * 4 / 5)) watchkill
for ((k = 1; k <= ENGINE_RESTARTS; k++)); do add $((T * k / (ENGINE_RESTARTS + 1) + 7)) engine; done
kinds=(kill kill kill stop stop provider operator operator)
for ((t = 8 + RANDOM % 6; t < T - 5; t += 6 + RANDOM % 9)); do
    kind=${kinds[RANDOM % ${#kinds[@]}]}
    case $kind in
        kill | stop) # RANDOM drawn here, not in a $(…): bash reseeds it in a subshell
            target=${targets[RANDOM % ${#targets[@]}]}
            add "$t" "$kind" "${target// //}"
            ;;
        provider) add "$t" provider gw/main ;;
        operator) add "$t" operator "${modules[RANDOM % ${#modules[@]}]#"$pfx"}" ;;
    esac
done
mapfile -t plan < <(printf '%s\n' "${plan[@]}" | sort -n -s -k1,1)
say "plan (seconds from the first fault's clock):"
printf '  %s\n' "${plan[@]}" >&2

# --- the faults ----------------------------------------------------------------------------
declare -A done_by_kind=()
is_broken=0
note() { echo "$(date -u +%H:%M:%S) $*" >>"$tmp/faults.log"; say "$*"; }
container_of() { # MODULE SERVICE: the id of its first container
    docker ps -aq --filter "label=com.docker.compose.project=$pfx$1" \
        --filter "label=com.docker.compose.service=$2" | head -1
}
reg_image() { docker inspect -f '{{.Image}}' "$(container_of reg app)" 2>/dev/null || echo none; }
update_reg() { "$HAL_BIN" update --timeout 60s "${pfx}reg" >>"$tmp/update.out" 2>&1 && echo 0 || echo $?; }
engine_restart() {
    local pid i
    if ((OWN_ENGINE)); then
        own_engine_stop || exit 1
        own_engine_start
        return 0
    fi
    pid=$(cat /var/run/docker.pid)
    kill -TERM "$pid"
    for i in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { say "dockerd (pid $pid) did not stop in 60 s"; exit 1; }
    rm -f /var/run/docker.pid
    echo "=== $(date -Is) bench/soak: starting dockerd" >>/var/log/hal-dockerd.log
    setsid nohup dockerd --config-file /etc/docker/daemon.json >>/var/log/hal-dockerd.log 2>&1 </dev/null 9>&- &
    for i in $(seq 1 600); do docker info >/dev/null 2>&1 && return 0; sleep 0.1; done
    say "dockerd did not answer within 60 s"
    exit 1
}
# engine_converged T_STOP: in the background, how long after the engine's stop (T_STOP) the
# node is whole again: running, every module active and none held (while db is broken, db and
# what requires it are left out). Appends "N UP SECS" to $tmp/engine_back (UP: when the engine
# answered again); the poll's pid joins engine_polls.
engine_restarts_done=0 engine_polls=()
engine_converged() {
    engine_restarts_done=$((engine_restarts_done + 1))
    local n=$engine_restarts_done up=$(($(date +%s) - $1))
    (
        chain="^${pfx}(db|api|web|worker|init|edge)\$"
        while (($(date +%s) - $1 < 300)); do
            doc=$("$HAL_BIN" --json status 2>/dev/null || true)
            skip=$([[ -e $tmp/flags/broken ]] && echo "$chain" || echo '^$')
            if jq -e --arg skip "$skip" '(.node == "running" or $skip != "^$") and
                ([.modules[] | select(.name | test($skip) | not)] | all(.state == "active" and .held == null))' \
                <<<"$doc" >/dev/null 2>&1; then
                echo "$n $up $(($(date +%s) - $1))" >>"$tmp/engine_back"
                exit 0
            fi
            sleep 1
        done
        echo "$n $up never" >>"$tmp/engine_back"
    ) >/dev/null 2>&1 &
    engine_polls+=($!)
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
max() { if (($1 > $2)); then echo "$1"; else echo "$2"; fi; }
watch_ticks=0 hwm_max=0
fault() { # KIND ARG
    local kind=$1 arg=$2 m s id code1 code2
    m=${arg%/*} s=${arg#*/}
    case $kind in
        kill | stop)
            if [[ $m == db && $is_broken == 1 ]]; then note "skip $kind db (broken)"; return; fi
            id=$(container_of "$m" "$s")
            [[ -n $id ]] || { note "skip $kind $arg: no container"; return; }
            docker "$kind" "$id" >/dev/null 2>&1 || { note "skip $kind $arg: docker $kind failed"; return; }
            ;;
        provider) docker restart -t 0 "${pfx}gw-main" >/dev/null 2>&1 || { note "skip provider: docker restart failed"; return; } ;;
        operator)
            if [[ $is_broken == 1 && $m =~ ^(db|api|web|worker|init|edge)$ ]]; then note "skip operator $m (db broken)"; return; fi
            "$HAL_BIN" restart "$pfx$m" >>"$tmp/operator.out" 2>&1 || note "hal restart $m: exit $?"
            ;;
        watchkill)
            watch_ticks=$((watch_ticks + $(ticks "$watcher")))
            hwm_max=$(max "$hwm_max" "$(awk '/^VmHWM/ {print $2}' "/proc/$watcher/status" 2>/dev/null || echo 0)")
            kill -KILL "$watcher" 2>/dev/null || note "the watch was gone before its SIGKILL"
            wait "$watcher" 2>/dev/null || true
            watcher=""
            sleep 2
            watch_start
            ;;
        broken)
            if [[ $arg == on ]]; then
                touch "$tmp/flags/broken"
                is_broken=1
                docker kill "$(container_of db main)" >/dev/null 2>&1 || true
            else
                rm -f "$tmp/flags/broken"
                is_broken=0
                # How long db takes to be active again after its fix (a light poll, in the background).
                (
                    t=$(date +%s)
                    for _ in $(seq 1 300); do
                        if "$HAL_BIN" -q status "${pfx}db" >/dev/null 2>&1; then
                            echo $(($(date +%s) - t)) >"$tmp/db_back"
                            exit 0
                        fi
                        sleep 1
                    done
                ) &
                db_poll=$!
            fi
            ;;
        registry)
            local before during after new active=1
            before=$(reg_image)
            publish
            new=${made_images[-1]}
            registry_stop
            code1=$(update_reg)
            "$HAL_BIN" -q status "${pfx}reg" >/dev/null 2>&1 || active=0
            during=$(reg_image)
            sleep 10
            registry_start
            code2=$(update_reg)
            after=$(reg_image)
            registry_ok=$([[ $active == 1 && $during == "$before" && $after == "$new" ]] && echo 1 || echo 0)
            registry_said="\`hal update reg\` with the registry down: exit $code1, reg $( ((active)) && echo active || echo "not active"), $([[ $during == "$before" ]] && echo "its image kept" || echo "its image changed"); the registry back: exit $code2, $([[ $after == "$new" ]] && echo "the new image runs" || echo "the new image does not run")"
            note "registry: $registry_said"
            ;;
        statefull)
            if [[ $arg == on ]]; then
                dd if=/dev/zero of="$tmp/state/zz-soak-fill" bs=16k 2>/dev/null || true
                note "state dir full: $(df -k --output=avail "$tmp/state" | tail -1) KiB left"
            else
                rm -f "$tmp/state/zz-soak-fill"
            fi
            ;;
        engine)
            local t_stop
            t_stop=$(date +%s)
            engine_restart
            engine_converged "$t_stop"
            ;;
    esac
    done_by_kind[$kind]=$((${done_by_kind[$kind]:-0} + 1))
    note "$kind $arg"
}
: >"$tmp/faults.log"
registry_ok="" registry_said=""
t0=$(date +%s)
t0_rfc=$(date -u -d "@$t_start" +%Y-%m-%dT%H:%M:%SZ)
for step in "${plan[@]}"; do
    read -r at kind arg <<<"$step"
    now=$(($(date +%s) - t0))
    ((at <= now)) || sleep $((at - now))
    kill -0 "$watcher" 2>/dev/null || note "the watch is gone (before $kind)"
    fault "$kind" "$arg"
done
now=$(($(date +%s) - t0))
((T <= now)) || sleep $((T - now))
faults_secs=$(($(date +%s) - t0))

# --- settle --------------------------------------------------------------------------------
say "faults over after ${faults_secs}s; waiting up to ${SETTLE}s for the node to come back"
status_doc() { "$HAL_BIN" --json status 2>/dev/null || true; }
settled="" t_settle=$(date +%s)
while (($(date +%s) - t_settle < SETTLE)); do
    doc=$(status_doc)
    if jq -e '.node == "running" and all(.modules[]; .state == "active" and .held == null)' <<<"$doc" >/dev/null 2>&1; then
        settled=$(($(date +%s) - t_settle))
        break
    fi
    sleep 2
done
doc=$(status_doc)
printf '%s\n' "$doc" >"$tmp/status.json"

# --- checks --------------------------------------------------------------------------------
fails=0
rows=()
check() { # OK WHAT MEASURED
    rows+=("| $2 | $3 | $(if [[ $1 == 1 ]]; then echo ✓; else echo ✗; fi) |")
    [[ $1 == 1 ]] || fails=$((fails + 1))
}
node=$(jq -r '.node // "?"' <<<"$doc" 2>/dev/null || echo "?")
down=$(jq -r '[.modules[] | select(.state != "active") | "\(.name | ltrimstr("'"$pfx"'")) \(.state): \(.reason // "")"] | join("; ")' <<<"$doc" 2>/dev/null || echo "no status")
n_down=$(jq '[.modules[] | select(.state != "active")] | length' <<<"$doc" 2>/dev/null || echo "?")
check "$([[ $node == running && $n_down == 0 ]] && echo 1)" "every module active, the node running" \
    "node $node; $n_down of ${#modules[@]} not active${down:+: $down}; settled in ${settled:-never (${SETTLE}s)}${settled:+ s}"
held=$(jq -r '[.modules[] | select(.held != null) | .name | ltrimstr("'"$pfx"'")] | join(" ")' <<<"$doc" 2>/dev/null || echo "?")
check "$([[ -z $held ]] && echo 1)" "no module held" "${held:-none}"
alarms=$(awk '{print $2}' "$tmp/on_failure.log" | sed "s/^$pfx//" | sort | uniq -c | awk '{printf "%s%s×%s", (NR > 1 ? ", " : ""), $2, $1}')
false_alarms=$(awk '{print $2}' "$tmp/on_failure.log" | grep -vcx "${pfx}db" || true)
check "$([[ $false_alarms == 0 ]] && echo 1)" "on_failure ran for the injected failure (db) only, if at all" \
    "${alarms:-never}; false alarms: $false_alarms"

# Lines: what the containers appended to their files is in `hal logs`.
sleep 3 # the journal takes the last lines
cat "$tmp"/out/*.log | sort -u >"$tmp/written"
"$HAL_BIN" logs --no-prefix --since "$t0_rfc" "${modules[@]}" 2>"$tmp/logs.err" | sort -u >"$tmp/logged" || true
comm -23 "$tmp/written" "$tmp/logged" >"$tmp/lost"
n_written=$(wc -l <"$tmp/written") n_lost=$(wc -l <"$tmp/lost")
check "$([[ $n_lost == 0 && $n_written -gt 0 ]] && echo 1)" "every line the containers wrote is in \`hal logs\`" \
    "$n_written written, $n_lost lost$( ((n_lost == 0)) || echo " (first: $(head -3 "$tmp/lost" | tr '\n' ';'))")"

# State files: every one parses.
n_state=0 bad_state=()
while IFS= read -r -d '' f; do
    n_state=$((n_state + 1))
    jq -e . "$f" >/dev/null 2>&1 || bad_state+=("${f#"$tmp/state/"}")
done < <(find "$tmp/state" -type f -name '*.json' -print0)
check "$([[ ${#bad_state[@]} == 0 && $n_state -gt 0 ]] && echo 1)" "every state file parses (JSON)" \
    "$n_state files$( ((${#bad_state[@]} == 0)) || echo ", not parsing: ${bad_state[*]}")"

# Containers: one per service replica, none left `created`.
docker ps -a --filter label=com.docker.compose.project \
    --format '{{.Label "com.docker.compose.project"}} {{.Label "com.docker.compose.service"}} {{.Label "com.docker.compose.container-number"}} {{.State}}' |
    awk -v p="$pfx" 'index($1, p) == 1' >"$tmp/containers"
dups=$(awk '{print $1, $2, $3}' "$tmp/containers" | sort | uniq -d | sed "s/^$pfx//" | tr '\n' ';')
created=$(awk '$4 == "created" {print $1 "/" $2}' "$tmp/containers" | sed "s/^$pfx//" | tr '\n' ' ')
check "$([[ -z $dups && -z $created ]] && echo 1)" "no container duplicated or left \`created\`" \
    "$(wc -l <"$tmp/containers") containers; duplicated: ${dups:-none}; created: ${created:-none}"

# db, fixed, is back soon: the watch's next try of its hold, or Docker's next restart.
if ((${done_by_kind[broken]:-0} == 2)); then
    [[ -z $db_poll ]] || wait "$db_poll" 2>/dev/null || true
    db_back=$(cat "$tmp/db_back" 2>/dev/null || true)
    check "$([[ -n $db_back ]] && ((db_back <= DB_BACK_MAX)) && echo 1)" "db active again within $DB_BACK_MAX s of its fix" \
        "$(if [[ -n $db_back ]]; then echo "$db_back s after its fix"; else echo "never (polled for 300 s after its fix)"; fi)"
fi

if ((engine_restarts_done > 0)); then
    for p in "${engine_polls[@]}"; do wait "$p" 2>/dev/null || true; done
    engine_said=$(sort -n "$tmp/engine_back" 2>/dev/null | awk '{printf "%s#%s: the engine answered %s s after its stop, the node whole %s%s", (NR > 1 ? "; " : ""), $1, $2, $3, ($3 == "never" ? " (polled 300 s)" : " s after")}')
    check "$( (($(grep -c . "$tmp/engine_back" 2>/dev/null || echo 0) == engine_restarts_done)) && ! grep -q never "$tmp/engine_back" && echo 1)" \
        "the node whole again after each engine restart" "${engine_said:-no figure}"
fi

[[ -z $registry_ok ]] || check "$registry_ok" "an update during a registry outage: reg kept running, updated once the registry is back" "$registry_said"

# The watch.
if [[ -n $watcher ]] && kill -0 "$watcher" 2>/dev/null; then
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$watcher/status")
    hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$watcher/status")
    now_ticks=$(ticks "$watcher")
    cpu=$(awk -v t="$now_ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }')
    cpu_all=$(awk -v t="$((watch_ticks + now_ticks))" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }')
    up=$(ps -o etimes= -p "$watcher" | tr -d ' ')
    check 1 "the watch alive" "pid $watcher, up ${up} s: RSS $(mib "$rss") (peak $(mib "$hwm")), CPU $cpu s; all $watch_starts watches of the run: CPU $cpu_all s in $(($(date +%s) - t_start)) s, peak RSS $(mib "$(max "$hwm" "$hwm_max")")"
else
    rss="" cpu=""
    check 0 "the watch alive" "gone: $(tail -2 "$tmp/watch.log" | tr '\n' ' ')"
fi

# --- summary -------------------------------------------------------------------------------
said() { grep -cE "$1" "$tmp/watch.log" || true; }
kinds_done=$(for k in kill stop provider operator broken watchkill registry statefull engine; do
    v=${done_by_kind[$k]:-0}
    case $k in broken | statefull) v=$((v / 2)) ;; esac
    ((v == 0)) || printf '%s %s, ' "$k" "$v"
done | sed 's/, $//')
skipped=$(grep -c ' skip ' "$tmp/faults.log" || true)
metrics=$(grep -c '^hal_' "$tmp/metrics.prom" 2>/dev/null || echo 0)
cat <<MD
## Issue 50: a soak of $MINUTES minute(s), seed $SEED (bench/soak.sh)

$(date -u '+%Y-%m-%d %H:%M UTC'), hal $(git -C "$root" rev-parse --short HEAD) ($HAL_BIN), $ENGINE_DESC, load average
$(cut -d' ' -f1-3 /proc/loadavg) at the end. ${#modules[@]} modules (gw ← tun in its network namespace; db ← api ← web, db ← worker,
db ← init (a one-shot job), cache ← queue, batch (a one-shot job and an app), reg (its image from a registry), web and gw ← edge),
$(wc -l <"$tmp/containers") containers; \`hal watch --interval 5s --metrics FILE\`.

Faults over ${faults_secs} s: $kinds_done ($skipped skipped, see the plan). The watch logged $(said ': (repairing|recreating the module|restarting):') repairs, $(said ': waiting on ')
waits on a requirement, $(said ': held') holds; its metrics file had $metrics \`hal_\` lines. db, broken for ${broken_for} s (its command exiting 3), was
active again $(if [[ -s $tmp/db_back ]]; then echo "$(cat "$tmp/db_back") s after its fix"; else echo "never (polled for 300 s after its fix)"; fi).

| check | measured | |
|---|---|---|
$(printf '%s\n' "${rows[@]}")
MD
if [[ -n ${SOAK_KEEP:-} ]]; then
    mkdir -p "$SOAK_KEEP"
    cp "$tmp"/{watch.log,faults.log,on_failure.log,status.json,lost,operator.out,update.out,hal.toml,metrics.prom} "$SOAK_KEEP"/ 2>/dev/null || true
    say "kept the logs in $SOAK_KEEP"
fi
if ((fails > 0)); then
    say "$fails check(s) failed; the watch's log (last 30 lines):"
    tail -30 "$tmp/watch.log" | cut -c1-220 >&2
    exit 1
fi
say "every check passed"
