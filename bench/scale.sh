#!/usr/bin/env bash
# Scale (issue 7): 500 modules for `hal module list` and `hal status`, and
# `hal module logs -f` under a service printing about 10,000 lines/s.
#
#   bench/scale.sh                  # MODULES=500 FOLLOW_SECS=20 by default
#
# 1. MODULES module directories (compose files only, no containers): hyperfine
#    of `hal module list` and `hal status` (exit 3: none is active), with
#    `docker ps -a --filter label=…` as the anchor for the engine call.
# 2. One stack whose service prints 1000 numbered lines every 100 ms; hal
#    follows it with `--json` into a file for FOLLOW_SECS seconds. hal's VmRSS
#    is sampled every second from /proc; at the end the last line hal printed
#    is compared with the last line the engine holds (lines behind, and the
#    age of hal's last line).
# Prints a markdown section on stdout; progress goes to stderr.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
MODULES=${MODULES:-500}
# shellcheck source=bench/lib.sh
source bench/lib.sh # stack and report helpers; scale keeps its own setup
FOLLOW_SECS=${FOLLOW_SECS:-20}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-10}

if [[ -z ${HAL_BIN:-} ]]; then
    cargo build --release --quiet
    HAL_BIN=${CARGO_TARGET_DIR:-target}/release/hal
fi
HAL_BIN=$(realpath "$HAL_BIN")
for tool in hyperfine jq docker; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install hyperfine jq)" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/hal-bench-scale.XXXXXX)
pfx="hbsc$$x"
follower=""
say() { echo "bench/scale: $*" >&2; }
cleanup() {
    local ids nets
    [[ -z $follower ]] || kill "$follower" 2>/dev/null || true
    ids=$(docker ps -a --filter label=com.docker.compose.project \
        --format '{{.ID}} {{.Label "com.docker.compose.project"}}' | awk -v p="$pfx" 'index($2, p) == 1 {print $1}')
    [[ -z $ids ]] || docker rm -f $ids >/dev/null 2>&1 || true
    nets=$(docker network ls --format '{{.Name}}' | grep "^$pfx" || true)
    [[ -z $nets ]] || docker network rm $nets >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$tmp/many" "$tmp/chatty" "$tmp/state"
for i in $(seq -w 1 "$MODULES"); do
    mkdir -p "$tmp/many/$pfx$i"
    bench_stack_yaml >"$tmp/many/$pfx$i/compose.yaml"
done
cat >"$tmp/hal.toml" <<'EOF'
[defaults]
pull = "never"
restart = { burst = 100000, interval = "1s" }
EOF
export HAL_CONFIG=$tmp/hal.toml HAL_SERVICES_DIR=$tmp/many HAL_STATE_DIR=$tmp/state
cd "$tmp"

n=$("$HAL_BIN" --json module list | jq '.modules | length')
[[ $n -eq $MODULES ]] || { say "hal lists $n modules, not $MODULES"; exit 1; }
n=$("$HAL_BIN" --json status | jq '.modules | length' || true)
[[ $n -eq $MODULES ]] || { say "hal status shows $n modules, not $MODULES"; exit 1; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
names=("hal module list" "hal status" "docker ps -a --filter label")
cmds=("$HAL_BIN module list" "$HAL_BIN status" "docker ps -a --filter label=com.docker.compose.project")
for r in $(seq 1 "$ROUNDS"); do
    say "round $r/$ROUNDS ($MODULES modules)"
    args=()
    for k in 0 1 2; do
        j=$(((k + r) % 3))
        args+=(-n "${names[$j]}" "${cmds[$j]}")
    done
    # `hal status` exits 3 here (no module is active): -i.
    hyperfine -i --style none --warmup 2 --runs "$RUNS" --export-json "$tmp/scale.$r.json" "${args[@]}" >/dev/null 2>&1
done
jq -s '[.[].results[]] | group_by(.command) | map({key: .[0].command, value: (map(.times) | add | sort |
        {n: length, min: .[0], mean: (add / length),
         median: (if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end),
         sd: ((add / length) as $m | map((. - $m) * (. - $m)) | add / length | sqrt)})}) | from_entries' \
    "$tmp"/scale.*.json >"$tmp/pooled.json"
rss_list=$(/usr/bin/time -f %M "$HAL_BIN" module list 2>&1 >/dev/null | tail -1)
rss_status=$(/usr/bin/time -f %M "$HAL_BIN" status 2>&1 >/dev/null | tail -1 || true)

# --- a chatty service under logs -f ------------------------------------------
c="${pfx}chatty"
export HAL_SERVICES_DIR=$tmp/chatty
mkdir -p "$tmp/chatty/$c"
cat >"$tmp/chatty/$c/compose.yaml" <<'EOF'
services:
  talk:
    image: hal-fixture:latest
    command: ["awk", "BEGIN { n = 0; while (1) { for (i = 0; i < 1000; i++) print \"line\", n++, \"the quick brown fox jumps over the lazy dog\"; fflush(); system(\"usleep 100000\") } }"]
    restart: unless-stopped
    stop_signal: SIGKILL
