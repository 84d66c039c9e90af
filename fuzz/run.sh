#!/usr/bin/env bash
# Long property-test runs of hal's parsers (config, names, state file, durations,
# timestamps, log frames). cargo-fuzz needs a nightly toolchain, which this
# project's machines do not have; proptest runs on stable and shrinks failures.
#
#   fuzz/run.sh [CASES]     # default 200000 cases per property
#
# A failure prints the minimal input; add it as a regression test in
# tests/integration/props.rs and record it in RELIABILITY.md. The last run's summary is
# written to fuzz/last-run.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cases=${1:-200000}
start=$(date +%s)
out=$(PROPTEST_CASES=$cases cargo test --release --test integration -- props:: 2>&1) || {
    printf '%s\n' "$out" | tail -40
    exit 1
}
took=$(( $(date +%s) - start ))
summary=$(printf '%s\n' "$out" | grep -E '^test result:' | tail -1)
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "cases per property: $cases"
    echo "wall time: ${took}s"
    echo "$summary"
} | tee fuzz/last-run.txt
