#!/usr/bin/env bash
# Start and stop of 40 stacks (2 services each): hal against the compose loop,
# `xargs -P 8` of compose, and the engine's floor (`docker start`), in one run.
#
#   bench/startstop.sh              # STACKS=40 ROUNDS=3 JOBS_SWEEP="4 8 16"
#
# Scenarios, each run once per round, in a rotated order, median of ROUNDS:
#   start from stopped  containers exist, stopped by `docker stop` (xargs -P 8)
#                       before every run. hal's state is primed by one
#                       `hal module start --all` first, so hal's fast path
#                       (Engine API start of an unchanged, docker-stopped
#                       stack) applies. hal with --jobs in JOBS_SWEEP, waiting
#                       for active (the default) and with --no-wait; the
#                       compose loop and `xargs -P 8` of `docker compose up -d`;
#                       `docker start` of the same 80 containers 8 at a time
#                       (xargs -P 8 -n 10) and 1 at a time (one docker start).
#   stop                `hal --yes module stop --all` (compose down), the loop
#                       and `xargs -P 8` of `docker compose down`; each is
#                       followed by the matching start after down (containers
#                       must be created by compose again).
# Every run is checked: 80 containers running after a start, none left after a
# stop. Wall time from bash; client CPU (the command and its children) from
# /usr/bin/time; dockerd+containerd CPU from /proc.
# Prints a markdown section on stdout; progress goes to stderr.
# Targets (issue 8): start of 40 stopped stacks within 1.15x the engine floor
# (docker start -P 8), and no slower than xargs -P 8.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
STACKS=${STACKS:-40}
ROUNDS=${ROUNDS:-3}
JOBS_SWEEP=${JOBS_SWEEP:-4 8 16}
DOWN_JOBS=${DOWN_JOBS:-8}   # extra stop / start-after-down pair with this --jobs ("" for none)

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_init startstop hbss docker /usr/bin/time awk

mkdir -p "$tmp/services" "$tmp/state"
bench_stacks
bench_hal_env
cd "$tmp"
want=$((STACKS * 2))
default_jobs=$(($(nproc) * 4)) # hal's own default (src/run/node.rs): 4 per CPU, 8 to 16
((default_jobs < 8)) && default_jobs=8
((default_jobs > 16)) && default_jobs=16

# --- helpers -----------------------------------------------------------------
ours() { # container ids of our projects; $1: extra docker ps args
    docker ps "$@" --filter label=com.docker.compose.project \
        --format '{{.ID}} {{.Label "com.docker.compose.project"}}' | awk -v p="$pfx" 'index($2, p) == 1 {print $1}'
}
count_running() { ours | grep -c . || true; }
count_existing() { ours -a | grep -c . || true; }
docker_stop_all() {
    ours | xargs -r -P 8 -n 10 docker stop >/dev/null
    local n
    n=$(count_running)
    [[ $n -eq 0 ]] || { say "docker stop left $n running"; exit 1; }
    n=$(count_existing)
    [[ $n -eq $want ]] || { say "expected $want stopped containers, found $n"; exit 1; }
}
engine_cpu() { # dockerd + containerd CPU seconds so far
    local pid total=0
    for pid in $(pidof dockerd containerd 2>/dev/null); do
        total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
    done
    awk -v t="$total" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'
}
# measure NAME CHECK CMD: time CMD, then CHECK ("up": all running, "down": none left).
measure() {
    local name=$1 check=$2 cmd=$3 t0 t1 e0 e1 rc=0 n
    e0=$(engine_cpu)
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%U %S' -o "$tmp/cpu" bash -c "$cmd" >"$tmp/out" 2>&1 || rc=$?
    t1=$EPOCHREALTIME
    e1=$(engine_cpu)
    if [[ $rc -ne 0 ]]; then
        say "$name failed (exit $rc):"
        tail -5 "$tmp/out" >&2
        echo "$name" >>"$tmp/failed"
    fi
    if [[ $check == up ]]; then
        n=$(count_running)
        [[ $n -eq $want ]] || { say "$name: $n of $want running afterwards"; echo "$name" >>"$tmp/failed"; }
    else
        n=$(count_existing)
        [[ $n -eq 0 ]] || { say "$name: $n containers left afterwards"; echo "$name" >>"$tmp/failed"; }
    fi
    printf '%s\t%s\t%s\t%s\n' "$name" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" \
        "$(awk '{ printf "%.2f", $1 + $2 }' "$tmp/cpu" | tail -1)" \
        "$(awk -v a="$e0" -v b="$e1" 'BEGIN { printf "%.2f", b - a }')" >>"$tmp/times.tsv"
    say "  $name: $(tail -1 "$tmp/times.tsv" | cut -f2) s"
}
list=$(printf '%s ' "${projects[@]}")
up_loop="for p in $list; do docker compose -f $tmp/services/\$p/compose.yaml -p \$p up -d; done"
up_xargs="printf '%s\n' $list | xargs -P 8 -I{} docker compose -f $tmp/services/{}/compose.yaml -p {} up -d"
down_loop="for p in $list; do docker compose -f $tmp/services/\$p/compose.yaml -p \$p down; done"
down_xargs="printf '%s\n' $list | xargs -P 8 -I{} docker compose -f $tmp/services/{}/compose.yaml -p {} down"

