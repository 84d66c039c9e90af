#!/usr/bin/env bash
# Reaction time of `hal watch`: from a container's death to that container
# running again, beside the floor (a bare `docker start` of the same kind of
# container, right after its death), on stacks of 2 and 10 services.
#
#   bench/reaction.sh              # KILLS=20 SIZES="2 10"
#   ENGINE=podman bench/reaction.sh  # against the rootful Podman service (bench/lib.sh):
#                                    # issue 27's goal is its median within 2x Docker's
#
# For each size N, two identical stacks of N services (`sleep`, restart:
# unless-stopped, stop_signal SIGKILL): one started by hal and supervised by
# `hal watch --interval 1h` (so no full pass helps: only the engine's event can
# start the repair), and a twin started by plain compose, which hal never
# touches (no desired state). KILLS rounds, each: `docker kill` a container of
# the supervised stack (the services in turn) and wait for watch's
# "restarted, active" line; then `docker kill` the twin's container and
# `docker start` it at once (the floor). Both times are the container's own:
# State.StartedAt of the new run minus State.FinishedAt of the dead one.
# Every round is checked: the killed container keeps its ID (started again, not
# recreated) and every other container of the stack keeps its ID and StartedAt.
# Prints a markdown section on stdout (median and worst, load average around
# each size); progress goes to stderr.
# Goal (issue 14): median within 2x the floor; no healthy container recreated.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
KILLS=${KILLS:-20}
SIZES=${SIZES:-2 10}
REPAIR_WAIT=${REPAIR_WAIT:-60} # seconds a repair may take before the run fails

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_init reaction hbre docker awk date
watch_pid=""
trap '[[ -z $watch_pid ]] || kill "$watch_pid" 2>/dev/null; bench_cleanup' EXIT
bench_hal_env
cd "$tmp"

# stack_yaml N: N idle services s01..sNN.
stack_yaml() {
    local i
    echo "services:"
    for i in $(seq 1 "$1"); do
        cat <<YAML
  $(printf 's%02d' "$i"):
    image: hal-fixture:latest
    command: ["sleep", "100000"]
    restart: unless-stopped
    stop_signal: SIGKILL
YAML
    done
}

ms() { date -u +%s%3N -d "$1"; }
# took CONTAINER: milliseconds from its last death to its current start.
took() {
    local f s
    read -r f s < <(docker inspect -f '{{.State.FinishedAt}} {{.State.StartedAt}}' "$1")
    echo $(($(ms "$s") - $(ms "$f")))
}
running() { [[ $(docker inspect -f '{{.State.Running}}' "$1") == true ]]; }
identities() { # PROJECT: "name id startedAt" of every container, sorted
    docker ps -a --filter "label=com.docker.compose.project=$1" --format '{{.Names}}' | sort |
        while read -r c; do docker inspect -f '{{.Name}} {{.Id}} {{.State.StartedAt}}' "$c"; done
}
stats() { # numbers on stdin -> "median worst"
    sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%d %d\n", m, v[NR] }'
}

