#!/usr/bin/env bash
# tier: host
# false-failure rate: 0 (deterministic: static checks; the verdict assertion
# below is a fixture for tests/tools/check-flake-rates.py, not a test of one).
# Static analysis stays clean: cppcheck over service/ and workloads/ with the
# flags of `make lint`, the size check and the flake-rate check (every e2e
# script that asserts a verdict states its false-failure rate). A new finding fails the check; a false positive is
# suppressed at the spot (// cppcheck-suppress ID) or in the Makefile, with
# the reason next to it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$E2E_ROOT"
e2e_need cppcheck
make --no-print-directory lint

# The flake-rate check (run by `make lint` above) can fail: a verdict
# assertion without a "# false-failure rate:" line is refused, with one it
# passes (docs/testing.md, "Statistical tests and their false-failure rates").
e2e_tmpdir
mkdir -p "$E2E_TMP/tests/e2e"
printf '#!/usr/bin/env bash\nassert r["verdict"] == "pass"\n' >"$E2E_TMP/tests/e2e/10-x.sh"
rc=0
tests/tools/check-flake-rates.py "$E2E_TMP" >"$E2E_TMP/out" || rc=$?
[ "$rc" -eq 1 ] && grep -q "tests/e2e/10-x.sh:2: compares a verdict" "$E2E_TMP/out" ||
	e2e_fail "check-flake-rates accepted a verdict assertion without a stated rate (exit $rc)"
printf '#!/usr/bin/env bash\n# false-failure rate: 0 (deterministic)\nassert r["verdict"] == "pass"\n' >"$E2E_TMP/tests/e2e/10-x.sh"
tests/tools/check-flake-rates.py "$E2E_TMP" >/dev/null || e2e_fail "check-flake-rates refused a script that states its rate"
