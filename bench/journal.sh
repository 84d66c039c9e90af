#!/usr/bin/env bash
# `hal logs --since` over a day of journal history beside `journalctl` reading the
# same range: one stack of SERVICES services that log to the journal (the journald
# driver with the compose labels), and LINES journal entries spread over them,
# written straight to journald's native socket with the fields the driver writes
# (COM_DOCKER_COMPOSE_PROJECT, …_PROJECT_WORKING_DIR, …_SERVICE, …_CONTAINER_NUMBER,
# CONTAINER_ID_FULL), as if earlier generations of those containers had printed them.
#
#   bench/journal.sh                # LINES=1000000 SERVICES=20 RUNS=3 by default
#
# journald keeps what it is sent in the order it comes, so the entries are all
# "today": `--since "1 day ago"` reads them all, which is the range asked for.
# Needs a live journal without a rate limit (scripts/provision.sh, step journald).
# Prints a markdown section on stdout; progress goes to stderr.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
LINES=${LINES:-1000000}
SERVICES=${SERVICES:-20}
RUNS=${RUNS:-3}
LABELS=com.docker.compose.project,com.docker.compose.service,com.docker.compose.project.working_dir,com.docker.compose.container-number

# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_init journal hbjn hyperfine journalctl systemd-cat python3 docker

echo probe | systemd-cat -t hal-bench || { say "no live journal (scripts/provision.sh)"; exit 1; }
p="${pfx}1"
dir=$tmp/services/$p
mkdir -p "$dir" "$tmp/state"
{
    echo "services:"
    for i in $(seq 1 "$SERVICES"); do
        cat <<EOF2
  s$i:
    image: hal-fixture:latest
    command: ["sleep", "100000"]
    stop_signal: SIGKILL
    logging:
      driver: journald
      options:
        labels: "$LABELS"
EOF2
    done
} >"$dir/compose.yaml"
bench_hal_env
say "starting $p ($SERVICES services)"
"$HAL_BIN" module start "$p" >/dev/null

say "writing $LINES entries to the journal"
t0=$(date +%s.%N)
python3 - "$p" "$dir" "$SERVICES" "$LINES" <<'EOF_PY'
import socket, sys
project, wd, services, lines = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.connect("/run/systemd/journal/socket")
for i in range(lines):
    n = i % services + 1
    msg = (f"MESSAGE=s{n} line {i} of a day of history: request served in 12 ms\n"
           f"PRIORITY=6\nCONTAINER_NAME={project}-s{n}-1\nCONTAINER_ID_FULL={'%064x' % (n + 1000)}\n"
           f"COM_DOCKER_COMPOSE_PROJECT={project}\nCOM_DOCKER_COMPOSE_PROJECT_WORKING_DIR={wd}\n"
           f"COM_DOCKER_COMPOSE_SERVICE=s{n}\nCOM_DOCKER_COMPOSE_CONTAINER_NUMBER=1\nSYSLOG_IDENTIFIER=hal-bench\n")
    while True:
        try:
            s.send(msg.encode())
            break
        except BlockingIOError:
            pass
        except OSError as e:
            if e.errno != 11:
                raise
EOF_PY
t1=$(date +%s.%N)
journalctl --sync 2>/dev/null || true
matches=(COM_DOCKER_COMPOSE_PROJECT="$p" COM_DOCKER_COMPOSE_PROJECT_WORKING_DIR="$dir")
got=$("$HAL_BIN" module logs --since "1 day ago" "$p" | wc -l)
jc=$(journalctl --since "1 day ago" "${matches[@]}" -o cat | wc -l)
say "hal printed $got lines, journalctl $jc (written: $LINES)"

fields=MESSAGE,PRIORITY,COM_DOCKER_COMPOSE_PROJECT,COM_DOCKER_COMPOSE_SERVICE,COM_DOCKER_COMPOSE_PROJECT_WORKING_DIR,COM_DOCKER_COMPOSE_CONTAINER_NUMBER,CONTAINER_ID_FULL
names=("hal module logs --since \"1 day ago\"" "hal module logs --since \"1 day ago\" --json"
    "journalctl -o json (hal's query)" "journalctl -o cat (the same matches)")
cmds=("$HAL_BIN module logs --since '1 day ago' $p >/dev/null"
    "$HAL_BIN --json module logs --since '1 day ago' $p >/dev/null"
    "journalctl --no-pager --quiet --all -o json --output-fields $fields --since '1 day ago' ${matches[*]} >/dev/null"
    "journalctl --no-pager --quiet --since '1 day ago' -o cat ${matches[*]} >/dev/null")
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$tmp/h.json" "${cmds[@]}" >&2 || \
    hyperfine --warmup 1 --runs "$RUNS" --export-json "$tmp/h.json" "${cmds[@]}" >&2
echo "### hal logs --since over the journal: $LINES lines, $SERVICES services ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo
echo "Written in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f s", b - a }') to journald's socket; hal printed $got lines, journalctl $jc. Load before: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| command | mean | min | max |"
echo "|---|---|---|---|"
for i in "${!names[@]}"; do
    jq -r --argjson i "$i" --arg n "${names[$i]}" \
        '.results[$i] | "| `\($n)` | \(.mean*1000|floor) ms | \(.min*1000|floor) ms | \(.max*1000|floor) ms |"' "$tmp/h.json"
done
"$HAL_BIN" module stop "$p" >/dev/null
