#!/usr/bin/env bash
# Start after `down` (issue 13): compose must create every container. hal runs
# one compose process per module (`up`), the compose plugin binary directly,
# when it remembers the image list compose gave for the same inputs; a cold
# start (no record) asks `config --format json` first.
#
#   bench/startdown.sh              # STACKS=40 ROUNDS=3 LIVED=6
#
# The node is a lived-in one (issue 40): before round 1, LIVED cycles of
# `hal module start --all` and `down` fill every module's ledger with earlier
# generations, as on a node that has run for a while.
#
# Every run follows an `xargs -P 8` of `docker compose down` of all the stacks,
# and is checked (all containers running after it). Scenarios, once per round,
# rotated; median of ROUNDS:
#   hal                        `hal module start --all` (waits for active; --jobs 8),
#                              image lists remembered (one warm-up start before round 1)
#   hal, cold (config + up)    the same with an empty state dir: `config`, then `up`
#                              (the one-process design "plugin direct" alone)
#   hal through docker compose HAL_COMPOSE="docker compose", lists remembered: one
#                              compose process, but a `docker` CLI in front of it
#                              (the design "up with the pull done beforehand" alone)
#   xargs: up                  the anchor, `xargs -P 8` of `docker compose up -d`
#   xargs: plugin up           `xargs -P 8` of the plugin binary's `up -d`: one process,
#                              no docker CLI, no wait (the floor)
# Then the cost of one compose process: hyperfine of `config --format json` of one
# stack through `docker compose` and through the plugin binary.
# Client CPU: user+sys of the command and all its children (/usr/bin/time).
# Prints a markdown section on stdout; progress goes to stderr.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
STACKS=${STACKS:-40}
ROUNDS=${ROUNDS:-3}
JOBS=${JOBS:-8}
LIVED=${LIVED:-6}

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_init startdown hbsd docker /usr/bin/time awk hyperfine jq
plugin=${COMPOSE_PLUGIN:-}
if [[ -z $plugin ]]; then
    for d in /usr/local/lib/docker/cli-plugins /usr/libexec/docker/cli-plugins /usr/lib/docker/cli-plugins \
        "$HOME/.docker/cli-plugins"; do
        [[ -x $d/docker-compose ]] && plugin=$d/docker-compose && break
    done
fi
[[ -n $plugin ]] || { say "the compose plugin binary is not found (set COMPOSE_PLUGIN)"; exit 1; }

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
list=$(printf '%s ' "${projects[@]}")
each() { # the xargs -P 8 of a per-project command, {} the project
    echo "printf '%s\n' $list | xargs -P 8 -I{} sh -c '$1'"
}
f='-f '$tmp'/services/{}/compose.yaml -p {}'
down=$(each "docker compose $f down >/dev/null 2>&1")
names=("hal" "hal, cold (config + up)" "hal through docker compose" "xargs: up" "xargs: plugin up")
cmds=("$HAL_BIN module start --all --jobs $JOBS"
    "rm -rf $tmp/cold && mkdir $tmp/cold && HAL_STATE_DIR=$tmp/cold $HAL_BIN module start --all --jobs $JOBS"
    "HAL_COMPOSE='docker compose' $HAL_BIN module start --all --jobs $JOBS"
    "$(each "docker compose $f up -d")"
    "$(each "$plugin $f up -d")")

# The warm-up: hal remembers each stack's image list, and LIVED cycles of
# start and down leave earlier generations in every ledger.
for w in $(seq 0 "$LIVED"); do
    ((w == 0)) || bash -c "$down"
    "$HAL_BIN" module start --all --jobs "$JOBS" >/dev/null 2>&1 || { say "warm-up start $w failed"; exit 1; }
