#!/usr/bin/env bash
# A big node (issue 13): STACKS stacks × 2 services (200 by default) on a private
# engine (bench/engine.sh), so that restarting the engine and loading it with 400
# containers disturbs no one else's work on the machine.
#
#   bench/node.sh                       # STACKS=200 ROUNDS=3 IDLE_SECS=600
#   SCALE=0.2 bench/node.sh             # 40 stacks, shorter idle: a quick look
#   DOCKER_HOST=unix:///var/run/docker.sock bench/node.sh   # the main engine (no restart section)
#
# Sections, in this order:
#  1. status: `hal status` and `hal --json status` against one raw list call
#     over the socket (curl) and `docker ps -a --filter label=…`, hyperfine in
#     ROUNDS rounds, rotated order, pooled; peak RSS.
#  2. start --all of STACKS stacks stopped by `docker stop`, against the
#     engine's floor (`docker start` of the same containers, 8 at a time),
#     START_ROUNDS rounds, rotated.
#  3. `hal watch` idle for IDLE_SECS: CPU (utime+stime from /proc) and RSS
#     every SAMPLE_SECS, after the watch's first pass.
#  4. the engine restarted under the watch (private engine only): the watch's
#     CPU and time from the engine being back to idle again, against one
#     `hal status` of the node (CPU and wall time, the median of 5 runs) just after.
# Prints a markdown section on stdout; progress goes to stderr.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
SCALE=${SCALE:-1}
STACKS=${STACKS:-$(awk -v s="$SCALE" 'BEGIN { printf "%d", 200 * s }')}
IDLE_SECS=${IDLE_SECS:-$(awk -v s="$SCALE" 'BEGIN { printf "%d", 600 * s }')}
SAMPLE_SECS=${SAMPLE_SECS:-30}
ROUNDS=${ROUNDS:-3}
FAST_RUNS=${FAST_RUNS:-10}
START_ROUNDS=${START_ROUNDS:-2}
RSS_RUNS=${RSS_RUNS:-5}

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_private_engine
sock=${DOCKER_HOST#unix://}
bench_init node hbnd hyperfine jq curl docker /usr/bin/time
watcher=""
node_cleanup() {
    [[ -z $watcher ]] || kill -TERM "$watcher" 2>/dev/null || true
    bench_private_cleanup
}
trap node_cleanup EXIT

mkdir -p "$tmp/services" "$tmp/state"
bench_stacks
bench_hal_env
cd "$tmp"
want=$((STACKS * 2))
ours() {
    docker ps "$@" --filter label=com.docker.compose.project \
        --format '{{.ID}} {{.Label "com.docker.compose.project"}}' | awk -v p="$pfx" 'index($2, p) == 1 {print $1}'
}
count_running() { ours | grep -c . || true; }
all_active() { # waits up to $1 s for hal to see every module active
    local i
    for i in $(seq 1 $(($1 * 2))); do
        "$HAL_BIN" -q status && return 0
        sleep 0.5
    done
    return 1
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
secs() { awk -v t="$1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'; }

say "creating $STACKS stacks with hal on $DOCKER_HOST (primes hal's state: desired up)"
"$HAL_BIN" module start --all --jobs 16 >/dev/null
[[ $(count_running) -eq $want ]] || { say "setup: $(count_running) of $want running"; exit 1; }
all_active 60 || { say "hal does not see every module active"; exit 1; }
sleep 15 # a node's steady state: containers that have been up a while
quiet1=$(bench_quiet 300)

# --- 1. status ---------------------------------------------------------------
load1=$(cut -d' ' -f1-3 /proc/loadavg)
filter=$(jq -rn '{"label": ["com.docker.compose.project"]} | tojson | @uri')
n=$(curl -sf --unix-socket "$sock" "http://x/v1.41/containers/json?all=1&filters=$filter" | jq length)
names=("hal status" "hal --json status" "docker ps -a --filter label" "curl list call")
cmds=("$HAL_BIN status" "$HAL_BIN --json status"
    "docker ps -a --filter label=com.docker.compose.project"
    "curl -sf --unix-socket $sock 'http://x/v1.41/containers/json?all=1&filters=$filter'")
for r in $(seq 1 "$ROUNDS"); do
    say "status round $r/$ROUNDS"
    args=()
    for k in 0 1 2 3; do
        j=$(((k + r) % 4))
        args+=(-n "${names[$j]}" "${cmds[$j]}")
    done
    hyperfine --style none --warmup 2 --runs "$FAST_RUNS" --export-json "$tmp/status.$r.json" "${args[@]}" >/dev/null 2>&1
done
jq -s '[.[].results[]] | group_by(.command) | map({key: .[0].command, value: (map(.times) | add | sort |
        {n: length, min: .[0], mean: (add / length),
         median: (if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end),
         sd: ((add / length) as $m | map((. - $m) * (. - $m)) | add / length | sqrt)})}) | from_entries' \
    "$tmp"/status.*.json >"$tmp/pooled.json"
rss_hal=$(bench_rss_max "$HAL_BIN" status)
rss_json=$(bench_rss_max "$HAL_BIN" --json status)
# The JSON document is complete: every container, with its start time and restart count.
facts=$("$HAL_BIN" --json status | jq '[.modules[].services[] | select(.started_at != null and .restart_count != null)] | length')
load1b=$(cut -d' ' -f1-3 /proc/loadavg)
curl_med=$(get "curl list call" median)
hal_med=$(get "hal status" median)
json_med=$(get "hal --json status" median)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
ok_le() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { print (a <= b * f) ? 1 : 0 }'; }