rows=()
for n in $SIZES; do
    hal_m="${pfx}h$n" twin="${pfx}t$n"
    mkdir -p "services/$hal_m" "twin/$twin"
    stack_yaml "$n" >"services/$hal_m/compose.yaml"
    stack_yaml "$n" >"twin/$twin/compose.yaml"
    "$HAL_BIN" module start "$hal_m" >/dev/null
    docker compose -p "$twin" -f "twin/$twin/compose.yaml" up -d --quiet-pull >/dev/null 2>&1
    "$HAL_BIN" watch --interval 1h >"watch-$n.log" 2>&1 &
    watch_pid=$!
    # "docker: subscribed to container events" (or the engine's own name): the event stream is open.
    until grep -Eqs "^[a-z]+: subscribed to container events" "watch-$n.log"; do
        kill -0 "$watch_pid" 2>/dev/null || { say "hal watch exited:"; cat "watch-$n.log" >&2; exit 1; }
        sleep 0.1
    done
    sleep 1
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    : >"hal-$n.ms"
    : >"floor-$n.ms"
    bad=0
    for k in $(seq 1 "$KILLS"); do
        svc=$(printf 's%02d' $(((k - 1) % n + 1)))
        # Under watch.
        victim="$hal_m-$svc-1"
        before=$(identities "$hal_m")
        done_before=$(grep -c "restarted, active" "watch-$n.log" || true)
        docker kill "$victim" >/dev/null
        deadline=$((SECONDS + REPAIR_WAIT))
        until [[ $(grep -c "restarted, active" "watch-$n.log" || true) -gt $done_before ]]; do
            ((SECONDS < deadline)) || { say "no repair of $victim within ${REPAIR_WAIT}s"; tail -5 "watch-$n.log" >&2; exit 1; }
            sleep 0.05
        done
        running "$victim" || { say "$victim is not running after its repair"; exit 1; }
        took "$victim" >>"hal-$n.ms"
        after=$(identities "$hal_m")
        # Only the victim's StartedAt may change; its ID and everyone else's stay.
        diff_lines=$(diff <(echo "$before") <(echo "$after") | grep -c '^[<>]' || true)
        if [[ $diff_lines -ne 2 ]] || [[ $(echo "$before" | grep "/$victim " | cut -d' ' -f2) != $(echo "$after" | grep "/$victim " | cut -d' ' -f2) ]]; then
            say "round $k: more than $victim changed:"
            diff <(echo "$before") <(echo "$after") >&2 || true
            bad=$((bad + 1))
        fi
        # The floor: the twin's container, started by hand as soon as it is dead.
        victim="$twin-$svc-1"
        docker kill "$victim" >/dev/null
        docker start "$victim" >/dev/null
        took "$victim" >>"floor-$n.ms"
        say "size $n round $k: hal $(tail -1 "hal-$n.ms") ms, floor $(tail -1 "floor-$n.ms") ms"
    done
    load_after=$(cut -d' ' -f1-3 /proc/loadavg)
    kill "$watch_pid"
    wait "$watch_pid" || true
    watch_pid=""
    read -r hm hw < <(stats <"hal-$n.ms")
    read -r fm fw < <(stats <"floor-$n.ms")
    ratio=$(awk -v a="$hm" -v b="$fm" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
    met=$(awk -v r="$ratio" -v bad="$bad" 'BEGIN { print (r <= 2 && bad == 0) ? 1 : 0 }')
    rows+=("| $n | $KILLS | $hm ms | $hw ms | $fm ms | $fw ms | ${ratio}x | $bad | $load_before → $load_after | $(mark "$met") |")
    docker compose -p "$twin" -f "twin/$twin/compose.yaml" down -t 0 >/dev/null 2>&1 || true
    "$HAL_BIN" --yes module stop "$hal_m" >/dev/null || true
done

cat <<EOF
## Reaction time: \`hal watch\` repairs a killed container ($ENGINE)

\`bench/reaction.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'), hal $(git -C "$OLDPWD" rev-parse --short HEAD 2>/dev/null || echo unknown)), engine: $ENGINE_DESC.
Death to running again, from the container's own \`State.FinishedAt\` and \`State.StartedAt\`; the floor is the
same kind of container in an unsupervised twin stack, \`docker kill\` then \`docker start\` at once. \`hal watch
--interval 1h\`: only the engine's \`die\` event starts a repair. "changed" counts rounds in which anything but
the killed container's StartedAt changed (another container's ID or StartedAt, or the killed one's ID).
Goal (issue 14): median within 2x the floor, no healthy container recreated.

| services | kills | hal median | hal worst | floor median | floor worst | median / floor | changed | load average (1, 5, 15 min) before → after | |
|---|---|---|---|---|---|---|---|---|---|
EOF
printf '%s\n' "${rows[@]}"