# --- scenarios ---------------------------------------------------------------
start_names=() start_cmds=()
for j in $JOBS_SWEEP; do
    start_names+=("hal start --all --jobs $j")
    start_cmds+=("$HAL_BIN module start --all --jobs $j")
    start_names+=("hal start --all --no-wait --jobs $j")
    start_cmds+=("$HAL_BIN module start --all --no-wait --jobs $j")
done
start_names+=("compose up -d loop" "compose up -d xargs -P 8" "docker start -P 8" "docker start -P 1")
start_cmds+=("$up_loop" "$up_xargs"
    "docker ps -a --filter status=exited --format '{{.ID}} {{.Label \"com.docker.compose.project\"}}' | awk -v p=$pfx 'index(\$2, p) == 1 {print \$1}' | xargs -P 8 -n 10 docker start"
    "docker start \$(docker ps -a --filter status=exited --format '{{.ID}} {{.Label \"com.docker.compose.project\"}}' | awk -v p=$pfx 'index(\$2, p) == 1 {print \$1}')")
# Stop pairs: NAME-OF-STOP, STOP, NAME-OF-START, START.
pair_names=("hal stop --all --jobs $default_jobs" "hal start --all after down --jobs $default_jobs"
    "compose down loop" "compose up -d loop after down"
    "compose down xargs -P 8" "compose up -d xargs -P 8 after down")
pair_cmds=("$HAL_BIN --yes module stop --all --jobs $default_jobs" "$HAL_BIN module start --all --jobs $default_jobs"
    "$down_loop" "$up_loop" "$down_xargs" "$up_xargs")
for j in $DOWN_JOBS; do
    [[ $j == "$default_jobs" ]] && continue
    pair_names+=("hal stop --all --jobs $j" "hal start --all after down --jobs $j")
    pair_cmds+=("$HAL_BIN --yes module stop --all --jobs $j" "$HAL_BIN module start --all --jobs $j")
done

