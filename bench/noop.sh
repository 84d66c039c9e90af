#!/usr/bin/env bash
# A no-op start: `hal module start X` of a running, unchanged stack (hal's fast
# path: one engine list call, no compose) against `docker compose up -d` (v2)
# and `docker-compose up -d` (v1) of a running stack, in one run.
#
#   bench/noop.sh                   # ROUNDS=3 RUNS=10 by default
#
# The v2 anchor runs on the stack hal started (hal itself runs compose v2), as
# hal runs compose: in the stack's directory with -p X and no -f (issue 15);
# HAL_BEFORE=PATH adds an older hal binary's no-op start, for a before/after row;
# v1 gets its own stack, created by v1, since v1 would recreate v2's containers.
# hyperfine, ROUNDS interleaved rounds pooled; the container ids are checked
# afterwards to prove nothing was recreated.
# Prints a markdown section on stdout; progress goes to stderr.
# Target (issue 8): hal <= 1/4 of docker compose up -d.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-10}

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_init noop hbno hyperfine jq docker docker-compose

mkdir -p "$tmp/state"
for p in "${pfx}v2" "${pfx}v1"; do
    mkdir -p "$tmp/services/$p"
    bench_stack "$p"
done
bench_hal_env
cd "$tmp"
x="${pfx}v2" y="${pfx}v1"
fy=$tmp/services/$y/compose.yaml

say "starting $x with hal (compose v2) and $y with compose v1"
"$HAL_BIN" module start "$x" >/dev/null
docker-compose -f "$fy" -p "$y" up -d >/dev/null 2>&1
sleep 1.5 # past the 1 s settle time, so hal sees both settled
ids_before="$(docker ps -q --no-trunc --filter "label=com.docker.compose.project=$x" | sort) $(docker ps -q --no-trunc --filter "label=com.docker.compose.project=$y" | sort)"
# The fast path must answer without compose: check it says active at once.
out=$("$HAL_BIN" module start "$x")
[[ $out == "$x: active"* ]] || { say "hal said: $out"; exit 1; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
names=("hal module start X" "docker compose up -d" "docker-compose up -d (v1)")
cmds=("$HAL_BIN module start $x"
    "cd $tmp/services/$x && docker compose -p $x up -d --remove-orphans"
    "cd $tmp/services/$y && docker-compose -p $y up -d --remove-orphans")
if [[ -n ${HAL_BEFORE:-} ]]; then
    names+=("hal before")
    cmds+=("$(realpath "$HAL_BEFORE") module start $x")
fi
n=${#names[@]}
for r in $(seq 1 "$ROUNDS"); do
    say "round $r/$ROUNDS"
    args=()
    for k in $(seq 0 $((n - 1))); do
        j=$(((k + r) % n))
        args+=(-n "${names[$j]}" "${cmds[$j]}")
    done
    hyperfine --style none --warmup 2 --runs "$RUNS" --export-json "$tmp/noop.$r.json" "${args[@]}" >/dev/null 2>&1
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
ids_after="$(docker ps -q --no-trunc --filter "label=com.docker.compose.project=$x" | sort) $(docker ps -q --no-trunc --filter "label=com.docker.compose.project=$y" | sort)"
[[ $ids_before == "$ids_after" ]] || { say "containers were recreated during the benchmark"; exit 1; }

# Where hal's time goes: syscalls of one no-op start.
strace_summary=$(strace -f -c -o "$tmp/strace.txt" "$HAL_BIN" module start "$x" >/dev/null 2>&1 && awk 'NR > 2 && $1 ~ /^[0-9.]+$/ && NF >= 5 { print $NF ": " $4 }' "$tmp/strace.txt" | head -6 | paste -sd, - | sed 's/,/, /g' || true)

jq -s '[.[].results[]] | group_by(.command) | map({key: .[0].command, value: (map(.times) | add | sort |
        {n: length, min: .[0], mean: (add / length),
         median: (if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end),
         sd: ((add / length) as $m | map((. - $m) * (. - $m)) | add / length | sqrt)})}) | from_entries' \
    "$tmp"/noop.*.json >"$tmp/pooled.json"
hal=$(get "hal module start X" median)
dc=$(get "docker compose up -d" median)
v1=$(get "docker-compose up -d (v1)" median)
ratio=$(awk -v a="$hal" -v b="$dc" 'BEGIN { printf "%.2f", a / b }')
ok=$(awk -v r="$ratio" 'BEGIN { print (r <= 0.25) ? 1 : 0 }')

cat <<EOF
## no-op start: a running, unchanged stack of 2 services

Load average before: $load_before; after: $load_after.
hyperfine, $ROUNDS interleaved rounds × $RUNS runs (after 2 warmups) pooled; no container was recreated (ids checked).

| command | median | mean ± σ | min | runs |
|---|---|---|---|---|
$(row "hal module start X" "\`hal module start X\` (fast path)")
$(row "docker compose up -d" "\`docker compose -p X up -d --remove-orphans\` (v2)")
$(row "docker-compose up -d (v1)" "\`docker-compose -p Y up -d --remove-orphans\` (v1)")
$([[ -n ${HAL_BEFORE:-} ]] && row "hal before" "\`hal module start X\`, HAL_BEFORE ($HAL_BEFORE)")

| target | measured | |
|---|---|---|
| hal ≤ ¼ of \`docker compose up -d\` | $(fmt "$hal") / $(fmt "$dc") = $ratio (v1: $(awk -v a="$hal" -v b="$v1" 'BEGIN { printf "%.2f", a / b }')) | $(mark "$ok") |

$([[ -n ${HAL_BEFORE:-} ]] && echo "Before (HAL_BEFORE): $(fmt "$(get "hal before" median)") / $(fmt "$dc") = $(awk -v a="$(get "hal before" median)" -v b="$dc" 'BEGIN { printf "%.2f", a / b }') of \`docker compose up -d\`, in the same run.")

hal's syscalls in one no-op start (strace -c -f, calls): ${strace_summary:-n/a}.

EOF
