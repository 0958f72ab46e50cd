#!/usr/bin/env bash
# The suite driver: runs cmocka unit programs (TAP output) and end-to-end
# scripts, prints one line per test, then "N skipped" when any were, and ends with
# "N passed, N failed" alone on the last line (what CI reads).
# Usage: tests/run.sh [--unit|--host|--e2e|--all] [NAME-FILTER]
#   --host: the unit programs and the e2e scripts that boot no guest (those
#   with a "# tier: host" line in their first 20 lines; docs/testing.md).
#   e2e scripts: tests/e2e/NN-name.sh; exit 0 = pass, 77 = skip, else fail.
#   Each test's time goes to build/test-logs/times.tsv; the run ends with the
#   ten slowest and the total, before the summary line.
#   Their logs go to build/test-logs/NAME.log; a failing log's tail is printed.
#   Each e2e script runs under a time limit: E2E_TIMEOUT_S (default 1200),
#   or its own "# timeout: SECONDS" line in its first 20 lines. On expiry its
#   whole process group is killed and it fails "(timed out after N s)", so
#   no test (a wedged libvirtd, docs/guests.md) can hold CI to its limit.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:---all}
filter=${2:-}
case "$mode" in --unit|--host|--e2e|--all) ;; -h|--help) sed -n '2,14p' "$0"; exit 0 ;; *) echo "run.sh: unknown mode '$mode'" >&2; exit 2 ;; esac
BUILD=${BUILD:-build}
logs=$BUILD/test-logs
mkdir -p "$logs"
times=$logs/times.tsv
: >"$times"
run_start=$(date +%s)
passed=0 failed=0 skipped=0
failures=()

run_unit() {
	local bin name out src targets=()
	# Build the programs about to run, so that a filtered run after an edit
	# never runs a stale binary (make check-unit has built them already:
	# then this is a no-op).
	for src in tests/unit/test_*.c; do
		name=$(basename "$src" .c)
		[ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
		targets+=("$BUILD/tests/$name")
	done
	if [ "$BUILD" = build ] && [ ${#targets[@]} -gt 0 ] &&
		! make -s --no-print-directory "${targets[@]}" >"$logs/unit-build.log" 2>&1; then
		echo "FAIL unit build (build/test-logs/unit-build.log):"
		tail -n 20 "$logs/unit-build.log"
		failures+=("unit build")
		failed=$((failed + 1))
		return
	fi
	# The programs run side by side, one per CPU (UNIT_JOBS to change it):
	# each has its own temporary files, and their reports are read back in
	# name order, so the output is the same as one at a time.
	local jobs=${UNIT_JOBS:-$(nproc)} res started=()
	res=$(mktemp -d)
	for bin in "$BUILD"/tests/test_*; do
		[ -x "$bin" ] || continue
		name=$(basename "$bin")
		[ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
		started+=("$name")
		while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
		(
			ustart=$(date +%s)
			cd tests && CMOCKA_MESSAGE_OUTPUT=TAP ASAN_OPTIONS=detect_leaks=1 "../$bin" >"$res/$name.out" 2>&1
			echo "$? $(( $(date +%s) - ustart ))" >"$res/$name.rc"
		) &
	done
	wait
	for name in "${started[@]}"; do
		local rc=1 secs=0 ok nok
		# a program whose runner died leaves no exit code: a failure, not a skip
		[ -e "$res/$name.rc" ] && read -r rc secs <"$res/$name.rc"
		out=$(cat "$res/$name.out" 2>/dev/null)
		printf '%s\n' "$out" >"$logs/$name.log"
		printf '%s\tunit/%s\n' "$secs" "$name" >>"$times"
		ok=$(printf '%s\n' "$out" | grep -cE '^ok [0-9]+')
		nok=$(printf '%s\n' "$out" | grep -cE '^not ok [0-9]+')
		if [ "$rc" -ne 0 ] && [ "$nok" -eq 0 ]; then nok=1; fi
		passed=$((passed + ok)); failed=$((failed + nok))
		if [ "$nok" -gt 0 ]; then
			echo "FAIL unit/$name ($ok ok, $nok failed)"
			printf '%s\n' "$out" | grep -E '^not ok|ERROR|error|Assert|Sanitizer' | head -20 | sed 's/^/    /'
			failures+=("unit/$name")
		else
			echo "ok   unit/$name ($ok tests)"
		fi
	done
	rm -rf "$res"
}

. tests/lib/e2e-limit.sh

run_e2e() {
	local t name rc start limit
	for t in tests/e2e/[0-9]*.sh; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .sh)
		[ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
		[ "$mode" = --host ] && ! head -n 20 "$t" | grep -qx '# tier: host' && continue
		start=$(date +%s)
		limit=$(e2e_limit "$t")
		echo "...  e2e/$name (limit ${limit}s)" >&2
		# timeout runs the script in a process group of its own and, on
		# expiry, signals the whole group (TERM, then KILL 15 s later):
		# the script's EXIT traps get their chance, its children go too.
		timeout -k 15 "$limit" bash "$t" >"$logs/$name.log" 2>&1 </dev/null
		rc=$?
		local secs=$(( $(date +%s) - start ))
		printf '%s\te2e/%s\n' "$secs" "$name" >>"$times"
		if { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && [ "$secs" -ge "$limit" ]; then
			failed=$((failed + 1)); failures+=("e2e/$name")
			echo "FAIL e2e/$name (timed out after $limit s); last lines of $logs/$name.log:"
			tail -n 30 "$logs/$name.log" | sed 's/^/    /'
		elif [ $rc -eq 0 ]; then
			passed=$((passed + 1)); echo "ok   e2e/$name (${secs}s)"
		elif [ $rc -eq 77 ]; then
			skipped=$((skipped + 1)); echo "skip e2e/$name: $(tail -n 1 "$logs/$name.log")"
		else
			failed=$((failed + 1)); failures+=("e2e/$name")
			echo "FAIL e2e/$name (exit $rc, ${secs}s); last lines of $logs/$name.log:"
			tail -n 30 "$logs/$name.log" | sed 's/^/    /'
		fi
	done
}

[ "$mode" = --e2e ] || run_unit
[ "$mode" = --unit ] || run_e2e
if [ -s "$times" ]; then
	echo "slowest: $(sort -rn "$times" | head -n 10 | awk -F'\t' '{printf "%s%s %ss", (NR > 1 ? ", " : ""), $2, $1}')"
	echo "total: $(( $(date +%s) - run_start ))s for $(wc -l <"$times") test programs and scripts ($times)"
fi
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
[ "$skipped" -gt 0 ] && echo "$skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