say "creating $STACKS stacks with hal (primes hal's state)"
"$HAL_BIN" module start --all --jobs 8 >/dev/null
[[ $(count_running) -eq $want ]] || { say "setup: not all running"; exit 1; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$tmp/times.tsv"
for r in $(seq 1 "$ROUNDS"); do
    say "round $r/$ROUNDS: start from stopped"
    n=${#start_names[@]}
    for k in $(seq 0 $((n - 1))); do
        i=$(((k + r * 3) % n))
        docker_stop_all
        measure "${start_names[$i]}" up "${start_cmds[$i]}"
    done
    say "round $r/$ROUNDS: stop, then start after down"
    n=$((${#pair_names[@]} / 2))
    for k in $(seq 0 $((n - 1))); do
        i=$(((k + r) % n))
        measure "${pair_names[$((2 * i))]}" down "${pair_cmds[$((2 * i))]}"
        measure "${pair_names[$((2 * i + 1))]}" up "${pair_cmds[$((2 * i + 1))]}"
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report ------------------------------------------------------------------
# stats NAME -> "median all-runs cpu-median engine-cpu-median"
stats() {
    awk -F'\t' -v k="$1" '$1 == k { w[++n] = $2; c[n] = $3; e[n] = $4 }
        function med(a, n,   i, j, t, b) { for (i = 1; i <= n; i++) b[i] = a[i]
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
            return (n % 2) ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2 }
        END { runs = ""; for (i = 1; i <= n; i++) runs = runs (i > 1 ? " / " : "") sprintf("%.1f", w[i])
              printf "%.2f\t%s\t%.1f\t%.1f\n", med(w, n), runs, med(c, n), med(e, n) }' "$tmp/times.tsv"
}
median() { stats "$1" | cut -f1; }
failed() { grep -qxF "$1" "$tmp/failed" 2>/dev/null && echo " (**failed check**)" || true; }
floor=$(median "docker start -P 8")
xargs8=$(median "compose up -d xargs -P 8")
row() { # NAME SHOWN
    local s
    s=$(stats "$1")
    printf '| %s%s | %s s | %s | %.2f× | %.2f× | %s s | %s s |\n' "$2" "$(failed "$1")" "$(cut -f1 <<<"$s")" "$(cut -f2 <<<"$s")" \
        "$(awk -v a="$(cut -f1 <<<"$s")" -v b="$floor" 'BEGIN { print a / b }')" \
        "$(awk -v a="$(cut -f1 <<<"$s")" -v b="$xargs8" 'BEGIN { print a / b }')" \
        "$(cut -f3 <<<"$s")" "$(cut -f4 <<<"$s")"
}
prow() { # NAME SHOWN
    local s
    s=$(stats "$1")
    printf '| %s%s | %s s | %s | %s s | %s s |\n' "$2" "$(failed "$1")" "$(cut -f1 <<<"$s")" "$(cut -f2 <<<"$s")" "$(cut -f3 <<<"$s")" "$(cut -f4 <<<"$s")"
}
best() { # PATTERN-PREFIX -> "jobs median"
    local j m bj="" bm=""
    for j in $JOBS_SWEEP; do
        m=$(median "$1 $j")
        if [[ -z $bm ]] || awk -v a="$m" -v b="$bm" 'BEGIN { exit !(a < b) }'; then bj=$j bm=$m; fi
    done
    echo "$bj $bm"
}
read -r best_wait_j best_wait <<<"$(best "hal start --all --jobs")"
read -r best_nw_j best_nw <<<"$(best "hal start --all --no-wait --jobs")"
hal_default=$(median "hal start --all --jobs $default_jobs")
hal_default_nw=$(median "hal start --all --no-wait --jobs $default_jobs")
ok() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { print (a <= b * f) ? 1 : 0 }'; }
p1=$(median "docker start -P 1")
per_start=$(awk -F'\t' '$1 == "docker start -P 1" { s += $4; n++ } END { if (n) printf "%.0f", s / n / '"$want"' * 1000 }' "$tmp/times.tsv")

cat <<EOF
## start and stop: $STACKS stacks × 2 services

Load average before: $load_before; after: $load_after. $ROUNDS rounds; each scenario once per round in a rotated
order; the table shows the median and every run. "client CPU" is user+sys of the command and its children (hal plus
the compose processes it runs); "engine CPU" is dockerd+containerd CPU during the run. hal's default \`--jobs\` here is
$default_jobs (4 per CPU, clamped to 8–16).

### start from stopped (containers exist, stopped by \`docker stop\`)

| command | median | runs (s) | vs floor | vs xargs -P 8 | client CPU | engine CPU |
|---|---|---|---|---|---|---|
$(for j in $JOBS_SWEEP; do row "hal start --all --jobs $j" "\`hal module start --all --jobs $j\`$([[ $j == "$default_jobs" ]] && echo ' (default)')"; done)
$(for j in $JOBS_SWEEP; do row "hal start --all --no-wait --jobs $j" "\`hal module start --all --no-wait --jobs $j\`"; done)
$(row "compose up -d loop" "loop of \`docker compose up -d\`")
$(row "compose up -d xargs -P 8" "\`xargs -P 8\` of \`docker compose up -d\`")
$(row "docker start -P 8" "floor: \`docker start\` 8 at a time")
$(row "docker start -P 1" "\`docker start\` 1 at a time")

Best \`--jobs\`: $best_wait_j waiting for active ($best_wait s), $best_nw_j with \`--no-wait\` ($best_nw s).
Engine cost of one container start (docker start 1 at a time): about ${per_start:-?} ms of dockerd+containerd CPU
($want starts in $p1 s).

| target | measured | |
|---|---|---|
| start --all (default, waits for active) ≤ 1.15 × floor | $hal_default s vs 1.15 × $floor s = $(awk -v f="$floor" 'BEGIN { printf "%.2f", f * 1.15 }') s | $(mark "$(ok "$hal_default" "$floor" 1.15)") |
| start --all (default) no slower than xargs -P 8 | $hal_default s vs $xargs8 s | $(mark "$(ok "$hal_default" "$xargs8" 1)") |
| start --all --no-wait (default jobs) ≤ 1.15 × floor | $hal_default_nw s vs $(awk -v f="$floor" 'BEGIN { printf "%.2f", f * 1.15 }') s | $(mark "$(ok "$hal_default_nw" "$floor" 1.15)") |
| start --all --no-wait (default jobs) no slower than xargs -P 8 | $hal_default_nw s vs $xargs8 s | $(mark "$(ok "$hal_default_nw" "$xargs8" 1)") |
| best --jobs, waiting (--jobs $best_wait_j) ≤ 1.15 × floor | $best_wait s vs $(awk -v f="$floor" 'BEGIN { printf "%.2f", f * 1.15 }') s | $(mark "$(ok "$best_wait" "$floor" 1.15)") |
| best --jobs, --no-wait (--jobs $best_nw_j) ≤ 1.15 × floor | $best_nw s vs $(awk -v f="$floor" 'BEGIN { printf "%.2f", f * 1.15 }') s | $(mark "$(ok "$best_nw" "$floor" 1.15)") |
| best --jobs, --no-wait (--jobs $best_nw_j) no slower than xargs -P 8 | $best_nw s vs $xargs8 s | $(mark "$(ok "$best_nw" "$xargs8" 1)") |

### stop (compose down) and start after down (compose creates the containers)

| command | median | runs (s) | client CPU | engine CPU |
|---|---|---|---|---|
$(for ((i = 0; i < ${#pair_names[@]}; i += 2)); do prow "${pair_names[$i]}" "\`${pair_names[$i]}\`"; done)
$(for ((i = 1; i < ${#pair_names[@]}; i += 2)); do prow "${pair_names[$i]}" "\`${pair_names[$i]}\`"; done)

EOF
if [[ -s $tmp/failed ]]; then
    echo "Runs that failed their check: $(sort -u "$tmp/failed" | paste -sd, -)."
    echo
fi