done
generations=$(jq -s '[.[].containers | length] | add' "$tmp"/state/ledger/*.json 2>/dev/null || echo "?")
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$tmp/times.tsv"
n=${#names[@]}
for r in $(seq 1 "$ROUNDS"); do
    say "round $r/$ROUNDS"
    for k in $(seq 0 $((n - 1))); do
        i=$(((k + r) % n))
        bash -c "$down"
        [[ $(ours -a | grep -c . || true) -eq 0 ]] || { say "down left containers"; exit 1; }
        t0=$EPOCHREALTIME
        /usr/bin/time -f '%U %S' -o "$tmp/cpu" bash -c "${cmds[$i]}" >"$tmp/out" 2>&1 || { say "${names[$i]} failed"; tail -5 "$tmp/out" >&2; exit 1; }
        t1=$EPOCHREALTIME
        [[ $(count_running) -eq $want ]] || { say "${names[$i]}: $(count_running) of $want running"; exit 1; }
        printf '%s\t%s\t%s\n' "${names[$i]}" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" \
            "$(awk '{ printf "%.2f", $1 + $2 }' "$tmp/cpu" | tail -1)" >>"$tmp/times.tsv"
        say "  ${names[$i]}: $(tail -1 "$tmp/times.tsv" | cut -f2) s"
    done
done
one=${projects[0]}
hyperfine --style none --warmup 2 --runs 20 --export-json "$tmp/one.json" \
    -n "docker compose config" "docker compose -f $tmp/services/$one/compose.yaml -p $one config --format json" \
    -n "plugin config" "$plugin -f $tmp/services/$one/compose.yaml -p $one config --format json" >/dev/null 2>&1
jq -s '[.[].results[]] | group_by(.command) | map({key: .[0].command, value: (map(.times) | add | sort |
        {n: length, min: .[0], mean: (add / length),
         median: (if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end),
         sd: ((add / length) as $m | map((. - $m) * (. - $m)) | add / length | sqrt)})}) | from_entries' \
    "$tmp/one.json" >"$tmp/pooled.json"
cpu_one() { /usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{ printf "%.0f ms", ($1 + $2) * 1000 }'; }
cpu_cli=$(cpu_one docker compose -f "$tmp/services/$one/compose.yaml" -p "$one" config --format json)
cpu_plugin=$(cpu_one "$plugin" -f "$tmp/services/$one/compose.yaml" -p "$one" config --format json)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

smed() {
    awk -F'\t' -v k="$1" -v f="${2:-2}" '$1 == k { print $f }' "$tmp/times.tsv" | sort -g |
        awk '{ v[++n] = $1 } END { printf "%.2f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
sruns() { awk -F'\t' -v k="$1" '$1 == k { printf "%s%.1f", (n++ ? " / " : ""), $2 }' "$tmp/times.tsv"; }
# The per-round ratio: hal against the anchor of the same round (the load of
# those minutes hits both).
pair_ratio=$(awk -F'\t' -v n="$n" 'NR % n == 1 { r++ } $1 == "hal" { h[r] = $2 } $1 == "xargs: up" { a[r] = $2 }
    END { for (k in h) if (k in a) print h[k] / a[k] }' "$tmp/times.tsv" | sort -g |
    awk '{ v[++n] = $1 } END { printf "%.2f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }')
anchor=$(smed "xargs: up")
anchor_cpu=$(smed "xargs: up" 3)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
ok_le() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { print (a <= b * f) ? 1 : 0 }'; }

cat <<EOF
## start after down: $STACKS stacks × 2 services, compose creates the containers

A lived-in node: $LIVED cycles of start and \`down\` before round 1 left $generations generations in the
ledgers. Load average before: $load_before; after: $load_after. $ROUNDS rounds, rotated; each run follows an \`xargs -P 8\` of
\`docker compose down\` and is checked ($want running after it). hal waits for active (every container up 1 s);
\`compose up -d\` waits for nothing. Plugin binary: \`$plugin\`.

| command | median | runs (s) | vs \`xargs -P 8\` of \`up -d\` | client CPU | CPU vs anchor |
|---|---|---|---|---|---|
$(for k in "${names[@]}"; do printf '| %s | %s s | %s | %s× | %s s | %s× |\n' "$k" "$(smed "$k")" "$(sruns "$k")" "$(ratio "$(smed "$k")" "$anchor")" "$(smed "$k" 3)" "$(ratio "$(smed "$k" 3)" "$anchor_cpu")"; done)

One compose process, \`config --format json\` of one stack (hyperfine, 20 runs):

| command | median | mean ± σ | min | runs |
|---|---|---|---|---|
$(row "docker compose config" "\`docker compose … config --format json\`")
$(row "plugin config" "the plugin binary, \`… config --format json\`")

Client CPU of one such call: $cpu_cli through \`docker compose\`, $cpu_plugin through the plugin binary.

| target | measured | |
|---|---|---|
| start after down ≤ 1.0 × \`xargs -P 8\` of \`docker compose up -d\` | $(smed hal) s vs $anchor s ($(ratio "$(smed hal)" "$anchor")×; per round $pair_ratio×) | $(mark "$(ok_le "$(smed hal)" "$anchor" 1.0)") |
| its client CPU ≤ 1.1 × the anchor's | $(smed hal 3) s vs $anchor_cpu s ($(ratio "$(smed hal 3)" "$anchor_cpu")×) | $(mark "$(ok_le "$(smed hal 3)" "$anchor_cpu" 1.1)") |

EOF
