#!/usr/bin/env bash
# Runs an example job in short form for the end-to-end tests: source it
# after lib.sh, then
#   e2e_run_example EXAMPLE NAME PYTHON
# copies examples/EXAMPLE into $E2E_TMP/job.json with name NAME, applies the
# python statements PYTHON to the dict `j` (shorter runs, fewer repeats),
# runs it with `schedlab run`, checks the result against the schema with
# schedlab's validator and python3-jsonschema, and leaves it at
# $E2E_TMP/result.json. E2E_RUN_RC holds run's exit status.
# shellcheck shell=bash

e2e_run_example() {
	local example=$1 name=$2 mutate=$3
	e2e_need_schedlab
	e2e_tmpdir
	python3 - "$E2E_ROOT/examples/$example" "$E2E_TMP/job.json" "$name" "$mutate" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["name"] = sys.argv[3]
exec(sys.argv[4])
json.dump(j, open(sys.argv[2], "w"), indent=1)
PY
	set +e
	"$SCHEDLAB" run "$E2E_TMP/job.json" -o "$E2E_TMP/result.json" --job-dir "$E2E_TMP/job" \
		--junit "$E2E_TMP/junit.xml" --report "$E2E_TMP/report.html"
	E2E_RUN_RC=$?
	set -e
	echo "schedlab run exited $E2E_RUN_RC"
	[ -f "$E2E_TMP/result.json" ] || e2e_fail "schedlab run wrote no result"
	"$SCHEDLAB" validate --result "$E2E_TMP/result.json"
	"$E2E_ROOT/tests/tools/check-schema.py" result "$E2E_TMP/result.json"
}

# e2e_run_refused JOB NAME: runs the job file JOB with `schedlab run`, which
# must refuse it before any guest boots: exit 2 and no run directory. Its
# output is left at $E2E_TMP/NAME.out (and printed) for the caller's greps.
e2e_run_refused() {
	local job=$1 name=$2 rc
	e2e_need_schedlab
	e2e_tmpdir
	set +e
	"$SCHEDLAB" run "$job" -o "$E2E_TMP/$name-result.json" --job-dir "$E2E_TMP/$name" \
		>"$E2E_TMP/$name.out" 2>&1
	rc=$?
	set -e
	cat "$E2E_TMP/$name.out"
	[ "$rc" -eq 2 ] || e2e_fail "job '$name' should have been refused (exit 2), got exit $rc"
	[ ! -d "$E2E_TMP/$name/runs" ] || [ -z "$(ls -A "$E2E_TMP/$name/runs")" ] ||
		e2e_fail "a guest ran although job '$name' was refused"
}
