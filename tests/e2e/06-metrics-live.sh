#!/usr/bin/env bash
# tier: host
# The metric parsers on output the real rt-tests produce right now on this
# host (the golden files in tests/data/rt-tests are from the same tools, but
# this catches a changed rt-tests package): rt-migrate-test and cyclictest
# run as root with SCHED_FIFO, then test_metrics parses them and checks the
# metrics against the tools' own summaries.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root for SCHED_FIFO"; exit 77; }
command -v rt-migrate-test >/dev/null && command -v cyclictest >/dev/null ||
	{ echo "skip: rt-tests is not installed"; exit 77; }
[ -x "$BUILD/tests/test_metrics" ] || make --no-print-directory "$BUILD/tests/test_metrics" ||
	{ echo "skip: $BUILD/tests/test_metrics does not build"; exit 77; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
rt-migrate-test -p 60 -l 10 3 --json="$dir/rtm.json" >"$dir/rtm.stdout" 2>/dev/null
cyclictest -t2 -p90 -i1000 -l1000 -q -h 2000 --json="$dir/ct.json" >"$dir/ct.stdout" 2>/dev/null
head -c 300 "$dir/rtm.stdout"; echo
grep '^# ' "$dir/ct.stdout"

out=$(cd tests && SCHEDLAB_RT_LIVE_DIR="$dir" ASAN_OPTIONS=detect_leaks=1 \
	"../$BUILD/tests/test_metrics" 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep -E 'test_live_output' 
echo "$out" | grep -q '\[       OK \] test_live_output' || { echo "$out"; echo "test_live_output did not pass"; exit 1; }
echo "ok: the parsers accept fresh rt-migrate-test and cyclictest output"
