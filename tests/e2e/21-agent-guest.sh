#!/usr/bin/env bash
# The guest agent as PID 1 in a real guest: the schedlab kernel (e2e_kernel)
# in QEMU (TCG, 2 vCPUs) with an initramfs of build/agent as /init, a plan and
# the static workloads, no /dev/console node (the agent must mount devtmpfs
# itself). Checks, from the frames on the second serial port:
#   - real sched features applied and read back, an unknown one refused (EINVAL),
#     a tunable written and read back, one that 6.1 lacks reported;
#   - per-uid cgroup v2 groups with weights from uid_shares, and `share`
#     measuring their 2:1 split on one CPU;
#   - a workload run as uid 1000, one killed at its timeout, garbage written
#     on the frame port not hiding the frames after it;
#   - `slice` predicting its slice from the real tunables;
#   - Debian's dynamic cyclictest and rt-migrate-test running under the agent,
#     their --json files returned;
#   - a heartbeat frame every second, none after the summary;
#   - the guest powering itself off.
# QEMU is driven directly: libvirt is the guest module's business (and tests).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
e2e_need qemu-system-x86_64 cpio gzip timeout python3 ldd cyclictest rt-migrate-test
e2e_tmpdir
cd "$E2E_ROOT"
make -s build/agent build/workloads/share build/workloads/slice build/workloads/crashme
bz=$(e2e_kernel) || e2e_fail "no kernel"
[ -s "$bz" ] || e2e_fail "e2e_kernel printed '$bz'"

root=$E2E_TMP/root
mkdir -p "$root/schedlab/bin"
cp build/agent "$root/init"
cp build/workloads/share build/workloads/slice build/workloads/crashme "$root/schedlab/bin/"
# Debian's rt-tests are dynamic: copy them with their libraries (the product's
# initramfs module does this with its own ELF reader; ldd is enough here)
for tool in cyclictest rt-migrate-test; do
	bin=$(command -v "$tool")
	mkdir -p "$root$(dirname "$bin")"
	cp "$bin" "$root$bin"
	for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done
cat >"$root/schedlab/plan.json" <<'EOF'
{"run_id": "r-e2e-guest",
 "features": ["NO_HRTICK", "HRTICK", "NO_RT_PUSH", "SCHEDLAB_NOT_A_FEATURE"],
 "tunables": {"latency_ns": 12000000, "base_slice_ns": 3000000},
 "uid_shares": {"1000": 2048, "1001": 1024},
 "workloads": [
  {"name": "share", "argv": ["/schedlab/bin/share", "--uids", "1000:1,1001:1", "--seconds", "4", "--cpus", "0"], "timeout_s": 60},
  {"name": "exit-as-1000", "argv": ["/schedlab/bin/crashme", "exit", "3"], "uid": 1000, "timeout_s": 20},
  {"name": "hang", "argv": ["/schedlab/bin/crashme", "hang"], "timeout_s": 2},
  {"name": "garbage", "argv": ["/schedlab/bin/crashme", "garbage", "/dev/ttyS1"], "timeout_s": 20},
  {"name": "slice", "argv": ["/schedlab/bin/slice", "--threads", "2", "--seconds", "2", "--cpu", "1", "--gap-us", "200"], "timeout_s": 60},
  {"name": "cyclictest", "argv": ["CYCLICTEST", "-t1", "-p", "90", "-i", "1000", "-l", "500", "-q", "--json=/tmp/c.json"], "json_out": "/tmp/c.json", "timeout_s": 60},
  {"name": "rt-migrate-test", "argv": ["RTMIGRATE", "--json=/tmp/r.json", "-p", "60", "-l", "5", "3"], "json_out": "/tmp/r.json", "timeout_s": 60}
 ]}
EOF
sed -i "s|CYCLICTEST|$(command -v cyclictest)|; s|RTMIGRATE|$(command -v rt-migrate-test)|" "$root/schedlab/plan.json"
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$E2E_TMP/initrd.gz"

start=$(date +%s)
rc=0
timeout 180 qemu-system-x86_64 -accel tcg,thread=multi -smp 2 -m 256 -display none -monitor none \
	-no-reboot -kernel "$bz" -initrd "$E2E_TMP/initrd.gz" \
	-append "console=ttyS0 panic=-1 rdinit=/init" \
	-serial "file:$E2E_TMP/console.txt" -serial "file:$E2E_TMP/frames.bin" </dev/null || rc=$?
secs=$(( $(date +%s) - start ))
tr -d '\r' <"$E2E_TMP/console.txt" | grep -E 'schedlab-agent|Kernel panic|BUG:|WARNING:' || true
[ "$rc" -eq 0 ] || { tail -n 40 "$E2E_TMP/console.txt"; e2e_fail "qemu exit $rc after ${secs}s (124 = did not power off)"; }

