#!/usr/bin/env bash
# The schedlab kernel boots under libvirt with 2 vCPUs, the agent runs a short
# rt-migrate-test, and its JSON comes back through the second serial port.
# The accelerator is "auto": the first run on a host probes KVM and caches it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
k=$E2E_KERNEL
e2e_tmpdir
cd "$E2E_TMP"
id="e2e-boot-$$"
cat >plan.json <<JSON
{"run_id": "$id", "features": [],
 "workloads": [{"name": "rt-migrate-test",
   "argv": ["/usr/bin/rt-migrate-test", "--json=/tmp/w0.json", "-p", "60", "-l", "10", "3"],
   "json_out": "/tmp/w0.json", "timeout_s": 90, "uid": 0}]}
JSON
start=$(date +%s)
rc=0
"$SCHEDLAB" guest run --kernel "$k" --plan plan.json --vcpus 2 --memory 512 --deadline 180 \
	--console-log console.log -o outcome.json >stdout.json || rc=$?
echo "guest run: exit $rc in $(( $(date +%s) - start )) s"
[ -s outcome.json ] || e2e_fail "no outcome was written (exit $rc)"
python3 - outcome.json <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
print("status", o["status"], "accelerator", o["accelerator"], "boot", o["boot_seconds"],
      "total", o["total_seconds"])
assert o["status"] == "ok", (o["status"], o["reason"], o["console_excerpt"][-2000:])
assert o["accelerator"] in ("tcg", "kvm")
kinds = [f["kind"] for f in o["frames"]]
assert kinds == ["hello", "workload", "summary"], kinds
hello, wl, summary = (f["payload"] for f in o["frames"])
assert hello["agent"] == "schedlab-agent", hello
assert summary["nr_cpus"] == 2, summary
assert wl["exit_code"] == 0 and not wl["timed_out"], wl
rtm = json.loads(wl["json_file"])          # rt-migrate-test's own --json output
assert "rt-migrate-test" in rtm["cmdline:"], rtm.get("cmdline:")
assert rtm["return_code"] == 0
assert o["boot_seconds"] > 0 and o["total_seconds"] >= o["boot_seconds"]
assert o["kernel_events"] == [], o["kernel_events"]
PY
[ "$rc" -eq 0 ] || e2e_fail "exit $rc for an ok outcome"
grep -q "Run /init as init process" console.log || e2e_fail "the console log misses the boot"
cache=${SCHEDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab}
[ -s "$cache/accel.json" ] || e2e_fail "the accelerator probe was not cached in $cache/accel.json"
# After a power-off libvirt finishes tearing QEMU down on its own (1-2 s).
for _ in $(seq 1 50); do
	e2e_virsh list --name | grep -qx "schedlab-$id" || break
	sleep 0.2
done
! e2e_virsh list --name | grep -qx "schedlab-$id" || e2e_fail "domain schedlab-$id was left running"
echo "ok"
