#!/usr/bin/env bash
# Time a module-name completion of hal against docker's own completion, in one run.
#
#   bench/completion.sh [RUNS]      # default 100 runs per command
#
# Builds hal in release mode (set HAL_BIN to time another binary), makes a
# services root of MODULES stacks (1000 by default; issue 13) and a config with
# 2 host modules, then times what bash runs on `hal module start <TAB>` and
# `hal module start --pull <TAB>`, `hal module list` of the same node, and the
# anchor `docker __complete compose -p ""` (compose project names).
# Uses hyperfine when installed (apt-get install hyperfine), else (or with
# BENCH_NO_HYPERFINE=1) a date loop.
# Prints a markdown table and the targets: 10 ms or less for a module-name call
# and for `hal module list` of MODULES modules (issue 13).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-100}
MODULES=${MODULES:-1000}

if [[ -z ${HAL_BIN:-} ]]; then
    cargo build --release --quiet
    HAL_BIN=${CARGO_TARGET_DIR:-target}/release/hal
fi
HAL_BIN=$(realpath "$HAL_BIN")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq -w 1 "$MODULES"); do
    mkdir -p "$tmp/services/stack$i"
    printf 'services:\n  app:\n    image: hal-fixture:latest\n' >"$tmp/services/stack$i/compose.yaml"
done
printf '[module.notifier]\nunit = "notifier.service"\n\n[module.mail]\nunit = "mail.service"\nscope = "system"\n' >"$tmp/hal.toml"
export HAL_SERVICES_DIR=$tmp/services HAL_CONFIG=$tmp/hal.toml

# The calls bash's completion function makes (see completions/hal.bash).
complete_env=(HAL_COMPLETE=bash _CLAP_COMPLETE_INDEX=3 _CLAP_IFS=$'\n')
modules_cmd=("$HAL_BIN" -- hal module start '')
values_cmd=("$HAL_BIN" -- hal module start --pull '')
docker_cmd=(docker __complete compose -p '')

# A benchmark of a broken completion is worthless: check the answers first.
got=$(env "${complete_env[@]}" "${modules_cmd[@]}")
if ! grep -qx "stack$(seq -w 1 "$MODULES" | tail -1)" <<<"$got" || ! grep -qx notifier <<<"$got"; then
    echo "bench: hal did not complete module names:" >&2
    echo "$got" >&2
    exit 1
fi
have_docker=true
docker "${docker_cmd[@]:1}" >/dev/null 2>&1 || { have_docker=false; echo "bench: docker __complete failed; no anchor row" >&2; }

names=("hal module start <TAB> ($((MODULES + 2)) modules)" "hal module start --pull <TAB>")
cmds=("${modules_cmd[*]@Q}" "${values_cmd[*]@Q}")
if $have_docker; then
    names+=('docker __complete compose -p "" (anchor)')
    cmds+=("${docker_cmd[*]@Q}")
fi

if [[ -z ${BENCH_NO_HYPERFINE:-} ]] && command -v hyperfine >/dev/null 2>&1; then
    args=(--shell=none --runs "$runs" --warmup 10 --style none --export-markdown "$tmp/table.md" --export-json "$tmp/c.json")
    for i in "${!cmds[@]}"; do
        args+=(--command-name "${names[$i]}" "${cmds[$i]}")
    done
    # The env is hyperfine's own, inherited by every command; docker ignores it.
    env "${complete_env[@]}" hyperfine "${args[@]}" >/dev/null 2>"$tmp/hyperfine.err" ||
        { cat "$tmp/hyperfine.err" >&2; exit 1; }
    # `hal module list` runs without the completion variables. Beside it, its floor: a
    # minimal program doing the same file work (bench/list_floor.rs: the scan, and per
    # stack the reads the name check must make), when rustc is there to build it.
    floor=()
    if rustc -O "$(dirname "${BASH_SOURCE[0]}")/list_floor.rs" -o "$tmp/list_floor" 2>/dev/null; then
        floor=(--command-name "floor: the same file work in a minimal program (bench/list_floor.rs)" "$tmp/list_floor $tmp/services")
    fi
    hyperfine --shell=none --runs "$runs" --warmup 10 --style none --export-markdown "$tmp/list.md" \
        --export-json "$tmp/l.json" --command-name "hal module list ($((MODULES + 2)) modules)" \
        "$HAL_BIN module list" "${floor[@]}" >/dev/null 2>"$tmp/hyperfine.err" || { cat "$tmp/hyperfine.err" >&2; exit 1; }
    echo "## completion and list: $((MODULES + 2)) modules"
    echo
    echo "hal completion vs docker's, $runs runs each (hyperfine; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg))"
    echo
    cat "$tmp/table.md"
    tail -n +3 "$tmp/list.md"
    med() { jq -r --arg n "$2" '.results[] | select(.command | startswith($n)) | .median * 1000' "$1"; }
    c_med=$(med "$tmp/c.json" "hal module start <TAB>")
    l_med=$(med "$tmp/l.json" "hal module list")
    d_med=$(med "$tmp/c.json" "docker __complete")
    # CPU per call (user+sys of CPU_RUNS calls in a loop, 20 by default): what the call costs
    # whatever else the machine runs; on an idle machine the wall time is about this.
    cpu50() { /usr/bin/time -f '%U %S' bash -c "for i in \$(seq ${CPU_RUNS:-20}); do $1 >/dev/null 2>&1; done" 2>&1 | tail -1 | awk -v n="${CPU_RUNS:-20}" '{ printf "%.1f", ($1 + $2) * 1000 / n }'; }
    c_cpu=$(cpu50 "env ${complete_env[*]@Q} ${modules_cmd[*]@Q}")
    l_cpu=$(cpu50 "${HAL_BIN@Q} module list")
    d_cpu=$(cpu50 "${docker_cmd[*]@Q}")
    ok10() { awk -v a="$1" 'BEGIN { print (a <= 10) ? "✓" : "✗" }'; }
    echo
    echo "| target | measured | |"
    echo "|---|---|---|"
    printf '| module-name completion, %s modules, ≤ 10 ms | median %.1f ms, CPU %s ms per call (anchor \`docker __complete\`: %.1f ms, CPU %s ms) | %s |\n' "$((MODULES + 2))" "$c_med" "$c_cpu" "${d_med:-0}" "$d_cpu" "$(ok10 "$c_med")"
    printf '| `hal module list`, %s modules, ≤ 10 ms | median %.1f ms, CPU %s ms per call | %s |\n' "$((MODULES + 2))" "$l_med" "$l_cpu" "$(ok10 "$l_med")"
    echo
else
    echo "hal completion vs docker's, $runs runs each (date loop; $(nproc) CPUs)"
    echo
    echo "| Command | Mean [ms] | Median [ms] | Min [ms] | Max [ms] |"
    echo "|:---|---:|---:|---:|---:|"
    for i in "${!cmds[@]}"; do
        for ((r = 0; r < runs; r++)); do
            t0=$(date +%s%N)
            eval "env \"\${complete_env[@]}\" ${cmds[$i]}" >/dev/null 2>&1
            t1=$(date +%s%N)
            echo $(((t1 - t0) / 1000))
        done | sort -n | awk -v name="${names[$i]}" '
            { v[NR] = $1; s += $1 }
            END { printf "| `%s` | %.2f | %.2f | %.2f | %.2f |\n", name, s / NR / 1000, v[int((NR + 1) / 2)] / 1000, v[1] / 1000, v[NR] / 1000 }'
    done
    echo
    echo "(each call includes a fork and an env exec: an upper bound)"
fi
