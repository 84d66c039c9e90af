#!/usr/bin/env bash
# `hal status` of 40 running stacks (2 services each) against its anchors, in one run.
#
#   bench/status.sh                 # ROUNDS=3 by default
#   ENGINE=podman bench/status.sh   # the same against the rootful Podman service (bench/lib.sh)
#
# Anchors: `docker ps -a --filter label=com.docker.compose.project`, one raw
# list call over the socket (curl), a loop of `docker compose -p X ps` over the
# 40 projects, and the v1 loop `docker-compose -f FILE -p X ps` (v1 needs the
# file). The commands are timed with hyperfine, in ROUNDS interleaved rounds
# (every command once per round, in a rotated order), and the runs are pooled.
# Peak RSS: max of RSS_RUNS runs under /usr/bin/time.
# Prints a markdown section on stdout; progress goes to stderr.
# Targets (issue 2): hal status no slower than docker ps, >= 50x faster than the
# compose loop, < 15 MiB peak. Under Podman (issue 27): hal status within 1.2x the
# raw list call on its socket.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
STACKS=${STACKS:-40}
ROUNDS=${ROUNDS:-3}
FAST_RUNS=${FAST_RUNS:-20}   # per round, for hal / docker ps / curl
LOOP_RUNS=${LOOP_RUNS:-2}    # per round, for the v2 compose loop
V1_RUNS=${V1_RUNS:-1}        # per round, for the v1 compose loop
RSS_RUNS=${RSS_RUNS:-10}

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_init status hbst hyperfine jq curl docker docker-compose /usr/bin/time

# --- layout: STACKS stacks x 2 services --------------------------------------
mkdir -p "$tmp/services" "$tmp/state"
bench_stacks
bench_hal_env
cd "$tmp"

say "bringing up $STACKS stacks"
printf '%s\n' "${projects[@]}" |
    xargs -P 8 -I{} docker compose -f "$tmp/services/{}/compose.yaml" -p {} up -d --quiet-pull >/dev/null 2>&1
t_up=$SECONDS
running=$(docker ps --filter status=running --format '{{.Label "com.docker.compose.project"}}' | grep -c "^$pfx" || true)
[[ $running -eq $((STACKS * 2)) ]] || { say "only $running containers running"; exit 1; }
# A benchmark of a wrong answer is worthless: hal must see them all active
# (a container counts as up once it has run for a second).
for _ in $(seq 1 60); do "$HAL_BIN" status >/dev/null && break; sleep 0.5; done
"$HAL_BIN" status >/dev/null || { say "hal status did not exit 0"; "$HAL_BIN" status >&2; exit 1; }
n=$("$HAL_BIN" --json status | jq '[.modules[] | select(.state == "active")] | length')
[[ $n -eq $STACKS ]] || { say "hal sees $n active modules"; exit 1; }

# A node's steady state: containers that have been up a while. hal describes
# those from the list call alone and inspects only younger ones (< 10 s up).
wait_s=$((15 - (SECONDS - t_up)))
((wait_s <= 0)) || sleep "$wait_s"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

filter=$(jq -rn '{"label": ["com.docker.compose.project"]} | tojson | @uri')
loop_v2="for p in ${projects[*]}; do docker compose -p \$p ps >/dev/null; done"
loop_v1="for p in ${projects[*]}; do docker-compose -f $tmp/services/\$p/compose.yaml -p \$p ps >/dev/null; done"
fast_names=("hal status" "hal --json status" "docker ps -a --filter label" "curl list call")
fast_cmds=("$HAL_BIN status" "$HAL_BIN --json status"
    "docker ps -a --filter label=com.docker.compose.project"
    "curl -sf --unix-socket $ENGINE_SOCK 'http://x/v1.41/containers/json?all=1&filters=$filter'")