# the garbage workload makes the stream carry frame errors: expected here
build/agent --decode "$E2E_TMP/frames.bin" >"$E2E_TMP/decoded" 2>"$E2E_TMP/decode.err" || true
cat "$E2E_TMP/decode.err"
python3 - "$E2E_TMP/decoded" <<'EOF'
import json, sys
frames = []
for line in open(sys.argv[1]):
    kind, payload = line.rstrip("\n").split(" ", 1)
    frames.append((kind, json.loads(payload)))

def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)

# Heartbeats (docs/contracts.md 2) come every second between the others,
# numbered upwards (the garbage workload may spoil one), none after the summary.
beats = [p["n"] for k, p in frames if k == "heartbeat"]
check(len(beats) >= 3 and beats == sorted(set(beats)), "heartbeats %r" % beats)
check(frames[-1][0] == "summary", "a frame after the summary: %r" % frames[-1][0])
frames = [(k, p) for k, p in frames if k != "heartbeat"]
kinds = [k for k, _ in frames]
check(kinds == ["hello"] + ["workload"] * 7 + ["summary"], "frame kinds %r" % kinds)
hello, s = frames[0][1], frames[-1][1]
check(hello.get("heartbeat_s") == 1, "hello %r" % hello)
check(hello["uname"].startswith("6.1."), "hello uname %r" % hello["uname"])
w = {p["name"]: p for k, p in frames if k == "workload"}

f = s["features"]
check(f["applied"] == ["NO_HRTICK", "HRTICK", "NO_RT_PUSH"], "features applied %r" % f)
check(f["errors"] == ["feature 'SCHEDLAB_NOT_A_FEATURE' is not known to this kernel"], "features errors %r" % f)
t = s["tunables"]
check(t["applied"] == {"latency_ns": 12000000}, "tunables %r" % t)
check(len(t["errors"]) == 1 and "'base_slice_ns' does not exist" in t["errors"][0], "tunable errors %r" % t)
c = s["cgroups"]
check(c["uid_weights"] == {"1000": 200, "1001": 100} and c["errors"] == [], "cgroups %r" % c)
check(s["errors"] == [] and s["nr_cpus"] == 2 and s["run_id"] == "r-e2e-guest", "summary %r" % s)

sh = w["share"]
check(sh["exit_code"] == 0 and sh["error"] is None, "share ran: %r" % sh)
r = json.loads(sh["stdout"])
m, d = r["metrics"], r["details"]
print("share:", json.dumps(m), "expected", json.dumps(d["expected_fraction"]))
check(d["group_weight"] == {"1000": 200, "1001": 100}, "share saw the groups %r" % d)
check(abs(d["expected_fraction"]["1000"] - 0.6667) < 0.001, "expected 2:1 %r" % d)
check(abs(m["cpu_fraction.1000"] - 2 / 3) < 0.1 and m["share_error"] < 0.15, "2:1 split measured %r" % m)

e = w["exit-as-1000"]
check(e["exit_code"] == 3 and e["uid"] == 1000 and '"action":"exit"' in e["stdout"], "crashme exit %r" % e)
h = w["hang"]
check(h["timed_out"] and h["signal"] == 9, "hang killed after ignoring SIGTERM %r" % h)
g = w["garbage"]
check(g["exit_code"] == 0, "garbage %r" % g)
sl = w["slice"]
check(sl["exit_code"] == 0, "slice ran %r" % sl)
r = json.loads(sl["stdout"])
print("slice:", json.dumps(r["metrics"]), "predicted", r["details"]["predicted_slice_us"])
check(r["details"]["latency_ns"] == 12000000, "slice read the real latency_ns %r" % r["details"])
check(r["details"]["predicted_slice_us"] == 6000, "predicted max(12 ms / 2, min_granularity)")
check(r["metrics"]["segments"] > 10, "slice saw segments")
for name in ("cyclictest", "rt-migrate-test"):
    rt = w[name]
    check(rt["exit_code"] == 0 and rt["error"] is None and rt["json_file"], "%s ran: %r" % (name, rt))
    j = json.loads(rt["json_file"])  # rt-tests write it by hand; it must still be JSON
    check(isinstance(j, dict) and j, "%s json_out %r" % (name, rt["json_file"][:200]))
    print(name + ": json_out of", len(rt["json_file"]), "bytes, keys", sorted(j)[:6])
print("frames: ok")
EOF
grep -q "frame errors" "$E2E_TMP/decode.err" || e2e_fail "the garbage did not register as frame errors"
echo "ok: guest ran the plan and powered off in ${secs}s"
