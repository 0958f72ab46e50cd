#!/usr/bin/env bash
# false-failure rate: 0 (deterministic: the verdicts compared are of a result
# with no guest booted, fail by contract, and its rerun; no statistics).
# `schedlab rerun RESULT.json`:
#  - bad input exits 2 with a clear message: not JSON, not a result, a result
#    without a job, a job that is not in the expanded form;
#  - --dry-run prints result.job and warns about each difference from this
#    host: on tests/data/result-example.json (another host's compiler, source
#    version, patches and cache key) and on a real result whose recorded QEMU
#    version and compiler were edited; a real result of this host has none;
#  - a real rerun: a CI-shorthand job whose candidate patch does not apply
#    (a result with verdict fail and no guest booted, contract A) is run with
#    `schedlab run`, then again with `schedlab rerun`: the same job, the same
#    verdict and exit status 1, JUnit and report written.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
e2e_need python3
e2e_need_schedlab
[ -f /usr/src/linux-source-6.1.tar.xz ] || e2e_skip "needs linux-source-6.1 (scripts/setup.sh installs it)"
e2e_tmpdir
cd "$E2E_TMP" || exit 1

"$SCHEDLAB" rerun --help | grep -q '^Usage: schedlab rerun' || e2e_fail "rerun --help"

expect_error() { # expect_error PATTERN FILE: rerun FILE must exit 2 naming PATTERN
	local rc
	"$SCHEDLAB" rerun --dry-run "$2" >/dev/null 2>err.txt
	rc=$?
	echo "rerun $2 -> $rc: $(cat err.txt)"
	[ "$rc" = 2 ] || e2e_fail "rerun of $2 exited $rc, not 2"
	grep -q -- "$1" err.txt || e2e_fail "rerun of $2 does not say '$1'"
}
printf '{"schema": "schedlab.result/v1", ' >cut.json
expect_error "not valid JSON" cut.json
printf '[1, 2]\n' >array.json
expect_error "is not a schedlab result" array.json
printf '{"name": "a job, not a result"}\n' >job.json
expect_error "is not a schedlab result" job.json
printf '{"schema": "schedlab.result/v1", "verdict": "pass"}\n' >nojob.json
expect_error "has no job to run again" nojob.json
python3 - "$E2E_ROOT/tests/data/result-example.json" >badjob.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
del r["job"]["kernels"]
print(json.dumps(r))
PY
expect_error "cannot be run" badjob.json
grep -q 'kernels' err.txt || e2e_fail "the job error does not name the kernels"
expect_error "No such file" does-not-exist.json

# Another host's result: its compiler, source version, patches and key differ.
"$SCHEDLAB" rerun --dry-run "$E2E_ROOT/tests/data/result-example.json" >example-job.json 2>warn.txt ||
	e2e_fail "rerun --dry-run of the example result failed"
cat warn.txt
python3 - "$E2E_ROOT/tests/data/result-example.json" example-job.json <<'PY' || e2e_fail "--dry-run did not print result.job"
import json, sys
assert json.load(open(sys.argv[1]))["job"] == json.load(open(sys.argv[2]))
PY
grep -q "warning: kernel 'sched': the compiler differs" warn.txt || e2e_fail "no compiler warning"
grep -q "warning: kernel 'sched' will not be the same build" warn.txt || e2e_fail "no cache key warning"
grep -q "warning: kernel 'sched': 4 patches here, 1 when" warn.txt || e2e_fail "no patch count warning"

# A real result of this host: a candidate that does not build, so no guest.
python3 - >cand.json <<'PY'
import json
bad = ("--- a/kernel/sched/core.c\n+++ b/kernel/sched/core.c\n"
       "@@ -1,3 +1,3 @@\n-no such line in core.c\n+nor this one\n context that is not there\n")
print(json.dumps({
    "name": "rerun-candidate-does-not-build",
    "base": {"source": "debian:linux-source-6.1", "patches": [{"series": "linux-6.1"}],
             "config": {"builtin": "linux-6.1"}},
    "patches": [{"name": "0001-does-not-apply.patch", "content": bad}],
    "workloads": [{"tool": "rt-migrate-test", "args": ["-p", "60", "-l", "10", "3"]}],
    "repeat": 1}))
PY
"$SCHEDLAB" run cand.json -o first.json --job-dir first -q >first.out 2>&1
rc=$?
[ "$rc" = 1 ] || { cat first.out; e2e_fail "schedlab run of a candidate that does not build exited $rc, not 1"; }

"$SCHEDLAB" rerun --dry-run first.json >/dev/null 2>warn.txt || e2e_fail "rerun --dry-run of a real result failed"
cat warn.txt
grep -q "^schedlab rerun: 0 differences" warn.txt || e2e_fail "a result of this host shows differences"
grep -q "kernel 'base' has the same build inputs here" warn.txt || e2e_fail "the base kernel was not compared"

python3 - first.json edited.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["environment"]["qemu_version"] = "1.0.0"
r["kernels"]["base"]["compiler"] = "gcc (Debian 8.3.0-6) 8.3.0"
json.dump(r, open(sys.argv[2], "w"))
PY
"$SCHEDLAB" rerun --dry-run edited.json >/dev/null 2>warn.txt || e2e_fail "rerun --dry-run of the edited result failed"
cat warn.txt
grep -q "warning: kernel 'base': the compiler differs: the result has 'gcc (Debian 8.3.0-6) 8.3.0'" warn.txt ||
	e2e_fail "no compiler warning for the edited result"
if e2e_virsh version >/dev/null 2>&1; then
	grep -q "warning: the QEMU version differs: the result has '1.0.0'" warn.txt ||
		e2e_fail "no QEMU warning for the edited result"
else
	grep -q "cannot read this host's QEMU and libvirt versions" warn.txt ||
		e2e_fail "no warning that the host's QEMU version is unknown"
fi

mkdir elsewhere && cd elsewhere || exit 1
"$SCHEDLAB" rerun ../first.json -o ../second.json --junit ../second.xml --report ../second.html \
	-q >../second.out 2>&1
rc=$?
cd .. || exit 1
tail -n 5 second.out
[ "$rc" = 1 ] || e2e_fail "the rerun exited $rc, not 1"
python3 - first.json second.json second.xml <<'PY' || e2e_fail "the rerun is not the same job"
import json, sys, xml.etree.ElementTree as ET
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["job"] == b["job"], "the job changed"
assert a["verdict"] == b["verdict"] == "fail", (a["verdict"], b["verdict"])
assert b["kernels"]["patched"]["build"]["status"] == "patch_does_not_apply", b["kernels"]["patched"]
assert int(ET.parse(sys.argv[3]).getroot().get("failures")) >= 1
print("rerun: same job, verdict", b["verdict"])
PY
grep -qi '<html' second.html || e2e_fail "the rerun wrote no report"
echo "17-rerun: ok"
