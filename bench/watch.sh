#!/usr/bin/env bash
# `hal watch` over an existing node (bench/node.sh calls it; it can run alone
# on a node you laid out): idle CPU and memory, then its catch-up when the
# engine restarts under it (only with PRIVATE=true: bench/engine.sh's engine).
#
#   HAL_CONFIG=… HAL_SERVICES_DIR=… HAL_STATE_DIR=… DOCKER_HOST=unix:///run/hal-bench-13/docker.sock \
#     PRIVATE=true STACKS=200 bench/watch.sh      # IDLE_SECS=600 SAMPLE_SECS=30
#
# Every module must be active and wanted up (started by hal) before it runs.
# Prints a markdown section on stdout; progress goes to stderr.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
IDLE_SECS=${IDLE_SECS:-600}
SAMPLE_SECS=${SAMPLE_SECS:-30}
STACKS=${STACKS:-?}
private=${PRIVATE:-false}
HAL_BIN=$(realpath "${HAL_BIN:-target/release/hal}")
tmp=$(mktemp -d /tmp/hal-bench-watch.XXXXXX)
watcher=""
trap '[[ -z $watcher ]] || kill -TERM "$watcher" 2>/dev/null || true; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
say() { echo "bench/watch: $*" >&2; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
mark() { if [[ $1 == 1 ]]; then echo "✓"; else echo "✗"; fi; }
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
smed() { # NAME [FIELD]: the median of a column of times.tsv
    awk -F'\t' -v k="$1" -v f="${2:-2}" '$1 == k { print $f }' "$tmp/times.tsv" | sort -g |
        awk '{ v[++n] = $1 } END { printf "%.3f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
: >"$tmp/times.tsv"
all_active 300 || { say "not every module is active"; exit 1; }

# --- idle ----------------------------------------------------------------------
say "hal watch, idle for ${IDLE_SECS}s"
load3=$(cut -d' ' -f1-3 /proc/loadavg)
"$HAL_BIN" watch >"$tmp/watch.log" 2>&1 &
watcher=$!
sleep 10 # its first full pass
t_first=$(ticks "$watcher")
rss_samples=()
for _ in $(seq 1 $((IDLE_SECS / SAMPLE_SECS))); do
    sleep "$SAMPLE_SECS"
    rss_samples+=("$(rss "$watcher")")
done
t_idle=$(ticks "$watcher")
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$watcher/status")
idle_cpu=$(secs $((t_idle - t_first)))
first_cpu=$(secs "$t_first")
load3b=$(cut -d' ' -f1-3 /proc/loadavg)
ok_idle=$(awk -v c="$idle_cpu" -v h="$hwm" -v f="${rss_samples[0]}" -v l="${rss_samples[-1]}" \
    'BEGIN { print (c <= 0.1 && h < 15 * 1024 && l <= f) ? 1 : 0 }')

# --- the engine restarts under the watch --------------------------------------
catchup=""
if $private; then
    say "restarting the private engine under the watch"
    load4=$(cut -d' ' -f1-3 /proc/loadavg)
    log_before=$(wc -l <"$tmp/watch.log")
    "$root/bench/engine.sh" restart >/dev/null
    t_back=$EPOCHREALTIME
    c_back=$(ticks "$watcher")
    # Idle again: no CPU used by the watch for 20 s in a row (or 180 s gone).
    last=$c_back quiet=0 t_idle_again=$t_back
    for _ in $(seq 1 180); do
        sleep 1
        now=$(ticks "$watcher")
        if [[ $now -eq $last ]]; then
            quiet=$((quiet + 1))
        else
            quiet=0 last=$now t_idle_again=$EPOCHREALTIME
        fi
        ((quiet >= 20)) && break
    done
    catch_cpu=$(secs $((last - c_back)))
    catch_wall=$(awk -v a="$t_back" -v b="$t_idle_again" 'BEGIN { printf "%.2f", b - a }')
    all_active 120 || say "not every module active after the engine restart"
    # One hal status of the same node, for scale: CPU and wall time (median of 5).
    for _ in 1 2 3 4 5; do
        s0=$EPOCHREALTIME
        /usr/bin/time -f '%U %S' -o "$tmp/scpu" "$HAL_BIN" status >/dev/null 2>&1 || true
        s1=$EPOCHREALTIME
        printf 'status\t%s\t%s\n' "$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.3f", b - a }')" \
            "$(awk '{ printf "%.3f", $1 + $2 }' "$tmp/scpu" | tail -1)" >>"$tmp/times.tsv"
    done
    st_wall=$(smed status 2)
    st_cpu=$(smed status 3)
    rss_after=$(rss "$watcher")
    watch_said=$(tail -n +"$((log_before + 1))" "$tmp/watch.log" | cut -c1-160 | head -8)
    load4b=$(cut -d' ' -f1-3 /proc/loadavg)
    ok_catch=$(awk -v c="$catch_cpu" -v s="$st_cpu" 'BEGIN { print (c <= 2 * s) ? 1 : 0 }')
    catchup=$(
        cat <<EOF
### the engine restarted under the watch (private engine, no live-restore)

Load average before: $load4; after: $load4b. \`bench/engine.sh restart\` (SIGTERM, the engine stops every
container, starts again; Docker restarts the \`unless-stopped\` containers itself). From the engine answering
again, the watch used $catch_cpu s of CPU and was idle again (no CPU for 20 s) after $catch_wall s; its RSS
then: $(mib "$rss_after"). One \`hal status\` of the same node just after: $st_cpu s of CPU, $st_wall s wall
(median of 5). What the watch logged:

\`\`\`
$watch_said
\`\`\`

| target | measured | |
|---|---|---|
| watch's catch-up after an engine restart ≤ 2 × one \`hal status\` (CPU) | $catch_cpu s vs 2 × $st_cpu s | $(mark "$ok_catch") |
EOF
    )
fi
kill -TERM "$watcher"
wait "$watcher" || true
watcher=""

cat <<MD
### \`hal watch\`, idle ($STACKS stacks)

Load average before: $load3; after: $load3b. \`hal watch\` (default \`--interval 30s\`: a full pass every 30 s) over the
node, untouched for $IDLE_SECS s after its first pass. First pass (start-up and the first look): $first_cpu s of CPU. Idle: $idle_cpu s of CPU in
$IDLE_SECS s. VmRSS every $SAMPLE_SECS s (KiB): $(printf '%s ' "${rss_samples[@]}")— peak (VmHWM) $(mib "$hwm").

| target | measured | |
|---|---|---|
| watch idle $IDLE_SECS s: CPU ≤ 0.1 s, RSS < 15 MiB, no growth | $idle_cpu s; $(mib "${rss_samples[0]}") → $(mib "${rss_samples[-1]}"), peak $(mib "$hwm") | $(mark "$ok_idle") |

$catchup
MD
