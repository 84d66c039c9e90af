#!/usr/bin/env bash
# Downtime of an image update: `hal update` beside the anchor
# `docker compose pull && docker compose up -d` on the same stack, for a good
# new image and for a bad one (its process exits 1).
#
#   bench/update.sh                 # RUNS=5 good rounds, BAD_RUNS=3 bad rounds
#   RUNS=9 BAD_RUNS=5 OBSERVE=30 bench/update.sh
#
# Two identical stacks of one service `app` (busybox httpd serving a file on a
# port published on 127.0.0.1, restart: unless-stopped, a healthcheck that
# fetches the page every 1s): one driven by hal, its twin by plain compose. Each
# pulls its own repository of the local registry (127.0.0.1:5000), so neither
# sees the other's pull. Each round builds a new image of the fixture, pushes
# it to both repositories (the node has not pulled it), then updates the hal
# stack, then the twin, one after the other.
#
# The probe: `curl -fs --max-time 0.5 http://127.0.0.1:PORT/` in a loop with a
# 20 ms pause (its own period is printed: about 25-40 ms), from before the
# update until the page is served again. Downtime is the time from the first
# probe that failed to the first that succeeded after the last failure: for
# hal's bad update, until the rollback serves again; for compose's bad update
# there is no such probe: the new container restarts in a loop, and after the
# command returned the page is still not served OBSERVE seconds later ("until
# a person acts"). After each compose bad round the script plays the person
# (tags the previous image and runs `up -d` again), untimed.
#
# Prints a markdown section on stdout (median, min-max, runs, load average);
# progress goes to stderr.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=${RUNS:-5}
BAD_RUNS=${BAD_RUNS:-3}
OBSERVE=${OBSERVE:-20} # seconds compose's bad update is watched after its command returned
REGISTRY=${REGISTRY:-127.0.0.1:5000}

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_init update hbup docker curl awk date
hal_m="${pfx}h" twin="${pfx}c"
probe_pid=""
made=()
# shellcheck disable=SC2317 # called by the trap
cleanup() {
    [[ -z $probe_pid ]] || kill "$probe_pid" 2>/dev/null || true
    bench_cleanup # the containers first: an image in use is not removed
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

# stack_yaml IMAGE PORT: the one-service stack.
stack_yaml() {
    cat <<YAML
services:
  app:
    image: $1
    command: ["sh", "-c", "if [ \"\$\$BEHAVE\" = exit ]; then echo bad image; exit 1; fi; mkdir -p /www; echo ok >/www/index.html; exec httpd -f -p 8080 -h /www"]
    ports: ["127.0.0.1:$2:8080"]
    restart: unless-stopped
    healthcheck:
      test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/"]
      interval: 1s
      timeout: 2s
      retries: 2
YAML
}

# period: the probe's median period in ms.
period() {
    awk 'NR > 1 { print $1 - p } { p = $1 }' probe.log | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] + 0 }'
}
stats() { # numbers on stdin -> "median min max n"
    sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%d %d %d %d\n", m, v[1], v[NR], NR }'
}

# One timed update: SIDE (hal|compose) and what the round expects.
update_hal() { "$HAL_BIN" update --timeout 60s "$hal_m" >>hal.out 2>&1 || echo "exit $?" >>hal.out; }
update_compose() {
    (cd "twin/$twin" && docker compose -p "$twin" pull -q && docker compose -p "$twin" up -d) >>compose.out 2>&1 || true
}
# round SIDE PORT: probes around one update; prints "downtime took period".
round() {
    local side=$1 port=$2 t0 took down
    [[ $(serving "$port" 30) == 1 ]] || { say "$side: not serving before the update"; exit 1; }
    probe_start "$port"
    sleep 0.3
    t0=$(date +%s%3N)
    "update_$side"
    took=$(($(date +%s%3N) - t0))
    if [[ $(serving "$port" "$OBSERVE") == 1 ]]; then sleep 0.2; fi
    probe_stop
    down=$(downtime)
    echo "$down $took $(period)"
}

