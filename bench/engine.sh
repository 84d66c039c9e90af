#!/usr/bin/env bash
# A private Docker engine for the benchmarks that restart the engine or load it
# with hundreds of containers, so that other work on the machine's own dockerd
# is not disturbed (and does not disturb the figures).
#
#   bench/engine.sh start     # prints the DOCKER_HOST to use, e.g. unix:///run/hal-bench-13/docker.sock
#   bench/engine.sh restart   # SIGTERM the engine, wait for it to exit, start it again
#   LIVE_RESTORE=true bench/engine.sh restart   # the same, the containers kept running
#                             # across it (dockerd's live-restore; the default is false)
#   bench/engine.sh stop      # stop it; its data root stays for a later start
#   bench/engine.sh purge     # stop it and remove its data root
#
# Knobs: BENCH_ENGINE_DIR (default /run/hal-bench-13: socket, pid file, exec
# root, config), BENCH_ENGINE_DATA (default /var/lib/hal-bench-13),
# BENCH_ENGINE_NETNS (default hal-bench-13: its network namespace and cgroup
# parent; set all three to run a second private engine beside another bench's), and
# BENCH_ENGINE_POOL (default 10.210.0.0/16: the networks compose makes, which
# must not overlap the main engine's pools), BENCH_ENGINE_NETNS (default hal-bench-13:
# its network namespace and cgroup parent; another name runs a second private engine
# beside the first, with the three knobs above set apart too). The engine runs with its own
# containerd, in a network namespace of its own (hal-bench-13) with a bridge of its
# own (hb13), so nothing it does to interfaces reaches the host's docker0; no iptables rules and no live-restore (a
# restart stops and restarts every container, as on a node with Docker's defaults) unless LIVE_RESTORE=true. The image
# hal-fixture:latest is copied in from the main engine at the first start.
# Needs root.
set -euo pipefail

dir=${BENCH_ENGINE_DIR:-/run/hal-bench-13}
data=${BENCH_ENGINE_DATA:-/var/lib/hal-bench-13}
pool=${BENCH_ENGINE_POOL:-10.210.0.0/16}
sock=$dir/docker.sock
netns=${BENCH_ENGINE_NETNS:-hal-bench-13}
host=unix://$sock

pid() { [[ -s $dir/docker.pid ]] && kill -0 "$(cat "$dir/docker.pid")" 2>/dev/null && cat "$dir/docker.pid"; }

config() {
    cat >"$dir/daemon.json" <<EOF
{ "default-address-pools": [ { "base": "$pool", "size": 24 } ], "live-restore": ${LIVE_RESTORE:-false} }
EOF
}

start() {
    if pid >/dev/null; then
        echo "$host"
        return
    fi
    mkdir -p "$dir" "$data"
    config
    # A network namespace of its own, with a default bridge of its own: dockerd deletes
    # a default bridge it finds stale at start-up, and in the host's namespace that was
    # the host's docker0 (with --bridge=none at every start, with --bridge=hb13 at every
    # restart), which broke every `docker run` on the machine's own engine.
    if [[ ! -e /run/netns/$netns ]]; then
        ip netns add "$netns"
        ip -n "$netns" link set lo up
    fi
    if ! ip -n "$netns" link show hb13 >/dev/null 2>&1; then
        ip -n "$netns" link add hb13 type bridge
        ip -n "$netns" addr add 10.211.0.1/24 dev hb13
        ip -n "$netns" link set hb13 up
    fi
    # setsid: the engine outlives this script and is no child of the caller's job.
    # nsenter, not `ip netns exec`: that mounts a sysfs of its own, without the cgroups dockerd needs.
    setsid nsenter --net="/run/netns/$netns" dockerd --config-file "$dir/daemon.json" --data-root "$data" --exec-root "$dir/exec" \
        --pidfile "$dir/docker.pid" -H "$host" --bridge=hb13 --iptables=false --ip-masq=false \
        --cgroup-parent "$netns" >>"$dir/dockerd.log" 2>&1 </dev/null &
    local i
    for i in $(seq 1 120); do
        docker -H "$host" version >/dev/null 2>&1 && break
        sleep 0.5
    done
    docker -H "$host" version >/dev/null 2>&1 || { echo "bench: the private engine did not start; see $dir/dockerd.log" >&2; exit 1; }
    if ! docker -H "$host" image inspect hal-fixture:latest >/dev/null 2>&1; then
        docker save hal-fixture:latest | docker -H "$host" load >/dev/null
    fi
    echo "$host"
}

stop() {
    local p
    p=$(pid) || return 0
    kill -TERM "$p"
    local i
    for i in $(seq 1 120); do
        kill -0 "$p" 2>/dev/null || return 0
        sleep 0.5
    done
    echo "bench: the private engine (pid $p) did not stop in 60 s" >&2
    exit 1
}

case ${1:-} in
start) start ;;
stop) stop ;;
restart)
    # live-restore is read when the engine stops: tell the running engine first (SIGHUP reloads it).
    if p=$(pid); then
        config
        kill -HUP "$p"
        sleep 2
    fi
    stop && start
    ;;
purge)
    # Every container first (so none is left to a shim), then the engine, then
    # what an engine killed mid-shutdown can leave: shims of its containerd and
    # its data root's bind mount.
    if pid >/dev/null; then
        docker -H "$host" ps -aq | xargs -r -n 50 docker -H "$host" rm -f >/dev/null 2>&1 || true
        docker -H "$host" network prune -f >/dev/null 2>&1 || true
    fi
    stop
    for p in $(pgrep -f -- "-address $dir/exec/containerd/containerd.sock" || true); do kill -KILL "$p" 2>/dev/null || true; done
    for m in $(awk -v d="$data" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r); do umount "$m" 2>/dev/null || umount -l "$m" || true; done
    rm -rf "$data" "$dir"
    ip netns del "$netns" 2>/dev/null || true
    ;;
*)
    echo "usage: bench/engine.sh start|restart|stop|purge" >&2
    exit 2
    ;;
esac