EOF
say "following a chatty service for ${FOLLOW_SECS}s"
docker compose -f "$tmp/chatty/$c/compose.yaml" -p "$c" up -d >/dev/null 2>&1
sleep 1
"$HAL_BIN" --json module logs -f -n 0 "$c" >"$tmp/follow.jsonl" 2>"$tmp/follow.err" &
follower=$!
samples=()
hwm=0
for s in $(seq 1 "$FOLLOW_SECS"); do
    sleep 1
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$follower/status")
    hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$follower/status")
    samples+=("$rss")
done
cpu_ticks=$(awk '{print $14 + $15}' "/proc/$follower/stat")
# How far behind is hal? Its last complete line now, then the engine's last line.
end_ns=$(date +%s%N)
hal_last_line=$(tail -n 3 "$tmp/follow.jsonl" | jq -c -R 'fromjson? // empty' | tail -1)
engine_last=$(docker logs --tail 1 "$c-talk-1" 2>&1 | awk '{print $2}')
kill -INT "$follower"
wait "$follower" || true
follower=""
docker rm -f "$c-talk-1" >/dev/null 2>&1 || true
hal_lines=$(wc -l <"$tmp/follow.jsonl")
hal_last=$(jq -r '.message' <<<"$hal_last_line" | awk '{print $2}')
hal_first=$(head -1 "$tmp/follow.jsonl" | jq -r '.message' | awk '{print $2}')
hal_last_time=$(jq -r '.time' <<<"$hal_last_line")
age_ms=$(( (end_ns - $(date -d "$hal_last_time" +%s%N)) / 1000000 ))
gaps=$(jq -r '.message' "$tmp/follow.jsonl" | awk '{ if (NR > 1 && $2 != prev + 1) g++; prev = $2 } END { print g + 0 }')
rate=$(awk -v n="$hal_lines" -v s="$FOLLOW_SECS" 'BEGIN { printf "%.0f", n / s }')
cpu_pct=$(awk -v t="$cpu_ticks" -v hz="$(getconf CLK_TCK)" -v s="$FOLLOW_SECS" 'BEGIN { printf "%.0f", t / hz / s * 100 }')
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

list_med=$(get "hal module list" median)
first_rss=${samples[0]} last_rss=${samples[-1]}
behind=$((engine_last - hal_last))
ok_list=$(awk -v a="$list_med" 'BEGIN { print (a < 0.5) ? 1 : 0 }')
ok_mem=$(awk -v h="$hwm" -v f="$first_rss" -v l="$last_rss" 'BEGIN { print (h < 15 * 1024 && l <= f * 1.25 + 1024) ? 1 : 0 }')
ok_lag=$([[ $gaps -eq 0 && $behind -le 2000 ]] && echo 1 || echo 0)

cat <<EOF
## scale: $MODULES modules, and \`logs -f\` of a chatty service

Load average before: $load_before; after: $load_after.

$MODULES module directories (2 services each, no containers); hyperfine, $ROUNDS interleaved rounds × $RUNS runs pooled.

| command | median | mean ± σ | min | runs |
|---|---|---|---|---|
$(row "hal module list" "\`hal module list\` ($MODULES modules)")
$(row "hal status" "\`hal status\` ($MODULES modules, none running)")
$(row "docker ps -a --filter label" "anchor: \`docker ps -a --filter label=com.docker.compose.project\`")

Peak RSS: \`hal module list\` $(mib "$rss_list"), \`hal status\` $(mib "$rss_status").

\`hal --json module logs -f -n 0\` of a service printing 1000 lines (60 bytes) every 100 ms, for ${FOLLOW_SECS} s:
hal printed $hal_lines lines ($rate lines/s, lines $hal_first…$hal_last, $gaps gaps in the numbering), using ${cpu_pct}% of
one core. At the end hal's last printed line was $hal_last and the engine's, read just after, $engine_last ($behind lines
behind); hal's last line was ${age_ms} ms old.

VmRSS each second (KiB): $(printf '%s ' "${samples[@]}")— peak (VmHWM) $(mib "$hwm").

| target | measured | |
|---|---|---|
| \`hal module list\` of $MODULES modules < 0.5 s | $(fmt "$list_med") | $(mark "$ok_list") |
| \`logs -f\` memory bounded under ~10k lines/s | $(mib "$first_rss") after 1 s, $(mib "$last_rss") after ${FOLLOW_SECS} s, peak $(mib "$hwm") | $(mark "$ok_mem") |
| \`logs -f\` keeps up (no gap, ≤ 2000 lines behind at the end) | $gaps gaps, $behind lines behind, last line ${age_ms} ms old | $(mark "$ok_lag") |

EOF