# hyperfine group: NAME-OF-JSON WARMUP RUNS name cmd [name cmd...]
hf() {
    local out=$1 warm=$2 runs=$3
    shift 3
    local args=()
    while (($#)); do args+=(-n "$1" "$2"); shift 2; done
    hyperfine --style none --warmup "$warm" --runs "$runs" --export-json "$out" "${args[@]}" >/dev/null 2>&1
}

for r in $(seq 1 "$ROUNDS"); do
    say "round $r/$ROUNDS"
    # Rotate the order of the fast group so no command always runs first.
    pairs=()
    for k in 0 1 2 3; do
        j=$(((k + r) % 4))
        pairs+=("${fast_names[$j]}" "${fast_cmds[$j]}")
    done
    hf "$tmp/fast.$r.json" 3 "$FAST_RUNS" "${pairs[@]}"
    hf "$tmp/loop2.$r.json" 0 "$LOOP_RUNS" "docker compose -p X ps (loop of $STACKS)" "$loop_v2"
    hf "$tmp/loop1.$r.json" 0 "$V1_RUNS" "docker-compose -p X ps (v1, loop of $STACKS)" "$loop_v1"
done

say "peak RSS"
rss_hal=$(bench_rss_max "$HAL_BIN" status)
rss_hal_json=$(bench_rss_max "$HAL_BIN" --json status)
rss_ps=$(bench_rss_max docker ps -a --filter label=com.docker.compose.project)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Pool every run of every round per command: median, mean, sd, min, runs.
jq -s '[.[].results[]] | group_by(.command) | map({key: .[0].command, value: (map(.times) | add | sort |
        {n: length, min: .[0], mean: (add / length),
         median: (if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end),
         sd: ((add / length) as $m | map((. - $m) * (. - $m)) | add / length | sqrt)})}) | from_entries' \
    "$tmp"/fast.*.json "$tmp"/loop2.*.json "$tmp"/loop1.*.json >"$tmp/pooled.json"

hal_med=$(get "hal status" median)
ps_med=$(get "docker ps -a --filter label" median)
loop_med=$(get "docker compose -p X ps (loop of $STACKS)" median)
v1_med=$(get "docker-compose -p X ps (v1, loop of $STACKS)" median)
ok_ps=$(awk -v a="$hal_med" -v b="$ps_med" 'BEGIN { print (a <= b) ? 1 : 0 }')
speedup=$(awk -v a="$hal_med" -v b="$loop_med" 'BEGIN { printf "%.0f", b / a }')
ok_loop=$(awk -v s="$speedup" 'BEGIN { print (s >= 50) ? 1 : 0 }')
curl_med=$(get "curl list call" median)
ok_curl=$(awk -v a="$hal_med" -v b="$curl_med" 'BEGIN { print (a <= 1.2 * b) ? 1 : 0 }')
ok_rss=$(awk -v k="$rss_hal" -v j="$rss_hal_json" 'BEGIN { print (k < 15 * 1024 && j < 15 * 1024) ? 1 : 0 }')

cat <<EOF
## status: $STACKS stacks × 2 services, all running ($ENGINE)

Engine: $ENGINE_DESC on \`$ENGINE_SOCK\`.
Load average (1/5/15 min) before: $load_before; after: $load_after. Timed once every container had been up for at
least 15 s. hyperfine, $ROUNDS interleaved rounds pooled: hal, docker ps and curl $FAST_RUNS runs per round after 3 warmups;
the v2 loop $LOOP_RUNS per round, the v1 loop $V1_RUNS per round.

| command | median | mean ± σ | min | runs |
|---|---|---|---|---|
$(row "hal status" "\`hal status\`")
$(row "hal --json status" "\`hal --json status\`")
$(row "docker ps -a --filter label" "\`docker ps -a --filter label=com.docker.compose.project\`")
$(row "curl list call" "one raw list call over the socket (curl)")
$(row "docker compose -p X ps (loop of $STACKS)" "loop of \`docker compose -p X ps\` × $STACKS")
$(row "docker-compose -p X ps (v1, loop of $STACKS)" "loop of \`docker-compose -p X ps\` (v1) × $STACKS")

| peak RSS (max of $RSS_RUNS runs) | |
|---|---|
| \`hal status\` | $(mib "$rss_hal") |
| \`hal --json status\` | $(mib "$rss_hal_json") |
| \`docker ps -a --filter …\` (Go CLI, for scale) | $(mib "$rss_ps") |

| target | measured | |
|---|---|---|
| \`hal status\` no slower than \`docker ps\` | $(fmt "$hal_med") vs $(fmt "$ps_med") | $(mark "$ok_ps") |
| ≥ 50× faster than the compose loop | ${speedup}× ($(fmt "$loop_med") / $(fmt "$hal_med")); v1 loop: $(awk -v a="$hal_med" -v b="$v1_med" 'BEGIN { printf "%.0f", b / a }')× | $(mark "$ok_loop") |
| \`hal status\` within 1.2× the raw list call (issue 27; the Podman target) | $(fmt "$hal_med") vs $(fmt "$curl_med") ($(awk -v a="$hal_med" -v b="$curl_med" 'BEGIN { printf "%.2f", a / b }')×) | $(mark "$ok_curl") |
| peak RSS < 15 MiB | $(mib "$rss_hal") (human), $(mib "$rss_hal_json") (json) | $(mark "$ok_rss") |

EOF
