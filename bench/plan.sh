#!/usr/bin/env bash
# `hal plan` (issue 49): what the next start would do to each service, on a node of
# STACKS stacks × 2 services, against `docker compose up --dry-run` of one module.
#
#   bench/plan.sh                          # STACKS=200 RUNS=15, a private engine
#   STACKS=5 RUNS=3 bench/plan.sh          # a quick try
#   DOCKER_HOST=unix:///var/run/docker.sock bench/plan.sh   # the main engine
#
# Every stack is started with hal; then the first one's compose file changes an
# environment variable (so its plan has a `recreate` with the key and both values).
# Timed, each RUNS times in a rotated order: `hal plan` of the edited module,
# `hal plan` of an unchanged one, `hal plan --all`, and, as the anchor, `docker
# compose up -d --dry-run` of the unchanged one (on the unchanged one because
# compose's dry run swaps a container when a recreate is needed, docker/compose#14029).
# Goals: `hal plan MODULE` ≤ 150 ms, `hal plan --all` at 200 stacks ≤ 2 s.
# Prints a markdown section on stdout; progress goes to stderr.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
STACKS=${STACKS:-200}
RUNS=${RUNS:-15}
# QUIET_SECS (120): the longest wait for idle CPUs before the runs (bench_quiet).

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_private_engine
bench_init plan hbpl jq docker
trap bench_private_cleanup EXIT
((STACKS >= 2)) || { echo "bench/plan: STACKS must be at least 2" >&2; exit 1; }

# --- the node ------------------------------------------------------------------
bench_stacks
bench_hal_env
cd "$tmp"
say "starting $STACKS stacks with hal on $DOCKER_HOST"
"$HAL_BIN" start --all --jobs 16 >/dev/null
edited=${projects[0]}
still=${projects[1]}
# An environment variable edited in the first stack's service `a`.
sed -i '0,/^    stop_signal: SIGKILL$/s//    stop_signal: SIGKILL\n    environment:\n      GREETING: "bye"/' \
    "$tmp/services/$edited/compose.yaml"
plan_out=$("$HAL_BIN" plan "$edited" || true)
"$HAL_BIN" plan "$still" >/dev/null || { echo "bench/plan: $still should plan nothing" >&2; exit 1; }
compose_version=$(docker compose version --short)
ids() { docker ps -aq --no-trunc --filter "label=com.docker.compose.project=$1" | sort | tr '\n' ' '; }
ids_before=$(ids "$edited")
quiet=$(bench_quiet "${QUIET_SECS:-120}")

# --- the runs --------------------------------------------------------------------
names=("hal plan (edited)" "hal plan (unchanged)" "hal plan --all" "compose up --dry-run")
# The rows' labels, in the order of names.
shown=("\`hal plan MODULE\` (edited)" "\`hal plan MODULE\` (unchanged)" "\`hal plan --all\`"
    "\`docker compose up -d --dry-run\` (unchanged)")
cmds=("$HAL_BIN plan $edited" "$HAL_BIN plan $still" "$HAL_BIN plan --all"
    "docker compose --project-directory $tmp/services/$still -p $still up -d --dry-run")
uptime_before=$(uptime)
: >"$tmp/runs.tsv"
TIMEFORMAT='%3R %3U %3S'
for c in "${cmds[@]}"; do $c >/dev/null 2>&1 || true; done # warm-up
for r in $(seq 1 "$RUNS"); do
    say "run $r/$RUNS"
    for k in "${!cmds[@]}"; do
        j=$(((k + r) % ${#cmds[@]}))
        # shellcheck disable=SC2086 # a command line of words, no shell syntax
        t=$({ time ${cmds[$j]} >/dev/null 2>&1 || true; } 2>&1)
        printf '%s\t%s\t%s\t%s\n' "$r" "${names[$j]}" "${t%% *}" "$(awk '{ printf "%.3f", $2 + $3 }' <<<"$t")" >>"$tmp/runs.tsv"
    done
done
uptime_after=$(uptime)
# Nothing was touched: the edited stack's containers are the ones hal started.
untouched=$([[ $(ids "$edited") == "$ids_before" ]] && echo "the same ✓" || echo "not the same ✗")

med() { # NAME [COLUMN]: the median wall time (or, with 4, CPU time) of NAME's runs
    awk -F'\t' -v k="$1" -v c="${2:-3}" '$2 == k { print $c }' "$tmp/runs.tsv" | sort -g |
        awk '{ v[++n] = $1 } END { printf "%.6f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
range() { awk -F'\t' -v k="$1" '$2 == k { print $3 }' "$tmp/runs.tsv" | sort -g | awk 'NR == 1 { a = $1 } { b = $1 } END { printf "%.1f–%.1f ms", a * 1000, b * 1000 }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f ms", s * 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
ok_le() { awk -v a="$1" -v f="$2" 'BEGIN { print (a <= f) ? 1 : 0 }'; }
row() { printf '| %s | %s | %s | %s× | %s |\n' "${shown[$2]}" "$(ms "$(med "$1")")" "$(range "$1")" "$(ratio "$(med "$1")" "$(med "compose up --dry-run")")" "$(ms "$(med "$1" 4)")"; }
one=$(med "hal plan (edited)")
all=$(med "hal plan --all")

cat <<EOF
## Issue 49: \`hal plan\` on a node of $STACKS stacks × 2 services ($ENGINE_DESC)

$($private && echo "On a private engine (\`bench/engine.sh\`).")
Every stack started with hal; the first one's service \`a\` then had an environment variable added
(\`hal plan\` says \`recreate\` with the key and both values). Load before the runs: \`$uptime_before\`;
after: \`$uptime_after\` (the CPUs were 90 % idle over 5 s after $quiet s of waiting). $RUNS runs of each,
rotated; hal: \`$(basename "$HAL_BIN")\`, built $(date -u -r "$HAL_BIN" '+%H:%M UTC'); compose $compose_version.

| command | median | range | ratio to compose's dry run | CPU (user + sys), median |
|---|---|---|---|---|
$(row "hal plan (edited)" 0)
$(row "hal plan (unchanged)" 1)
$(row "hal plan --all" 2)
$(row "compose up --dry-run" 3)

The edited module's plan:

\`\`\`
$plan_out
\`\`\`

The edited stack's containers after the runs, against before them: $untouched.

| target | measured | |
|---|---|---|
| \`hal plan MODULE\` ≤ 150 ms | $(ms "$one") | $(mark "$(ok_le "$one" 0.150)") |
| \`hal plan --all\` ≤ 2 s at 200 stacks | $(ms "$all") at $STACKS stacks | $(mark "$(ok_le "$all" 2)") |

EOF
