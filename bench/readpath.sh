#!/usr/bin/env bash
# The read path on a lived-in node (issue 40): `hal status` and `hal --json status`
# of STACKS stacks × 2 services (200 by default) against one raw
# `GET /containers/json?all=1` on the engine's socket, in paired runs; peak RSS;
# and the files one call opens.
#
#   bench/readpath.sh                         # STACKS=200 PAIRS=15, a private engine
#   STACKS=100 PAIRS=9 bench/readpath.sh      # smaller, on a busy machine
#   HAL_BEFORE=/path/to/old/hal bench/readpath.sh   # also time an older binary, paired
#   DOCKER_HOST=unix:///var/run/docker.sock bench/readpath.sh   # the main engine
#
# A lived-in node, not a fresh one (a fresh state flattered hal by 0.2-0.3× last
# time): every module's ledger holds LEDGER_GENS earlier generations per service
# (written as hal writes them, with made-up ids), every 10th stack has a one-shot
# job that exited 0, and every 25th module was stopped with `hal stop`. Each
# pair runs the commands once each, back to back, in a rotated order; the figures
# are the medians of PAIRS runs and the median of the per-pair ratios. The file
# count is strace's successful `openat` calls of one call (all, and those in the
# state directory and the services root).
# Prints a markdown section on stdout; progress goes to stderr.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
STACKS=${STACKS:-200}
PAIRS=${PAIRS:-15}
RSS_RUNS=${RSS_RUNS:-5}
LEDGER_GENS=${LEDGER_GENS:-8}
# QUIET_SECS (120): the longest wait for idle CPUs before the runs (bench_quiet).

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_private_engine
bench_init readpath hbrp jq curl docker strace /usr/bin/time
sock=$ENGINE_SOCK
trap bench_private_cleanup EXIT

# --- a lived-in node -----------------------------------------------------------
bench_stacks
bench_hal_env
cd "$tmp"
jobs=0
for i in "${!projects[@]}"; do
    if (((i + 1) % 10 == 0)); then
        cat >>"$tmp/services/${projects[$i]}/compose.yaml" <<'YAML'
  job:
    image: hal-fixture:latest
    command: ["sh", "-c", "exit 0"]
    restart: "no"
YAML
        jobs=$((jobs + 1))
    fi
done
say "starting $STACKS stacks with hal on $DOCKER_HOST"
"$HAL_BIN" start --all --jobs 16 >/dev/null
stopped=()
for i in "${!projects[@]}"; do
    (((i + 1) % 25 == 0)) && stopped+=("${projects[$i]}")
