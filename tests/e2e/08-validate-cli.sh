#!/usr/bin/env bash
# tier: host
# schedlab validate as a user meets it: exit codes (0 valid, 1 invalid,
# 2 usage), the error's sentence and JSON path, --help, and hostile files
# (not JSON, trailing data, NUL bytes, invalid UTF-8, deep nesting, 64 MiB+).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/e2e/lib.sh
e2e_need_schedlab
e2e_tmpdir
T=$E2E_TMP
cp "$SCHEDLAB" "$T/schedlab" # immune to a concurrent relink
SCHEDLAB=$T/schedlab
export SCHEDLAB_DATA_DIR=$E2E_ROOT

expect() { # expect RC FILE-ARGS... ; prints output
	local want=$1
	shift
	set +e
	out=$("$SCHEDLAB" validate "$@" 2>&1)
	rc=$?
	set -e
	echo "validate $*: rc=$rc: $out"
	[ "$rc" -eq "$want" ] || e2e_fail "validate $* exited $rc, expected $want"
}

expect 0 --help
echo "$out" | grep -q 'Usage: schedlab validate' || e2e_fail "--help prints no usage"
expect 2
expect 2 --job
expect 2 --bogus examples/seed-reproduction.json
expect 0 --job examples/seed-reproduction.json
[ "$out" = valid ] || e2e_fail "expected 'valid', got '$out'"
expect 0 --result tests/data/result-example.json
# A job is not a result.
expect 1 --result examples/seed-reproduction.json
echo "$out" | grep -q "path: \$.schema" || e2e_fail "no path for the missing schema field"

sed 's/"vcpus": 2/"vcpus": 65/' examples/seed-reproduction.json >"$T/vcpus.json"
expect 1 --job "$T/vcpus.json"
echo "$out" | grep -q 'invalid: $.guest.vcpus must be at most 64 (it is 65). path: $.guest.vcpus' ||
	e2e_fail "unexpected message for vcpus 65"

# Schema-valid but inconsistent: a variant names a kernel the job lacks
# (job_expand's check), unless --schema-only.
sed 's/"kernel": "sched"/"kernel": "nosuch"/' examples/seed-reproduction.json >"$T/xref.json"
expect 1 --job "$T/xref.json"
expect 0 --job --schema-only "$T/xref.json"

# Suites (docs/workloads.md): the CI shorthand with a suite and no workloads
# is a job; an unknown suite, or neither suite nor workloads, is not.
expect 0 --job examples/ci-shorthand.json
sed 's/"suite": "rt"/"suite": "everything"/' examples/ci-shorthand.json >"$T/suite.json"
expect 1 --job "$T/suite.json"
echo "$out" | grep -q 'path: $.suite' || e2e_fail "no path for an unknown suite"
sed 's/"suite": "rt"/"repeat": 2/' examples/ci-shorthand.json >"$T/nowl.json"
expect 1 --job "$T/nowl.json"
echo "$out" | grep -q 'path: $.workloads' || e2e_fail "no path for a job without workloads or suite"

printf 'not json' >"$T/garbage.json"
expect 1 --job "$T/garbage.json"
echo "$out" | grep -q 'is not valid JSON' || e2e_fail "garbage not named as invalid JSON"
printf '{"name": "x"} {"name": "y"}' >"$T/two.json"
expect 1 --job "$T/two.json"
printf '{"name": "x\0y"}' >"$T/nul.json"
expect 1 --job "$T/nul.json"
printf '{"name": "\xff\xfe"}' >"$T/utf8.json"
expect 1 --job "$T/utf8.json"
/usr/bin/python3 -c 'print("[" * 100000 + "]" * 100000)' >"$T/deep.json"
expect 1 --job "$T/deep.json"
truncate -s 65M "$T/huge.json"
expect 1 --job "$T/huge.json"
echo "$out" | grep -qi 'too large\|at most\|bytes' || e2e_fail "huge file not named as too large"
expect 2 --job "$T/does-not-exist.json"
# The project's own schema is checked once, when it is loaded (then jobs are
# validated without checking it again): a broken one is an error that says so.
mkdir -p "$T/data/results-schema"
echo '{"type": "object", "properties": {"name": {"type": "string", "pattern": "(?i)x"}}}' \
	>"$T/data/results-schema/job.schema.json"
cp "$E2E_ROOT/examples/ci-shorthand.json" "$T/ok-job.json"
set +e
out=$(SCHEDLAB_DATA_DIR="$T/data" "$SCHEDLAB" validate --job "$T/ok-job.json" 2>&1)
rc=$?
set -e
echo "broken job schema: rc=$rc: $out"
[ "$rc" -eq 2 ] || e2e_fail "a broken job schema gave exit $rc, not 2"
echo "$out" | grep -q 'job schema .* is broken' || e2e_fail "the broken schema is not named"
echo "ok: validate exit codes, messages and hostile files"
