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
        awk '{ v[++n] = $1 } END { printf "%.4f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
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
# restart LIVE: restarts the private engine under the watch (LIVE=true: with
# live-restore, the containers keep running; false: Docker's default, every
# container is stopped and Docker restarts those whose policy says so) and
# appends a row to $tmp/catch.tsv: live, the watch's CPU from the engine being
# back to idle again (no CPU for 20 s), that wall time, the repairs it logged,
# its RSS then, and one `hal status`'s CPU and wall time just after (median of 5).
restart() {
    local live=$1 log_before t_back c_back last quiet t_idle_again now i s0 s1
    log_before=$(wc -l <"$tmp/watch.log")
    LIVE_RESTORE=$live "$root/bench/engine.sh" restart >/dev/null
    t_back=$EPOCHREALTIME
    c_back=$(ticks "$watcher")
    last=$c_back quiet=0 t_idle_again=$t_back
    for _ in $(seq 1 240); do
        sleep 1
        now=$(ticks "$watcher")
        if [[ $now -eq $last ]]; then
            quiet=$((quiet + 1))
        else
            quiet=0 last=$now t_idle_again=$EPOCHREALTIME
        fi
        ((quiet >= 20)) && break
    done
    all_active 180 || say "not every module active after the engine restart (live-restore $live)"
    : >"$tmp/times.tsv"
    for i in 1 2 3 4 5; do
        # CPU of 10 calls in a row, divided by 10: time(1) counts in hundredths of a second.
        s0=$EPOCHREALTIME
        /usr/bin/time -f '%U %S' -o "$tmp/scpu" bash -c "for j in 1 2 3 4 5 6 7 8 9 10; do ${HAL_BIN@Q} status; done" >/dev/null 2>&1 || true
        s1=$EPOCHREALTIME
        printf 'status\t%s\t%s\n' "$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.4f", (b - a) / 10 }')" \
            "$(awk '{ printf "%.4f", ($1 + $2) / 10 }' "$tmp/scpu" | tail -1)" >>"$tmp/times.tsv"
    done
    tail -n +"$((log_before + 1))" "$tmp/watch.log" >"$tmp/said.$live"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$live" "$(secs $((last - c_back)))" \
        "$(awk -v a="$t_back" -v b="$t_idle_again" 'BEGIN { printf "%.2f", b - a }')" \
        "$(grep -cE ': (repairing|recreating the module|restarting):' "$tmp/said.$live" || true)" \
        "$(rss "$watcher")" "$(smed status 3)" "$(smed status 2)" >>"$tmp/catch.tsv"
}

catchup=""
if $private; then
    : >"$tmp/catch.tsv"
    load4=$(cut -d' ' -f1-3 /proc/loadavg)
    say "restarting the private engine under the watch (live-restore)"
    restart true
    say "restarting the private engine under the watch (Docker's default: no live-restore)"
    restart false
    load4b=$(cut -d' ' -f1-3 /proc/loadavg)
    col() { awk -F'\t' -v k="$1" -v f="$2" '$1 == k { print $f }' "$tmp/catch.tsv"; }
    ok_catch=$(awk -v c="$(col true 2)" -v s="$(col true 6)" 'BEGIN { print (c <= 2 * s) ? 1 : 0 }')
    catchup=$(
        cat <<EOF
### the engine restarted under the watch (private engine)

Load average before: $load4; after: $load4b. \`bench/engine.sh restart\` (SIGTERM, then the engine starts again), twice:
first with live-restore (the containers keep running: what the watch does is its catch-up alone), then with
Docker's default (the engine stops every container and restarts those whose policy says so; what it leaves stopped
is the watch's to repair). From the engine answering again to the watch being idle (no CPU for 20 s); its own CPU
(compose's processes not counted). One \`hal status\` of the same node just after, median of 5.

| engine restart | watch CPU | to idle | repairs logged | watch RSS then | one \`hal status\`: CPU, wall |
|---|---|---|---|---|---|
| live-restore | $(col true 2) s | $(col true 3) s | $(col true 4) | $(mib "$(col true 5)") | $(col true 6) s, $(col true 7) s |
| Docker's default | $(col false 2) s | $(col false 3) s | $(col false 4) | $(mib "$(col false 5)") | $(col false 6) s, $(col false 7) s |

What the watch logged after the default restart (first lines):

\`\`\`
$(cut -c1-160 "$tmp/said.false" | head -8)
\`\`\`

| target | measured | |
|---|---|---|
| watch's catch-up after an engine restart ≤ 2 × one \`hal status\` (CPU) | live-restore: $(col true 2) s vs 2 × $(col true 6) s; Docker's default: $(col false 2) s with $(col false 4) repairs (not a catch-up alone) | $(mark "$ok_catch") |
EOF
    )
fi
kill -TERM "$watcher"
wait "$watcher" || true
watcher=""

cat <<MD
### \`hal watch\`, idle ($STACKS stacks)

Load average before: $load3; after: $load3b. \`hal watch\` (defaults \`--interval 30s\`, \`--resync 5m\`: every stack read again every 5 minutes, else on its events) over the
node, untouched for $IDLE_SECS s after its first pass. First pass (start-up and the first look): $first_cpu s of CPU. Idle: $idle_cpu s of CPU in
$IDLE_SECS s. VmRSS every $SAMPLE_SECS s (KiB): $(printf '%s ' "${rss_samples[@]}")— peak (VmHWM) $(mib "$hwm").

| target | measured | |
|---|---|---|
| watch idle $IDLE_SECS s: CPU ≤ 0.1 s, RSS < 15 MiB, no growth | $idle_cpu s; $(mib "${rss_samples[0]}") → $(mib "${rss_samples[-1]}"), peak $(mib "$hwm") | $(mark "$ok_idle") |

$catchup
MD