done
((${#stopped[@]} == 0)) || "$HAL_BIN" stop "${stopped[@]}" >/dev/null
# Earlier generations in every ledger, as hal records them (created, first and
# last seen in the past; the newest KEEP per replica stay).
now=$(date +%s)
for f in "$tmp/state/ledger/"*.json; do
    [[ $(basename "$f") == .* ]] && continue
    jq --argjson n "$LEDGER_GENS" --argjson now "$now" '
        .containers as $c
        | ($c | map({service, number}) | unique) as $replicas
        | [range(0; $n) as $k | $replicas[] | . as $r
            | {id: ("\($k)\($r.number)" + ("0" * 64))[0:64],
               service: $r.service, number: $r.number,
               created: ($now - 86400 * ($n - $k)), first_seen: ($now - 86400 * ($n - $k)),
               last_seen: ($now - 86400 * ($n - $k) + 3600)}]
        | {containers: (. + $c)}' "$f" >"$f.new"
    mv "$f.new" "$f"
done
"$HAL_BIN" status >/dev/null || true
containers=$(curl -sf --unix-socket "$sock" "http://x/v1.41/containers/json?all=1" | jq length)
exited=$(curl -sf --unix-socket "$sock" 'http://x/v1.41/containers/json?all=1&filters=%7B%22status%22%3A%5B%22exited%22%5D%7D' | jq length)
# What --json's contract costs the engine: an exited container is inspected (its
# exact start and finish times are in no list), so its anchor is the list call and
# those inspects, by one curl on one connection.
inspects=()
for id in $(curl -sf --unix-socket "$sock" 'http://x/v1.41/containers/json?all=1&filters=%7B%22status%22%3A%5B%22exited%22%5D%7D' | jq -r '.[].Id'); do
    inspects+=("http://x/v1.41/containers/$id/json")
done
gens=$(cat "$tmp/state/ledger/"[!.]*.json | jq -s '[.[].containers | length] | add')
sleep 15 # containers that have been up a while
quiet=$(bench_quiet "${QUIET_SECS:-120}")

# --- files per call ----------------------------------------------------------
opened() { # LABEL CMD...: one run's successful openat calls (all, state dir, services root, compose files and .env), and its stat calls (all, failing)
    local label=$1
    shift
    strace -f -qq -e trace=openat,statx,newfstatat,stat,lstat -o "$tmp/strace" "$@" >/dev/null 2>&1 || true
    local ok stats
    ok=$(grep 'openat(' "$tmp/strace" | grep -v ' = -1 ' || true)
    stats=$(grep -v 'openat(' "$tmp/strace" | grep -E 'stat' || true)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$(grep -c . <<<"$ok")" \
        "$(grep -c "\"$tmp/state/" <<<"$ok" || true)" "$(grep -c "\"$tmp/services" <<<"$ok" || true)" \
        "$(grep -cE "\"$tmp/services/[^\"]*/(compose|docker-compose)[^\"/]*\.ya?ml\"|\"$tmp/services/[^\"]*/\.env\"" <<<"$ok" || true)" \
        "$(grep -c . <<<"$stats")" "$(grep -c ' = -1 ' <<<"$stats" || true)"
}
: >"$tmp/files.tsv"
strace_row() { opened "$@" >>"$tmp/files.tsv"; }
strace_row "hal status" "$HAL_BIN" status
strace_row "hal --json status" "$HAL_BIN" --json status
if [[ -n ${HAL_BEFORE:-} ]]; then
    strace_row "hal status (before)" "$HAL_BEFORE" status
    strace_row "hal --json status (before)" "$HAL_BEFORE" --json status
fi

# --- paired runs ---------------------------------------------------------------
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
uptime_before=$(uptime)
names=("hal status" "hal --json status" "curl list call" "curl list + inspects")
cmds=("$HAL_BIN status" "$HAL_BIN --json status"
    "curl -sf --unix-socket $sock http://x/v1.41/containers/json?all=1"
    "curl -sf --unix-socket $sock http://x/v1.41/containers/json?all=1 ${inspects[*]}")
if [[ -n ${HAL_BEFORE:-} ]]; then
    names+=("hal status (before)" "hal --json status (before)")
    cmds+=("$HAL_BEFORE status" "$HAL_BEFORE --json status")
fi
: >"$tmp/pairs.tsv"
set -f # the commands are words split by the shell: no globbing of curl's `?`
TIMEFORMAT='%3R %3U %3S'
for c in "${cmds[@]}"; do $c >/dev/null 2>&1 || true; done # warm-up
for p in $(seq 1 "$PAIRS"); do
    say "pair $p/$PAIRS"
    for k in "${!cmds[@]}"; do
        j=$(((k + p) % ${#cmds[@]}))
        # bash's `time`: wall, user and system seconds (getrusage) of the command alone.
        # shellcheck disable=SC2086 # a command line of words, no shell syntax
        t=$({ time ${cmds[$j]} >/dev/null 2>&1 || true; } 2>&1)
        printf '%s\t%s\t%s\t%s\n' "$p" "${names[$j]}" "${t%% *}" "$(awk '{ printf "%.3f", $2 + $3 }' <<<"$t")" >>"$tmp/pairs.tsv"
    done
done
set +f
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
uptime_after=$(uptime)
# Does hal's own status write a ledger on this unchanged node? (inode and mtime of each)
ledgers() { find "$tmp/state/ledger" -name '*.json' -printf '%p %i %T@\n' | sort | md5sum; }
ledger_before=$(ledgers)
for _ in 1 2 3; do "$HAL_BIN" status >/dev/null 2>&1 || true; done
ledger_after=$(ledgers)

say "peak RSS"
rss_hal=$(bench_rss_max "$HAL_BIN" status)
rss_json=$(bench_rss_max "$HAL_BIN" --json status)
rss_curl=$(bench_rss_max curl -sf --unix-socket "$sock" "http://x/v1.41/containers/json?all=1")

med() { # NAME [COLUMN]: the median wall time (or, with 4, CPU time) of NAME's runs
    awk -F'\t' -v k="$1" -v c="${2:-3}" '$2 == k { print $c }' "$tmp/pairs.tsv" | sort -g |
        awk '{ v[++n] = $1 } END { printf "%.6f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
range() { awk -F'\t' -v k="$1" '$2 == k { print $3 }' "$tmp/pairs.tsv" | sort -g | awk 'NR == 1 { a = $1 } { b = $1 } END { printf "%.1f–%.1f ms", a * 1000, b * 1000 }'; }
pratio() { # A B: the median over pairs of A's time / B's
    awk -F'\t' -v a="$1" -v b="$2" '$2 == a { x[$1] = $3 } $2 == b { y[$1] = $3 } END { for (p in x) if (p in y) print x[p] / y[p] }' "$tmp/pairs.tsv" |
        sort -g | awk '{ v[++n] = $1 } END { printf "%.2f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
ms() { awk -v s="$1" 'BEGIN { printf "%.1f ms", s * 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
ok_le() { awk -v a="$1" -v f="$2" 'BEGIN { print (a <= f) ? 1 : 0 }'; }
files() { awk -F'\t' -v k="$1" '$1 == k { printf "%s (state %s, services %s, compose files %s) | %s (%s failing)", $2, $3, $4, $5, $6, $7 }' "$tmp/files.tsv"; }
curl_med=$(med "curl list call")
hal_med=$(med "hal status")
json_med=$(med "hal --json status")
r_hal=$(ratio "$hal_med" "$curl_med")
r_json=$(ratio "$json_med" "$curl_med")
p_hal=$(pratio "hal status" "curl list call")
p_json=$(pratio "hal --json status" "curl list call")
before_rows=""
if [[ -n ${HAL_BEFORE:-} ]]; then
    before_rows=$(printf '| `hal status`, before (%s) | %s | %s | %s× | %s | %s |\n| `hal --json status`, before | %s | %s | %s× | %s | %s |\n' \
        "$(basename "$HAL_BEFORE")" "$(ms "$(med "hal status (before)")")" "$(range "hal status (before)")" \
        "$(pratio "hal status (before)" "curl list call")" "$(ms "$(med "hal status (before)" 4)")" "$(files "hal status (before)")" \
        "$(ms "$(med "hal --json status (before)")")" "$(range "hal --json status (before)")" \
        "$(pratio "hal --json status (before)" "curl list call")" "$(ms "$(med "hal --json status (before)" 4)")" "$(files "hal --json status (before)")")
    before_rows+=$'\n'
fi
unchanged=$([[ $ledger_before == "$ledger_after" ]] && echo "none" || echo "some (✗)")

cat <<EOF
## Issue 51: status on a lived-in node of $STACKS stacks × 2 services ($ENGINE_DESC)

$($private && echo "On a private engine (\`bench/engine.sh\`), so that its containers slow no one else's list calls.")
The node: $containers containers ($exited exited: one-shot jobs of $jobs stacks that exited 0), ${#stopped[@]} modules
stopped with \`hal stop\`, $gens generations in the ledgers ($LEDGER_GENS earlier ones per service replica). Load before
the runs: \`$uptime_before\`; after: \`$uptime_after\` (the CPUs were 90 % idle over 5 s after $quiet s of waiting, before the
first run). $PAIRS pairs, each command once per pair, rotated; hal: \`$(basename "$HAL_BIN")\`, release build of $(date -u -r "$HAL_BIN" '+%H:%M UTC').

| command | median | range | median ratio to curl, per pair | CPU (user + sys), median | files opened per call | stat calls per call |
|---|---|---|---|---|---|---|
| \`hal status\` | $(ms "$hal_med") | $(range "hal status") | ${p_hal}× | $(ms "$(med "hal status" 4)") | $(files "hal status") |
| \`hal --json status\` | $(ms "$json_med") | $(range "hal --json status") | ${p_json}× | $(ms "$(med "hal --json status" 4)") | $(files "hal --json status") |
${before_rows}| one raw \`GET /containers/json?all=1\` (curl) | $(ms "$curl_med") | $(range "curl list call") | 1 | $(ms "$(med "curl list call" 4)") | | |
| the same and an inspect of each of the $exited exited containers (one curl, one connection) | $(ms "$(med "curl list + inspects")") | $(range "curl list + inspects") | $(pratio "curl list + inspects" "curl list call")× | $(ms "$(med "curl list + inspects" 4)") | | |

Peak RSS (max of $RSS_RUNS runs): \`hal status\` $(mib "$rss_hal"), \`hal --json status\` $(mib "$rss_json"), curl $(mib "$rss_curl").
Ledger files (and their index) that three more \`hal status\` calls rewrote: $unchanged.

| target | measured | |
|---|---|---|
| \`hal status\` ≤ 1.2 × one raw list call | $(ms "$hal_med") vs $(ms "$curl_med") (${r_hal}×; per pair ${p_hal}×) | $(mark "$(ok_le "$r_hal" 1.2)") |
| \`hal --json status\` ≤ 1.3 × the same | $(ms "$json_med") vs $(ms "$curl_med") (${r_json}×; per pair ${p_json}×) | $(mark "$(ok_le "$r_json" 1.3)") |
| (its floor) \`hal --json status\` against the list call and the inspects its facts need | $(ms "$json_med") vs $(ms "$(med "curl list + inspects")") ($(ratio "$json_med" "$(med "curl list + inspects")")×; per pair $(pratio "hal --json status" "curl list + inspects")×) | |

EOF
