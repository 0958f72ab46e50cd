#!/usr/bin/env bash
# Is an end-to-end test stable? Runs one tests/e2e script N times in a row,
# each from fresh state (its own temp dir and services, as tests/run.sh runs
# it; the content-addressed kernel cache is shared, as on any second run),
# and prints one line per run: pass/FAIL/skip, seconds, the host's load
# average before and after, and whether the test said it asserted less
# because the host was busy (07-compare-aa does: "the host was busy"). Stops
# at the first failure unless --keep-going. The last line is
# "N of N passed in a row (M asserted in full)".
#
# Each run has the time limit tests/run.sh gives the script.
#
# Usage: bench/e2e-repeat.sh [-n N] [--keep-going] [--logs DIR] NAME
#   NAME        a test under tests/e2e/, with or without .sh (07-compare-aa)
#   -n N        runs (default 20)
#   --keep-going  run all N even after a failure
#   --logs DIR  keep each run's log as DIR/NAME.I.log (default: a temp dir, removed)
# Needs what the test needs (make, and libvirtd for guest tests: this script
# starts virtlogd and libvirtd when they are not running and stops what it started).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=20 keep=0 logs="" name=""
while [ $# -gt 0 ]; do
	case "$1" in
	-n) n=$2; shift 2 ;;
	--keep-going) keep=1; shift ;;
	--logs) logs=$2; shift 2 ;;
	-h|--help) sed -n '2,17p' "$0"; exit 0 ;;
	-*) echo "e2e-repeat.sh: unknown option '$1'" >&2; exit 2 ;;
	*) name=${1%.sh}; shift ;;
	esac
done
[[ "$n" =~ ^[0-9]+$ && "$n" -ge 1 ]] || { echo "e2e-repeat.sh: -n needs a positive integer" >&2; exit 2; }
if [ -z "$name" ] || [ ! -f "$root/tests/e2e/$name.sh" ]; then
	echo "e2e-repeat.sh: no test tests/e2e/${name:-?}.sh" >&2; exit 2
fi
keep_logs=1
[ -n "$logs" ] || { logs=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-e2e-repeat.XXXXXX"); keep_logs=0; }
mkdir -p "$logs"
source "$root/tests/lib/libvirt-daemons.sh"
source "$root/tests/lib/e2e-limit.sh"
limit=$(e2e_limit "$root/tests/e2e/$name.sh")
cleanup() {
	libvirt_daemons_stop
	[ "$keep_logs" = 1 ] || rm -rf "$logs"
}
trap cleanup EXIT
libvirt_daemons_start

passed=0 full=0 i=0 failed=0
while [ "$i" -lt "$n" ]; do
	i=$((i + 1))
	log=$logs/$name.$i.log
	before=$(cut -d' ' -f1 /proc/loadavg)
	start=$(date +%s)
	rc=0
	# The runner's limit (tests/lib/e2e-limit.sh): its process group goes.
	timeout -k 15 "$limit" bash "$root/tests/e2e/$name.sh" >"$log" 2>&1 </dev/null || rc=$?
	secs=$(( $(date +%s) - start ))
	{ [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && [ "$secs" -ge "$limit" ] &&
		echo "timed out after $limit s" >>"$log"
	after=$(cut -d' ' -f1 /proc/loadavg)
	busy=""
	grep -q "the host was busy" "$log" && busy="  (host busy: asserted less)"
	case $rc in
	0) passed=$((passed + 1)); [ -n "$busy" ] || full=$((full + 1)); echo "run $i: pass ${secs}s  load $before -> $after$busy" ;;
	77) echo "run $i: skip ${secs}s: $(tail -n 1 "$log")" ;;
	*) failed=$((failed + 1))
	   echo "run $i: FAIL (exit $rc) ${secs}s  load $before -> $after; last lines:"
	   tail -n 15 "$log" | sed 's/^/    /'
	   [ "$keep" = 1 ] || break ;;
	esac
done
if [ "$failed" = 0 ]; then
	echo "$passed of $i passed in a row ($full asserted in full)"
else
	echo "$passed of $i passed, $failed failed ($full asserted in full)"
	exit 1
fi
