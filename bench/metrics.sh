#!/usr/bin/env bash
# The cost of hal's Prometheus metrics (issue 28) at STACKS modules (200 by default):
#  1. `hal status --format prometheus` against `hal status` (hyperfine, the table);
#  2. `hal watch --interval 1s --resync 1s` (a full read of every module each second)
#     for WATCH_SECS, with and without `--metrics`: CPU per pass, from /proc.
# The stacks are made but not started (no containers: the read is one list call
# either way, and the engine is shared); the file covers every module all the same.
#
#   bench/metrics.sh                 # STACKS=200 WATCH_SECS=60
# Prints a markdown section on stdout; progress goes to stderr.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
STACKS=${STACKS:-200}
WATCH_SECS=${WATCH_SECS:-60}
RUNS=${RUNS:-30}

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_init metrics hbmt hyperfine jq
bench_hal_env
bench_stacks
cd "$tmp"

say "hyperfine: status, status --format prometheus ($STACKS modules)"
hyperfine -N -i --warmup 3 --runs "$RUNS" --export-json status.json \
    "$HAL_BIN status" "$HAL_BIN status --format prometheus" >&2
median() { jq -r ".results[$1].median" status.json; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f ms", s * 1000 }'; }

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
# watch_cpu [ARGS]: CPU ms per pass of a watch reading every module each second.
watch_cpu() {
    "$HAL_BIN" watch --interval 1s --resync 1s "$@" >/dev/null 2>&1 &
    local pid=$! a b
    sleep 3
    a=$(ticks "$pid")
    sleep "$WATCH_SECS"
    b=$(ticks "$pid")
    kill -TERM "$pid"
    wait "$pid" || true
    awk -v d=$((b - a)) -v hz="$hz" -v n="$WATCH_SECS" 'BEGIN { printf "%.2f", d * 1000 / hz / n }'
}
say "watch without --metrics, ${WATCH_SECS}s"
plain=$(watch_cpu)
say "watch with --metrics, ${WATCH_SECS}s"
with=$(watch_cpu --metrics "$tmp/hal.prom")
size=$(wc -c <"$tmp/hal.prom")
lines=$(grep -vc '^#' "$tmp/hal.prom")

cat <<MD
## Prometheus metrics at $STACKS modules (bench/metrics.sh)

$(date -u +%Y-%m-%d), $(nproc) cores, $ENGINE_DESC; $STACKS stacks made, not started; hal release build.

| what | median |
|---|---|
| \`hal status\` (table) | $(ms "$(median 0)") |
| \`hal status --format prometheus\` | $(ms "$(median 1)") |

\`hal watch --interval 1s --resync 1s\` (every module read each second), CPU over ${WATCH_SECS}s, per pass:

| watch | CPU per pass |
|---|---|
| without \`--metrics\` | $plain ms |
| with \`--metrics\` ($lines samples, $size bytes, written and renamed each pass) | $with ms |
MD
