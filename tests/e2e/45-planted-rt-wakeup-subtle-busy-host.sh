#!/usr/bin/env bash
# A busy host is never a silent verdict. The 40 us wakeup plant (as
# 45-planted-rt-wakeup-subtle runs it on a quiet host) submitted as a user
# would, `schedlab test --suite latency --repeat 2:2 PATCH`, while four busy
# loops run on the host beside the guests. Under TCG the loops delay the
# guest's timers and wake-ups far more than its vCPUs' wait shows (a busy
# host once grew these latencies sevenfold at 5 to 6 % vCPU wait), so no run
# may count as clean: each must be marked noisy with the share other
# processes took, the rounds are rerun (at most the repeats' worth), and the
# job must end inconclusive (exit 3), no gated metric decided, and a reason
# that names the host and the others' share;
# never pass, and never a regression decided from starved runs.
# false-failure rate: not shown <= 1/1000 (why: it fails only if a run
#   beside four busy loops counts as clean, others' share 40 % or less;
#   none of 150 such runs in the 2026-12-07 pools took under 66 %,
#   docs/statistics.md "Host interference". Deterministic given the marks.)
# Boots 8 guests (cyclictest): 82 s here with the kernels cached; on a cold
# cache the job builds them first, before the loops start.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"

# The loops start when the first guest does: a cold kernel build beside
# them would take three times as long and test nothing more. The watcher
# waits at most an hour for QEMU; the loops are its children.
watcher=
stop_hogs() {
	[ -n "$watcher" ] || return 0
	pkill -P "$watcher" 2>/dev/null || true
	kill "$watcher" 2>/dev/null || true
	wait "$watcher" 2>/dev/null || true
	watcher=
}
trap 'stop_hogs; _e2e_cleanup' EXIT
(
	for _ in $(seq 3600); do
		pgrep -f qemu-system >/dev/null && break
		sleep 1
	done
	for _ in 1 2 3 4; do
		sh -c 'while :; do :; done' &
	done
	wait
) &
watcher=$!
planted_test rt-wakeup-subtle latency 2:2
stop_hogs
planted_summary
[ "$PLANTED_RC" = 3 ] || e2e_fail "schedlab test exited $PLANTED_RC beside four busy loops, not 3 (inconclusive)"
python3 - "$PLANTED_DIR/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "inconclusive", r["verdict"]
runs = [run for v in r["variants"].values() for run in v["runs"]]
for run in runs:
    hi = run.get("host_interference") or {}
    print(f'{run["key"]:12} {run["status"]:6} noisy {run["noisy"]}  vCPU wait {hi.get("vcpu_wait_pct")} %  others {hi.get("others_busy_pct")} %')
    assert run["noisy"] is True, ("a run beside four busy loops counted as clean", run["key"], hi)
    assert hi.get("others_busy_pct", 0) > 40, (run["key"], hi)
# With every run left out there is nothing to compare; a comparison that is
# there must not be decided.
for c in r["comparisons"]:
    if c.get("gated"):
        assert c["verdict"] == "inconclusive", ("decided from starved runs", c["metric"], c["verdict"])
reasons = " ".join(r["verdict_reasons"])
for gate in ("latency_us.avg", "latency_us.p99"):
    assert f"Gated metric '{gate}'" in reasons, (gate, reasons)
assert "The host got in the way" in reasons and "other processes took up to" in reasons, reasons
assert r["repeats"]["noisy_reruns"] > 0, r["repeats"]
print("ok: every run noisy, every gated metric inconclusive, the reason names the host")
PY
