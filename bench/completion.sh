#!/usr/bin/env bash
# Time a module-name completion of hal against docker's own completion, in one run.
#
#   bench/completion.sh [RUNS]      # default 100 runs per command
#
# Builds hal in release mode (set HAL_BIN to time another binary), makes a
# services root of 30 stacks and a config with 2 host modules, then times
# what bash runs on `hal module start <TAB>` and `hal module start --pull <TAB>`,
# and the anchor `docker __complete compose -p ""` (compose project names).
# Uses hyperfine when installed (apt-get install hyperfine), else (or with
# BENCH_NO_HYPERFINE=1) a date loop.
# Prints a markdown table; the target is 5 ms or less for a module-name call.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-100}

if [[ -z ${HAL_BIN:-} ]]; then
    cargo build --release --quiet
    HAL_BIN=${CARGO_TARGET_DIR:-target}/release/hal
fi
HAL_BIN=$(realpath "$HAL_BIN")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq -w 1 30); do
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
if ! grep -qx stack30 <<<"$got" || ! grep -qx notifier <<<"$got"; then
    echo "bench: hal did not complete module names:" >&2
    echo "$got" >&2
    exit 1
fi
have_docker=true
docker "${docker_cmd[@]:1}" >/dev/null 2>&1 || { have_docker=false; echo "bench: docker __complete failed; no anchor row" >&2; }

names=("hal module start <TAB> (32 modules)" "hal module start --pull <TAB>")
cmds=("${modules_cmd[*]@Q}" "${values_cmd[*]@Q}")
if $have_docker; then
    names+=('docker __complete compose -p "" (anchor)')
    cmds+=("${docker_cmd[*]@Q}")
fi

if [[ -z ${BENCH_NO_HYPERFINE:-} ]] && command -v hyperfine >/dev/null 2>&1; then
    args=(--shell=none --runs "$runs" --warmup 10 --style none --export-markdown "$tmp/table.md")
    for i in "${!cmds[@]}"; do
        args+=(--command-name "${names[$i]}" "${cmds[$i]}")
    done
    # The env is hyperfine's own, inherited by every command; docker ignores it.
    env "${complete_env[@]}" hyperfine "${args[@]}" >/dev/null 2>"$tmp/hyperfine.err" ||
        { cat "$tmp/hyperfine.err" >&2; exit 1; }
    echo "hal completion vs docker's, $runs runs each (hyperfine; $(nproc) CPUs)"
    echo
    cat "$tmp/table.md"
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
