#!/usr/bin/env bash
# `hal module logs` of one stack whose 2 services printed 100k lines each,
# against `docker compose logs`, in one run.
#
#   bench/logs.sh                   # LINES=100000 ROUNDS=3 RUNS=5 by default
#
# hyperfine, ROUNDS interleaved rounds (each command RUNS times per round after
# a warmup, rotated order), pooled. Peak RSS: max of RSS_RUNS runs.
# Prints a markdown section on stdout; progress goes to stderr.
# Target (issue 2): hal no slower than docker compose logs; memory bounded.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
LINES=${LINES:-100000}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-5}
RSS_RUNS=${RSS_RUNS:-5}

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_init logs hblg hyperfine jq docker /usr/bin/time

p="${pfx}1"
mkdir -p "$tmp/services/$p" "$tmp/state"
cat >"$tmp/services/$p/compose.yaml" <<EOF
services:
  a:
    image: hal-fixture:latest
    command: ["sh", "-c", "seq 1 $LINES; exec sleep 100000"]
    restart: unless-stopped
    stop_signal: SIGKILL
  b:
    image: hal-fixture:latest
    command: ["sh", "-c", "seq 1 $LINES; exec sleep 100000"]
    restart: unless-stopped
    stop_signal: SIGKILL
EOF
bench_hal_env
cd "$tmp"
file=$tmp/services/$p/compose.yaml

say "starting $p"
docker compose -f "$file" -p "$p" up -d >/dev/null 2>&1
for svc in a b; do
    for _ in $(seq 1 240); do
        last=$(docker logs --tail 1 "$p-$svc-1" 2>&1 || true)
        [[ $last == "$LINES" ]] && break
        sleep 0.5
    done
    [[ $last == "$LINES" ]] || { say "$svc did not log $LINES lines"; exit 1; }
done
# Check the answers before timing them.
got=$("$HAL_BIN" module logs "$p" | wc -l)
want=$(docker compose -f "$file" -p "$p" logs --no-color | wc -l)
[[ $got -eq $((2 * LINES)) && $want -eq $((2 * LINES)) ]] || { say "line counts: hal $got, compose $want, want $((2 * LINES))"; exit 1; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
names=("hal module logs" "hal module logs --no-prefix" "docker compose logs --no-color" "docker compose logs --no-color --no-log-prefix")
cmds=("$HAL_BIN module logs $p >/dev/null"
    "$HAL_BIN module logs --no-prefix $p >/dev/null"
    "docker compose -f $file -p $p logs --no-color >/dev/null"
    "docker compose -f $file -p $p logs --no-color --no-log-prefix >/dev/null")
for r in $(seq 1 "$ROUNDS"); do
    say "round $r/$ROUNDS"
    args=()
    for k in 0 1 2 3; do
        j=$(((k + r) % 4))
        args+=(-n "${names[$j]}" "${cmds[$j]}")
    done
    hyperfine --style none --warmup 1 --runs "$RUNS" --export-json "$tmp/logs.$r.json" "${args[@]}" >/dev/null 2>&1
done

say "peak RSS"
rss_hal=$(bench_rss_max "$HAL_BIN" module logs "$p")
rss_hal_json=$(bench_rss_max "$HAL_BIN" --json module logs "$p")
rss_compose=$(bench_rss_max docker compose -f "$file" -p "$p" logs --no-color)
# Memory bounded: with 10x fewer lines the peak should be about the same.
rss_small=$(bench_rss_max "$HAL_BIN" module logs -n $((LINES / 10)) "$p")
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

jq -s '[.[].results[]] | group_by(.command) | map({key: .[0].command, value: (map(.times) | add | sort |
        {n: length, min: .[0], mean: (add / length),
         median: (if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end),
         sd: ((add / length) as $m | map((. - $m) * (. - $m)) | add / length | sqrt)})}) | from_entries' \
    "$tmp"/logs.*.json >"$tmp/pooled.json"
hal=$(get "hal module logs" median)
hal_np=$(get "hal module logs --no-prefix" median)
dc=$(get "docker compose logs --no-color" median)
dc_np=$(get "docker compose logs --no-color --no-log-prefix" median)
ok=$(awk -v a="$hal" -v b="$dc" -v c="$hal_np" -v d="$dc_np" 'BEGIN { print (a <= b && c <= d) ? 1 : 0 }')
ok_mem=$(awk -v a="$rss_hal" -v b="$rss_small" 'BEGIN { print (a < 15 * 1024 && a < b * 1.5) ? 1 : 0 }')

cat <<EOF
## logs: 1 stack, 2 services × $LINES lines, to /dev/null

Load average before: $load_before; after: $load_after.
hyperfine, $ROUNDS interleaved rounds × $RUNS runs (after 1 warmup) pooled. Every command printed all $((2 * LINES)) lines
(checked before timing). hal merges the two services in time order; compose prints them as they come.

| command | median | mean ± σ | min | runs |
|---|---|---|---|---|
$(row "hal module logs" "\`hal module logs X\`")
$(row "docker compose logs --no-color" "\`docker compose -p X logs --no-color\`")
$(row "hal module logs --no-prefix" "\`hal module logs --no-prefix X\`")
$(row "docker compose logs --no-color --no-log-prefix" "\`docker compose -p X logs --no-color --no-log-prefix\`")

| peak RSS (max of $RSS_RUNS runs) | |
|---|---|
| \`hal module logs X\` ($((2 * LINES)) lines) | $(mib "$rss_hal") |
| \`hal --json module logs X\` | $(mib "$rss_hal_json") |
| \`hal module logs -n $((LINES / 10)) X\` ($((2 * LINES / 10)) lines) | $(mib "$rss_small") |
| \`docker compose logs\` (for scale) | $(mib "$rss_compose") |

| target | measured | |
|---|---|---|
| hal no slower than \`docker compose logs\` | $(fmt "$hal") vs $(fmt "$dc"); without prefixes $(fmt "$hal_np") vs $(fmt "$dc_np") | $(mark "$ok") |
| memory bounded (< 15 MiB, and not growing with the number of lines) | $(mib "$rss_hal") for $((2 * LINES)) lines, $(mib "$rss_small") for $((2 * LINES / 10)) | $(mark "$ok_mem") |

EOF
