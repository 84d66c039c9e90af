#!/usr/bin/env bash
# The read path on a lived-in node (issue 40): `hal status` and `hal --json status`
# of STACKS stacks × 2 services (200 by default) against one raw
# `GET /containers/json?all=1` on the engine's socket, in paired runs; peak RSS;
# and the files one call opens.
#
#   bench/readpath.sh                         # STACKS=200 PAIRS=15, a private engine
#   STACKS=100 PAIRS=9 bench/readpath.sh      # smaller, on a busy machine
#   HAL_BEFORE=/path/to/old/hal bench/readpath.sh   # also time an older binary, paired
#   DOCKER_HOST=unix:///var/run/docker.sock bench/readpath.sh   # the main engine
#
# A lived-in node, not a fresh one (a fresh state flattered hal by 0.2-0.3× last
# time): every module's ledger holds LEDGER_GENS earlier generations per service
# (written as hal writes them, with made-up ids), every 10th stack has a one-shot
# job that exited 0, and every 25th module was stopped with `hal stop`. Each
# pair runs the commands once each, back to back, in a rotated order; the figures
# are the medians of PAIRS runs and the median of the per-pair ratios. The file
# count is strace's successful `openat` calls of one call (all, and those in the
# state directory and the services root).
# Prints a markdown section on stdout; progress goes to stderr.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
STACKS=${STACKS:-200}
PAIRS=${PAIRS:-15}
RSS_RUNS=${RSS_RUNS:-5}
LEDGER_GENS=${LEDGER_GENS:-8}
# QUIET_SECS (120): the longest wait for idle CPUs before the runs (bench_quiet).

private=false
if [[ -z ${DOCKER_HOST:-} ]]; then
    DOCKER_HOST=$(bench/engine.sh start)
    private=true
fi
export DOCKER_HOST

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_init readpath hbrp jq curl docker strace /usr/bin/time
sock=$ENGINE_SOCK
readpath_cleanup() {
    bench_cleanup
    if $private && [[ -z ${BENCH_KEEP_ENGINE:-} ]]; then
        "$root/bench/engine.sh" purge || true
    fi
}
trap - EXIT

# --- a lived-in node -----------------------------------------------------------
bench_stacks
bench_hal_env
cd "$tmp"
jobs=0
for i in "${!projects[@]}"; do
    if (((i + 1) % 10 == 0)); then
        cat >>"$tmp/services/${projects[$i]}/compose.yaml" <<'YAML'
  job:
    image: hal-fixture:latest
    command: ["sh", "-c", "exit 0"]
    restart: "no"
YAML
        jobs=$((jobs + 1))
    fi
done
say "starting $STACKS stacks with hal on $DOCKER_HOST"
"$HAL_BIN" start --all --jobs 16 >/dev/null
stopped=()
for i in "${!projects[@]}"; do
    (((i + 1) % 25 == 0)) && stopped+=("${projects[$i]}")
done
((${#stopped[@]} == 0)) || "$HAL_BIN" stop "${stopped[@]}" >/dev/null
# Earlier generations in every ledger, as hal records them (created, first and
# last seen in the past; the newest KEEP per replica stay).
now=$(date +%s)
for f in "$tmp/state/ledger/"*.json; do
    [[ $(basename "$f") == .* ]] && continue
    jq --argjson n "$LEDGER_GENS" --argjson now "$now" '
        .containers as $c
        | ($c | map({service, number}) | unique) as $replicas
        | [range(0; $n) as $k | $replicas[] | . as $r
            | {id: ("\($k)\($r.number)" + ("0" * 64))[0:64],
               service: $r.service, number: $r.number,
               created: ($now - 86400 * ($n - $k)), first_seen: ($now - 86400 * ($n - $k)),
               last_seen: ($now - 86400 * ($n - $k) + 3600)}]
        | {containers: (. + $c)}' "$f" >"$f.new"
    mv "$f.new" "$f"
done
"$HAL_BIN" status >/dev/null || true
containers=$(curl -sf --unix-socket "$sock" "http://x/v1.41/containers/json?all=1" | jq length)
exited=$(curl -sf --unix-socket "$sock" 'http://x/v1.41/containers/json?all=1&filters=%7B%22status%22%3A%5B%22exited%22%5D%7D' | jq length)
# What --json's contract costs the engine: an exited container is inspected (its
# exact start and finish times are in no list), so its anchor is the list call and
# those inspects, by one curl on one connection.
inspects=()
for id in $(curl -sf --unix-socket "$sock" 'http://x/v1.41/containers/json?all=1&filters=%7B%22status%22%3A%5B%22exited%22%5D%7D' | jq -r '.[].Id'); do
    inspects+=("http://x/v1.41/containers/$id/json")
done
gens=$(cat "$tmp/state/ledger/"[!.]*.json | jq -s '[.[].containers | length] | add')
sleep 15 # containers that have been up a while
echo "$tmp $DOCKER_HOST"