# --- 2. start --all of docker-stopped stacks ---------------------------------
say "start --all of $STACKS docker-stopped stacks"
load2=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$tmp/times.tsv"
snames=("hal start --all" "hal start --all --jobs 16" "docker start -P 8")
scmds=("$HAL_BIN module start --all" "$HAL_BIN module start --all --jobs 16"
    "docker ps -a --filter status=exited --format '{{.ID}} {{.Label \"com.docker.compose.project\"}}' | awk -v p=$pfx 'index(\$2, p) == 1 {print \$1}' | xargs -P 8 -n 10 docker start")
for r in $(seq 1 "$START_ROUNDS"); do
    for k in 0 1 2; do
        i=$(((k + r) % 3))
        ours | xargs -r -P 8 -n 20 docker stop >/dev/null
        [[ $(count_running) -eq 0 ]] || { say "docker stop left some running"; exit 1; }
        t0=$EPOCHREALTIME
        /usr/bin/time -f '%U %S' -o "$tmp/cpu" bash -c "${scmds[$i]}" >"$tmp/out" 2>&1 || { say "${snames[$i]} failed"; tail -5 "$tmp/out" >&2; exit 1; }
        t1=$EPOCHREALTIME
        [[ $(count_running) -eq $want ]] || { say "${snames[$i]}: not all running"; exit 1; }
        printf '%s\t%s\t%s\n' "${snames[$i]}" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" \
            "$(awk '{ printf "%.2f", $1 + $2 }' "$tmp/cpu" | tail -1)" >>"$tmp/times.tsv"
        say "  ${snames[$i]}: $(tail -1 "$tmp/times.tsv" | cut -f2) s"
    done
done
load2b=$(cut -d' ' -f1-3 /proc/loadavg)
smed() { # NAME [FIELD]: the median of a column of times.tsv
    awk -F'\t' -v k="$1" -v f="${2:-2}" '$1 == k { print $f }' "$tmp/times.tsv" | sort -g |
        awk '{ v[++n] = $1 } END { printf "%.3f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
sruns() { awk -F'\t' -v k="$1" '$1 == k { printf "%s%.1f", (n++ ? " / " : ""), $2 }' "$tmp/times.tsv"; }
floor=$(smed "docker start -P 8")
all_active 60 || { say "not all active after the start runs"; exit 1; }

# --- 3 and 4. the watch -------------------------------------------------------
watch_md=""
if [[ ${SKIP_WATCH:-} != 1 ]]; then
    PRIVATE=$private IDLE_SECS=$IDLE_SECS SAMPLE_SECS=$SAMPLE_SECS STACKS=$STACKS \
        bash "$root/bench/watch.sh" >"$tmp/watch.md"
    watch_md=$(cat "$tmp/watch.md")
fi

cat <<EOF
## a node of $STACKS stacks × 2 services ($DOCKER_HOST)

$($private && echo "On a private engine (\`bench/engine.sh\`: its own dockerd and containerd, same version, in a network namespace of its own, no iptables), so that 400 containers and an engine restart disturb no other work on this shared machine.")

### status ($n containers)

Load average before: $load1; after: $load1b. hyperfine, $ROUNDS rounds × $FAST_RUNS runs (2 warmups), rotated, pooled.
The node had been up for at least 15 s, and the CPUs were 90 % idle over 5 s (after $quiet1 s more) before the first run. \`--json\` printed start time and restart count for
$facts of $want containers.

| command | median | mean ± σ | min | runs |
|---|---|---|---|---|
$(row "hal status" "\`hal status\`")
$(row "hal --json status" "\`hal --json status\`")
$(row "docker ps -a --filter label" "\`docker ps -a --filter label=com.docker.compose.project\`")
$(row "curl list call" "one raw list call over the socket (curl)")

Peak RSS (max of $RSS_RUNS runs): \`hal status\` $(mib "$rss_hal"), \`hal --json status\` $(mib "$rss_json").

| target | measured | |
|---|---|---|
| \`hal status\` ≤ 1.2 × the raw list call | $(fmt "$hal_med") vs $(fmt "$curl_med") ($(ratio "$hal_med" "$curl_med")×) | $(mark "$(ok_le "$hal_med" "$curl_med" 1.2)") |
| \`hal status\` peak RSS < 15 MiB | $(mib "$rss_hal") | $(mark "$(awk -v k="$rss_hal" 'BEGIN { print (k < 15 * 1024) ? 1 : 0 }')") |
| \`hal --json status\` ≤ 1.3 × the raw list call, every fact | $(fmt "$json_med") vs $(fmt "$curl_med") ($(ratio "$json_med" "$curl_med")×); $facts of $want containers with start time and restart count | $(mark "$(awk -v o="$(ok_le "$json_med" "$curl_med" 1.3)" -v f="$facts" -v w="$want" 'BEGIN { print (o && f == w) ? 1 : 0 }')") |

### start --all of $STACKS stacks stopped by \`docker stop\`

Load average before: $load2; after: $load2b. $START_ROUNDS rounds, rotated; every run checked ($want running after).
hal waits for active (the default).

| command | median | runs (s) | vs floor | client CPU |
|---|---|---|---|---|
$(for k in "${snames[@]}"; do printf '| `%s` | %s s | %s | %.2f× | %s s |\n' "$k" "$(smed "$k")" "$(sruns "$k")" "$(ratio "$(smed "$k")" "$floor")" "$(smed "$k" 3)"; done)

| target | measured | |
|---|---|---|
| start --all (default) ≤ 1.15 × the floor (\`docker start\` 8 at a time) | $(smed "hal start --all") s vs $floor s ($(ratio "$(smed "hal start --all")" "$floor")×) | $(mark "$(ok_le "$(smed "hal start --all")" "$floor" 1.15)") |

$watch_md

EOF
