#!/usr/bin/env bash
# false-failure rate: 0 from the statistics (repeat 1, no comparison decides:
# the fail verdict is the hang at the first RT push, which happens in every
# boot; the 90 s bound is the silence rule's 30 s plus boot, a timing margin).
# Planted regression (docs/planted-regressions.md): tests/planted/deadlock.patch
# takes the target runqueue's lock a second time in push_rt_task(); the guest
# boots and hangs at the first RT push, i.e. as soon as rt-migrate-test runs.
# Submitted as a user would, from outside the repository: `schedlab test
# --suite rt --repeat 1`. It must fail (exit 1) with a run of the patched
# kernel 'hung' and named in the reasons. The silence rule (docs/kernel-bugs.md)
# ends that run about 30 s after the kernel's last word, with the NMI's
# backtraces: the run takes under 90 s (it took the whole 185 s deadline
# before), and its hang signature names push_rt_task, a kernel bug the
# baseline never shows (a reason and a JUnit failure of its own). About
# 75 s on a quiet host with the kernels cached; a noisy baseline run adds
# a round.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
planted_test deadlock rt 1
# Not planted_expect_fail: on a loaded host the deadlocked guest's spinning
# vCPUs make its runs "noisy" and the noise rule leaves them out of the
# reasons (docs/planted-regressions.md, known limits); the hang's signature
# fails the job whatever the noise.
planted_summary
[ "$PLANTED_RC" -eq 1 ] || e2e_fail "schedlab test exited $PLANTED_RC, expected 1 (fail)"
python3 - "$PLANTED_DIR/result.json" "$PLANTED_DIR/junit.xml" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "fail", r["verdict"]
hung = [run for run in r["variants"]["patched"]["runs"] if run["status"] == "hung"]
assert hung, [run["status"] for run in r["variants"]["patched"]["runs"]]
for run in hung:
    assert run["duration_seconds"] < 90, f"{run['key']} took {run['duration_seconds']:.0f} s to be found hung"
    assert "no heartbeat and no console output" in run["reason"], run["reason"]
    hang = [e for e in run["kernel_events"] if e["kind"] == "hang"]
    assert hang, f"{run['key']}: no hang event in {run['kernel_events']}"
    assert "NMI backtrace for cpu" in hang[0]["excerpt"], hang[0]["excerpt"]
    sig = hang[0]["signature"]
    # on failure the backtraces, to improve the rule (docs/kernel-bugs.md)
    assert sig["kind"] == "hang" and sig["title"] == "hang in push_rt_task", (sig, hang[0]["excerpt"])
    assert sig["id"] in run["signatures"]
sigs = [s for s in r["signatures"] if s["title"] == "hang in push_rt_task"]
assert len(sigs) == 1 and sigs[0]["runs"] == len(hung) and sigs[0]["new_in"] == ["patched"], r["signatures"]
assert any("kernel bug 'hang in push_rt_task'" in x for x in r["verdict_reasons"]), r["verdict_reasons"]
assert '<failure type="kernel_bug" message="hang in push_rt_task [hang]' in open(sys.argv[2]).read()
print("ok:", len(hung), "hung run(s) found in", [round(x["duration_seconds"]) for x in hung], "s;",
      "signature", sigs[0]["title"], sigs[0]["id"])
PY