mkdir -p "services/$hal_m" "twin/$twin"
stack_yaml "$hal_img" "$hal_port" >"services/$hal_m/compose.yaml"
stack_yaml "$twin_img" "$twin_port" >"twin/$twin/compose.yaml"
publish good
"$HAL_BIN" start --pull always "$hal_m" >/dev/null
(cd "twin/$twin" && docker compose -p "$twin" up -d --quiet-pull) >/dev/null 2>&1
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: >good-hal.ms
: >good-compose.ms
: >periods.ms
for k in $(seq 1 "$RUNS"); do
    publish good
    for side in hal compose; do
        port=$hal_port
        [[ $side == compose ]] && port=$twin_port
        read -r down took per < <(round "$side" "$port")
        [[ $down != down ]] || { say "good round $k: $side still down after ${OBSERVE}s"; exit 1; }
        echo "$down" >>"good-$side.ms"
        echo "$per" >>periods.ms
        say "good round $k: $side down $down ms (command $took ms, probe every $per ms)"
    done
done
: >bad-hal.ms
compose_bad=()
for k in $(seq 1 "$BAD_RUNS"); do
    publish exit
    read -r down took per < <(round hal "$hal_port")
    [[ $down != down ]] || { say "bad round $k: hal's rollback did not serve within ${OBSERVE}s"; tail -5 hal.out >&2; exit 1; }
    grep -q "exit 1" <(tail -1 hal.out) || say "bad round $k: hal update did not exit 1"
    echo "$down" >>bad-hal.ms
    echo "$per" >>periods.ms
    say "bad round $k: hal down $down ms until the rollback served (command $took ms)"
    read -r down took per < <(round compose "$twin_port")
    compose_bad+=("$down")
    say "bad round $k: compose: $down after ${OBSERVE}s (command $took ms)"
    # The person acts (untimed): the previous image back, up again.
    prev=$(docker inspect -f '{{.Image}}' "$(docker ps -aq --filter "label=com.docker.compose.project=$hal_m" | head -1)")
    docker tag "$prev" "$twin_img"
    (cd "twin/$twin" && docker compose -p "$twin" up -d) >/dev/null 2>&1
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
still_down=0
for d in "${compose_bad[@]}"; do [[ $d == down ]] && still_down=$((still_down + 1)); done

read -r ghm ghmin ghmax ghn < <(stats <good-hal.ms)
read -r gcm gcmin gcmax gcn < <(stats <good-compose.ms)
read -r bhm bhmin bhmax bhn < <(stats <bad-hal.ms)
read -r pm _ _ _ < <(stats <periods.ms)
cat <<EOF
## Issue 32: downtime of an image update, \`hal update\` beside \`docker compose pull && docker compose up -d\`

\`bench/update.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'), hal $(git -C "$OLDPWD" rev-parse --short HEAD 2>/dev/null || echo unknown), $(case $HAL_BIN in */release/*) echo release build ;; *) echo "binary $HAL_BIN" ;; esac)), engine: $ENGINE_DESC, $(docker compose version --short 2>/dev/null | sed 's/^/compose /').
One service (busybox httpd on a published port, \`restart: unless-stopped\`, a healthcheck fetching the page every 1 s), its
image in the local registry; the same stack twice, one updated by hal, one by the anchor, each from its own repository, a new
image pushed to both before each round. Probe: \`curl -fs --max-time 0.5\` of the page in a loop (median period $pm ms); downtime
is the first failed probe to the first success after the last failure. Load average (1, 5, 15 min): $load_before before → $load_after after.

| update | tool | downtime median | min – max | runs |
|---|---|---|---|---|
| good image | \`hal update\` | $ghm ms | $ghmin – $ghmax ms | $ghn |
| good image | \`docker compose pull && docker compose up -d\` | $gcm ms | $gcmin – $gcmax ms | $gcn |
| bad image (exits 1) | \`hal update\`: down until the rollback serves | $bhm ms | $bhmin – $bhmax ms | $bhn |
| bad image (exits 1) | \`docker compose pull && docker compose up -d\` | still down ${OBSERVE} s after the command returned in $still_down of ${#compose_bad[@]} runs: until a person acts | | ${#compose_bad[@]} |
EOF
