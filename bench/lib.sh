# Shared setup for the bench/ scripts: source it, then call bench_init.
# shellcheck shell=bash

# The repository's root, whatever the caller's directory is by then.
bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# bench_private_engine: unless DOCKER_HOST is set, starts the private engine
# (bench/engine.sh start, its BENCH_ENGINE_* knobs) and uses it. Exports
# DOCKER_HOST and sets $private (true when the engine is the private one). Call
# it before bench_init.
bench_private_engine() {
    private=false
    if [[ -z ${DOCKER_HOST:-} ]]; then
        DOCKER_HOST=$("$bench_root/bench/engine.sh" start)
        private=true
    fi
    export DOCKER_HOST
}

# bench_private_cleanup: bench_cleanup from the repository's root, then the
# private engine purged (unless BENCH_KEEP_ENGINE is set): the EXIT trap of a
# script that called bench_private_engine, or the last call of its own.
bench_private_cleanup() {
    cd "$bench_root"
    bench_cleanup
    if $private && [[ -z ${BENCH_KEEP_ENGINE:-} ]]; then
        "$bench_root/bench/engine.sh" purge || true
    fi
}

# bench_init NAME PREFIX TOOL...: builds hal unless HAL_BIN is set, checks the
# tools, picks the engine (bench_engine), makes $tmp, sets $pfx (unique project
# prefix), say(), and a trap that removes every container and network whose
# project starts with $pfx.
bench_init() {
    local name=$1 prefix=$2
    shift 2
    bench_engine
    if [[ -z ${HAL_BIN:-} ]]; then
        cargo build --release --quiet
        HAL_BIN=${CARGO_TARGET_DIR:-target}/release/hal
    fi
    HAL_BIN=$(realpath "$HAL_BIN")
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install $*)" >&2; exit 1; }
    done
    tmp=$(mktemp -d "/tmp/hal-bench-$name.XXXXXX")
    pfx="$prefix$$x"
    BENCH_NAME=$name
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
}

say() { echo "bench/$BENCH_NAME: $*" >&2; }

