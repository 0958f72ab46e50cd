#!/usr/bin/env bash
# false-failure rate: 0 from the statistics (repeat 2: min_p 1/3 > alpha 0.05,
# so no comparison can be improved/regressed (docs/statistics.md section 2);
# it accepts exit 0 or 3, and a fail needs a patched run that did not finish).
# The first failure a new user met: a job file in its own
# directory whose patched kernel lists the built-in series plus a local
# patch ({"path": "comment-only.patch"}, relative to the job file), run with
# `schedlab run DIR/job.json` from ANOTHER working directory with the default
# job directory. It used to fail with "Can't open patch file
# build/jobs/<name>-<time>/kernels/<k>/0005-my.patch": the default job dir was
# relative and `patch` runs inside the source tree. Now it must build, boot
# and give a verdict (exit 0 or 3, never 2), and the result must name the
# patch. The patch is a copy of tests/planted/comment-only.patch, so its
# kernel is the one the planted suite builds (the cache key covers contents,
# not names). Boots guests: a short rt-migrate-test, two repeats.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
e2e_tmpdir
T=$E2E_TMP
cp "$SCHEDLAB" "$T/schedlab" # immune to a concurrent relink
SCHEDLAB=$T/schedlab
export SCHEDLAB_DATA_DIR=$E2E_ROOT
mkdir -p "$T/jobs" "$T/elsewhere"
cp "$E2E_ROOT/tests/planted/comment-only.patch" "$T/jobs/comment-only.patch"
cat >"$T/jobs/job.json" <<'JSON'
{
  "name": "user-patch-run",
  "kernels": {
    "base": {"source": "debian:linux-source-6.1", "patches": [{"series": "linux-6.1"}],
             "config": {"builtin": "linux-6.1"}},
    "patched": {"source": "debian:linux-source-6.1",
                "patches": [{"series": "linux-6.1"}, {"path": "comment-only.patch"}],
                "config": {"builtin": "linux-6.1"}}
  },
  "variants": {"baseline": {"kernel": "base"}, "patched": {"kernel": "patched"}},
  "baseline": "baseline",
  "workloads": [{"name": "rt-migrate-test", "tool": "rt-migrate-test", "maxerr_us": 18000,
                 "args": ["-p", "60", "-l", "40", "3"], "timeout_s": 90}],
  "repeat": 2
}
JSON
start=$(date +%s)
set +e
(cd "$T/elsewhere" && "$SCHEDLAB" run ../jobs/job.json --junit junit.xml)
rc=$?
set -e
echo "schedlab run exited $rc after $(($(date +%s) - start)) s"
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || e2e_fail "schedlab run exited $rc (expected 0 or 3)"
# The default job dir is under the cwd of the run, not the job file's.
result=$(ls -d "$T"/elsewhere/build/jobs/user-patch-run-*/result.json 2>/dev/null | head -n 1)
[ -n "$result" ] || e2e_fail "no result under elsewhere/build/jobs/user-patch-run-*/"
[ -f "$T/elsewhere/junit.xml" ] || e2e_fail "--junit junit.xml was not written in the cwd"
[ ! -e "$T/jobs/build" ] || e2e_fail "the job dir went next to the job file"
"$SCHEDLAB" validate --result "$result"
python3 - "$result" "$T/jobs/comment-only.patch" <<'PY'
import hashlib, json, sys
r = json.load(open(sys.argv[1]))
want = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
pk = r["kernels"]["patched"]
names = [p["name"] for p in pk["patches"]]
print("patched kernel's patches:", names)
mine = [p for p in pk["patches"] if p["name"].endswith("comment-only.patch")]
assert mine, "the result does not name comment-only.patch"
assert mine[0]["sha256"] == want, "the patch's sha256 in the result is not the file's"
assert len(pk["patches"]) == len(r["kernels"]["base"]["patches"]) + 1
spec = [p for p in r["job"]["kernels"]["patched"]["patches"] if p.get("name") == "comment-only.patch"]
assert spec and spec[0]["content"] == open(sys.argv[2]).read(), "the job as run lacks the patch"
for v in ("baseline", "patched"):
    st = [run["status"] for run in r["variants"][v]["runs"]]
    print(v, st)
    assert st and all(s == "ok" for s in st), f"{v}: {st}"
print("verdict:", r["verdict"], r.get("verdict_reasons"))
PY
