#!/usr/bin/env bash
# Downtime of a good image update whose module holds 1 GiB of data (issue 48):
# `hal update` (which stops the service and checkpoints its data first) beside
# `hal update --no-checkpoint` and the anchor `docker compose pull && docker
# compose up -d`, one run each.
#
#   bench/update_downtime.sh            # DATA_MIB=1024
#
# Two stacks of one service `app` (busybox httpd serving a file on a port
# published on 127.0.0.1, a named volume `data` holding DATA_MIB MiB of
# non-zero bytes, so that no hole makes the copy cheap): one driven by hal, its
# twin by plain compose, each pulling its own repository of the local registry.
# hal's state directory (where checkpoints live) is on the same filesystem as
# the engine's volumes. Probe and downtime as in bench/update.sh: the first
# failed probe to the first success after the last failure.
#
# Prints a markdown section on stdout; progress goes to stderr.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
DATA_MIB=${DATA_MIB:-1024}
REGISTRY=${REGISTRY:-127.0.0.1:5000}

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_init update_downtime hbud docker curl awk date
hal_m="${pfx}h" twin="${pfx}c"
probe_pid=""
made=()
# shellcheck disable=SC2317 # called by the trap
cleanup() {
    [[ -z $probe_pid ]] || kill "$probe_pid" 2>/dev/null || true
    bench_cleanup
    docker volume rm -f "${hal_m}_data" "${twin}_data" >/dev/null 2>&1 || true
    docker image ls --format '{{.Repository}}:{{.Tag}}' | grep -E "^(hal-previous|$REGISTRY/hal-bench)/$pfx" |
        xargs -r docker rmi >/dev/null 2>&1 || true
    [[ ${#made[@]} -eq 0 ]] || docker rmi -f "${made[@]}" >/dev/null 2>&1 || true
}
trap cleanup EXIT
curl -fsS -o /dev/null "http://$REGISTRY/v2/" || { say "no registry on $REGISTRY (scripts/provision.sh)"; exit 1; }
bench_hal_env
cd "$tmp"
hal_img="$REGISTRY/hal-bench/$hal_m:latest" twin_img="$REGISTRY/hal-bench/$twin:latest"
hal_port=$((20000 + $$ % 20000)) twin_port=$((20001 + $$ % 20000))

stack_yaml() { # IMAGE PORT
    cat <<YAML
volumes:
  data: {}
services:
  app:
    image: $1
    command: ["sh", "-c", "mkdir -p /www; echo ok >/www/index.html; exec httpd -f -p 8080 -h /www"]
    ports: ["127.0.0.1:$2:8080"]
    volumes: ["data:/data"]
    stop_signal: SIGKILL
    healthcheck:
      test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/"]
      interval: 1s
      timeout: 2s
      retries: 2
YAML
}

fill() { # VOLUME: DATA_MIB MiB of non-zero bytes
    local mp
    mp=$(docker volume inspect -f '{{.Mountpoint}}' "$1")
    { yes 0123456789abcdef || true; } | head -c "$((DATA_MIB << 20))" >"$mp/blob"
    sync
}
round() { # PORT COMMAND...: "downtime took"
    local port=$1 t0 took
    shift
    [[ $(serving "$port" 30) == 1 ]] || { say "not serving before the update"; exit 1; }
    probe_start "$port"
    sleep 0.3
    t0=$(date +%s%3N)
    "$@" >>run.out 2>&1 || { say "$* failed:"; tail -5 run.out >&2; exit 1; }
    took=$(($(date +%s%3N) - t0))
    [[ $(serving "$port" 60) == 1 ]] && sleep 0.2
    probe_stop
    echo "$(downtime) $took"
}
compose_update() { (cd "twin/$twin" && docker compose -p "$twin" pull -q && docker compose -p "$twin" up -d); }

mkdir -p "services/$hal_m" "twin/$twin"
stack_yaml "$hal_img" "$hal_port" >"services/$hal_m/compose.yaml"
stack_yaml "$twin_img" "$twin_port" >"twin/$twin/compose.yaml"
printf '[defaults]\nrestart = { burst = 100000, interval = "1s" }\ncheckpoint_max = "4GiB"\n' >"$HAL_CONFIG"
publish
"$HAL_BIN" start --pull always "$hal_m" >/dev/null
(cd "twin/$twin" && docker compose -p "$twin" up -d --quiet-pull) >/dev/null 2>&1
fill "${hal_m}_data"
fill "${twin}_data"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
sync
publish
read -r d_ckp t_ckp < <(round "$hal_port" "$HAL_BIN" update --timeout 120s "$hal_m")
say "hal update (checkpoint): down $d_ckp ms, command $t_ckp ms"
ckp_bytes=$(du -sb "$HAL_STATE_DIR/checkpoints/$hal_m" | cut -f1)
sync
publish
read -r d_no t_no < <(round "$hal_port" "$HAL_BIN" update --no-checkpoint --timeout 120s "$hal_m")
say "hal update --no-checkpoint: down $d_no ms, command $t_no ms"
sync
read -r d_c t_c < <(round "$twin_port" compose_update)
say "compose pull && up -d: down $d_c ms, command $t_c ms"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
fs=$(df --output=fstype "$HAL_STATE_DIR" | tail -1 | tr -d ' ')
cat <<EOF
## Issue 48: downtime of a good update with a 1 GiB checkpoint, \`--no-checkpoint\`, and \`docker compose pull && up -d\`

\`bench/update_downtime.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'), hal $(git -C "$OLDPWD" rev-parse --short HEAD 2>/dev/null || echo unknown), $(case $HAL_BIN in */release/*) echo release build ;; *) echo "binary $HAL_BIN" ;; esac)), engine: $ENGINE_DESC, one run each.
One service (busybox httpd on a published port) with a named volume holding $DATA_MIB MiB of non-zero bytes; a new image in the
local registry before each update. Checkpoints are on $fs (the state directory and the engine's volumes share it).
Load average (1, 5, 15 min): $load_before before → $load_after after.

| update | downtime | command took |
|---|---|---|
| \`hal update\` (stops \`app\`, checkpoints $(awk -v b="$ckp_bytes" 'BEGIN { printf "%.2f GiB", b / 1073741824 }'), recreates) | $d_ckp ms | $t_ckp ms |
| \`hal update --no-checkpoint\` | $d_no ms | $t_no ms |
| \`docker compose pull && docker compose up -d\` | $d_c ms | $t_c ms |
EOF