# bench_engine: ENGINE=docker (the default: DOCKER_HOST as set, else /var/run/docker.sock)
# or ENGINE=podman (the rootful Podman service scripts/provision.sh runs; PODMAN_SOCK
# overrides its socket). Exports DOCKER_HOST, which hal, compose and the docker CLI all
# follow, and sets ENGINE_SOCK (for raw calls with curl) and ENGINE_DESC (name, version, API).
bench_engine() {
    ENGINE=${ENGINE:-docker}
    case $ENGINE in
        docker)
            if [[ ${DOCKER_HOST:-} == unix://* ]]; then
                ENGINE_SOCK=${DOCKER_HOST#unix://}
            else
                ENGINE_SOCK=/var/run/docker.sock
            fi
            ;;
        podman) ENGINE_SOCK=${PODMAN_SOCK:-/run/hal-ci/podman.sock} ;;
        *) echo "bench: ENGINE=$ENGINE: want docker or podman" >&2; exit 1 ;;
    esac
    [[ -S $ENGINE_SOCK ]] || { echo "bench: no $ENGINE socket at $ENGINE_SOCK (scripts/provision.sh)" >&2; exit 1; }
    [[ $ENGINE == docker && -n ${DOCKER_HOST:-} && ${DOCKER_HOST} != unix://* ]] ||
        export DOCKER_HOST=unix://$ENGINE_SOCK
    ENGINE_DESC="$ENGINE $(docker version --format '{{.Server.Version}} (API {{.Server.APIVersion}})' 2>/dev/null)"
}

bench_cleanup() {
    local ids nets
    ids=$(docker ps -a --filter label=com.docker.compose.project \
        --format '{{.ID}} {{.Label "com.docker.compose.project"}}' | awk -v p="$pfx" 'index($2, p) == 1 {print $1}')
    [[ -z $ids ]] || docker rm -f $ids >/dev/null 2>&1 || true
    nets=$(docker network ls --format '{{.Name}}' | grep "^$pfx" || true)
    [[ -z $nets ]] || docker network rm $nets >/dev/null 2>&1 || true
    rm -rf "$tmp"
}

# bench_stack PROJECT: the standard stack under $tmp/services.
bench_stack() {
    mkdir -p "$tmp/services/$1"
    bench_stack_yaml >"$tmp/services/$1/compose.yaml"
}

# bench_stacks: $STACKS standard stacks $pfx01, $pfx02, ...; their names in projects.
bench_stacks() {
    local i
    projects=()
    for i in $(seq -w 1 "$STACKS"); do
        projects+=("$pfx$i")
        bench_stack "$pfx$i"
    done
}

# bench_stack_yaml: the standard stack's compose file, 2 services sleeping, fast to stop.
bench_stack_yaml() {
    cat <<'YAML'
services:
  a:
    image: hal-fixture:latest
    command: ["sleep", "100000"]
    restart: unless-stopped
    stop_signal: SIGKILL
  b:
    image: hal-fixture:latest
    command: ["sleep", "100000"]
    restart: unless-stopped
    stop_signal: SIGKILL
YAML
}

# bench_hal_env: hal's config (no pulls, a limit that never bites), services
# root and state dir under $tmp, exported.
bench_hal_env() {
    mkdir -p "$tmp/services" "$tmp/state"
    cat >"$tmp/hal.toml" <<'TOML'
[defaults]
pull = "never"
restart = { burst = 100000, interval = "1s" }
TOML
    export HAL_CONFIG=$tmp/hal.toml HAL_SERVICES_DIR=$tmp/services HAL_STATE_DIR=$tmp/state
}

# bench_quiet [SECS]: waits (up to SECS, 300 by default) until the machine's CPUs were
# at least 90 % idle over 5 s: after hundreds of containers start, the engine and its
# shims keep working for a while, and a timing taken then measures that, not hal.
# Prints how long it waited.
bench_quiet() {
    local limit=${1:-300} t0=$SECONDS idle total a b
    while ((SECONDS - t0 < limit)); do
        a=$(awk '/^cpu / {print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat)
        sleep 5
        b=$(awk '/^cpu / {print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat)
        idle=$((${b% *} - ${a% *}))
        total=$((${b#* } - ${a#* }))
        ((total > 0 && idle * 100 >= total * 90)) && break
    done
    echo $((SECONDS - t0))
}

# bench_rss_max CMD...: the largest peak RSS (KiB) of $RSS_RUNS runs of CMD.
bench_rss_max() {
    local max=0 k v
    for k in $(seq 1 "$RSS_RUNS"); do
        v=$(/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1)
        ((v > max)) && max=$v
    done
    echo "$max"
}

# Report helpers over $tmp/pooled.json (hyperfine results pooled by command name).
get() { jq -r --arg k "$1" ".[\$k].$2" "$tmp/pooled.json"; }
fmt() { awk -v s="$1" 'BEGIN { if (s >= 1) printf "%.2f s", s; else printf "%.1f ms", s * 1000 }'; }
row() { # NAME SHOWN: a markdown row of median, mean ± sd, min, runs
    printf '| %s | %s | %s ± %s | %s | %s |\n' "$2" "$(fmt "$(get "$1" median)")" \
        "$(fmt "$(get "$1" mean)")" "$(fmt "$(get "$1" sd)")" "$(fmt "$(get "$1" min)")" "$(get "$1" n)"
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
mark() { if [[ $1 == 1 ]]; then echo "✓"; else echo "✗"; fi; }

# The update benchmarks' (update.sh, update_downtime.sh) image and probe.
# publish [BEHAVE]: a new image of the fixture (with ENV BEHAVE when given)
# pushed to both repositories, $hal_img and $twin_img; the node's tags stay
# where they were (only a pull brings it). Its id is added to the caller's `made`.
n_built=0
publish() {
    local keep_h keep_t id behave=""
    if [[ -n ${1:-} ]]; then behave="ENV BEHAVE=$1"$'\n'; fi
    keep_h=$(docker image inspect -f '{{.Id}}' "$hal_img" 2>/dev/null || true)
    keep_t=$(docker image inspect -f '{{.Id}}' "$twin_img" 2>/dev/null || true)
    n_built=$((n_built + 1))
    id=$(printf 'FROM hal-fixture:latest\n%sLABEL hal.bench=%s-%s\n' "$behave" "$pfx" "$n_built" |
        DOCKER_BUILDKIT=0 docker build -q -t "$hal_img" - 2>/dev/null)
    made+=("$id")
    docker tag "$id" "$twin_img"
    docker push -q "$hal_img" >/dev/null
    docker push -q "$twin_img" >/dev/null
    if [[ -n $keep_h ]]; then docker tag "$keep_h" "$hal_img"; fi
    if [[ -n $keep_t ]]; then docker tag "$keep_t" "$twin_img"; fi
}

# probe_start PORT: the probe loop, "unix-ms 1|0" lines to probe.log.
probe_start() {
    local url="http://127.0.0.1:$1/"
    (while :; do
        t=$(date +%s%3N)
        if curl -fs -o /dev/null --max-time 0.5 "$url"; then echo "$t 1"; else echo "$t 0"; fi
        sleep 0.02
    done) >probe.log &
    probe_pid=$!
}
probe_stop() {
    kill "$probe_pid" 2>/dev/null || true
    wait "$probe_pid" 2>/dev/null || true
    probe_pid=""
}
# serving PORT SECS: waits until the page is served (1), or SECS passed (0).
serving() {
    local deadline=$((SECONDS + $2))
    while ((SECONDS < deadline)); do
        curl -fs -o /dev/null --max-time 0.5 "http://127.0.0.1:$1/" && { echo 1; return; }
        sleep 0.02
    done
    echo 0
}
# downtime: ms from the first failed probe to the first success after the last
# failure; "0" when no probe failed, "down" when none succeeded after.
downtime() {
    awk '$2 == 0 { if (!f) f = $1; last0 = NR } { t[NR] = $1; ok[NR] = $2 }
        END {
            if (!f) { print 0; exit }
            for (i = last0 + 1; i <= NR; i++) if (ok[i]) { print t[i] - f; exit }
            print "down"
        }' probe.log
}
