#!/usr/bin/env bash
# tier: host
# The guest agent in host mode against a fake root: features written and read
# back, an unknown feature and a feature that does not read back reported,
# tunables, per-uid groups and weights, uid switching, a workload killed at
# its timeout (it ignores SIGTERM), an orphan inherited and reaped, stdout and
# stderr captured (and capped, keeping the tail), json_out returned, a bad
# plan still answered with a summary. Frames are decoded with the agent's own
# parser (agent --decode) and checked with python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
agent=$BUILD/agent
[ -x "$agent" ] || make -s "$agent"
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "needs root (setuid to uid 1000 in a workload)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A fake kernel: empty debugfs files the agent may write, an empty cgroup root.
fakeroot() {
	local root=$1
	mkdir -p "$root/sys/kernel/debug/sched" "$root/sys/fs/cgroup"
	: >"$root/sys/kernel/debug/sched/features"
	: >"$root/sys/kernel/debug/sched/latency_ns"
	: >"$root/sys/kernel/debug/sched/min_granularity_ns"
}

# --- run 1: everything that should work, and the workload edge cases ---
root=$tmp/root1
fakeroot "$root"
json_out=$tmp/w5.json
cat >"$tmp/plan1.json" <<EOF
{"run_id": "r-e2e-1",
 "features": ["NO_RT_PUSH", "HRTICK"],
 "tunables": {"latency_ns": 6000000, "min_granularity_ns": 750000, "base_slice_ns": 3000000},
 "uid_shares": {"1000": 2048, "1001": 1},
 "workloads": [
  {"name": "echo", "argv": ["/bin/sh", "-c", "echo out-line; echo err-line >&2; exit 3"], "timeout_s": 10},
  {"name": "hang", "argv": ["/bin/sh", "-c", "trap '' TERM; echo started; exec sleep 60"], "timeout_s": 1},
  {"name": "orphan", "argv": ["/bin/sh", "-c", "setsid sleep 0.4 </dev/null >/dev/null 2>&1 & echo \$!; sleep 0.2"], "timeout_s": 10},
  {"name": "id", "argv": ["/bin/sh", "-c", "id -u; id -G"], "uid": 1000, "timeout_s": 10},
  {"name": "missing", "argv": ["/nonexistent/tool"]},
  {"name": "json", "argv": ["/bin/sh", "-c", "printf '{\"x\": 1}' > $json_out"], "json_out": "$json_out"},
  {"name": "big", "argv": ["/bin/sh", "-c", "head -c 3000000 /dev/zero | tr '\\\\0' a; echo; echo END-OF-OUTPUT"]},
  {"name": "settle", "argv": ["/bin/sleep", "0.6"]}
 ]}
EOF
start=$(date +%s)
rc=0
"$agent" --root "$root" --out "$tmp/frames1" --plan "$tmp/plan1.json" 2>"$tmp/log1" || rc=$?
secs=$(( $(date +%s) - start ))
cat "$tmp/log1"
[ "$rc" -eq 1 ] || { echo "FAIL: agent exited $rc, expected 1 (base_slice_ns is missing)"; exit 1; }
[ "$secs" -lt 20 ] || { echo "FAIL: the agent took $secs s"; exit 1; }
"$agent" --decode "$tmp/frames1" >"$tmp/decoded1"

python3 - "$tmp/decoded1" "$root" <<'EOF'
import json, sys
decoded, root = sys.argv[1], sys.argv[2]
frames = []
for line in open(decoded):
    kind, payload = line.rstrip("\n").split(" ", 1)
    frames.append((kind, json.loads(payload)))
kinds = [k for k, _ in frames]
assert kinds == ["hello"] + ["workload"] * 8 + ["summary"], kinds
hello = frames[0][1]
assert hello["agent"] == "schedlab-agent" and hello["uname"], hello
w = {p["name"]: p for k, p in frames if k == "workload"}
s = frames[-1][1]

def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)

check([p["index"] for k, p in frames if k == "workload"] == list(range(8)), "workload indexes")
e = w["echo"]
check(e["exit_code"] == 3 and e["signal"] == 0 and not e["timed_out"], "echo exit status %r" % e)
check(e["stdout"] == "out-line\n" and e["stderr"] == "err-line\n", "echo output %r" % e)
check(e["error"] is None and e["json_file"] is None, "echo error/json_file")
h = w["hang"]
check(h["timed_out"] and h["signal"] == 9, "hang: killed with SIGKILL after ignoring SIGTERM %r" % h)
check(2900 <= h["duration_ms"] <= 6000, "hang: 1 s timeout + 2 s grace, got %d ms" % h["duration_ms"])
check(h["stdout"] == "started\n" and "timed out" in h["error"], "hang output/error %r" % h)
o = w["orphan"]
check(o["exit_code"] == 0 and o["stdout"].strip().isdigit(), "orphan %r" % o)
check(s["orphans_reaped"] >= 1, "orphans_reaped %r" % s.get("orphans_reaped"))
i = w["id"]
check(i["uid"] == 1000 and i["stdout"] == "1000\n1000\n", "uid switch: id -u; id -G gave %r" % i["stdout"])
m = w["missing"]
check(m["exit_code"] == 127 and "execv failed: No such file or directory" in m["error"], "missing %r" % m)
j = w["json"]
check(j["json_file"] == '{"x": 1}' and j["error"] is None, "json_out %r" % j)
b = w["big"]
check(b["stdout_truncated"] and len(b["stdout"]) == 1024 * 1024, "big: capped at 1 MiB (%d)" % len(b["stdout"]))
check(b["stdout"].endswith("a\nEND-OF-OUTPUT\n"), "big: the tail is kept")
check(not b["stderr_truncated"], "big: stderr")

f = s["features"]
check(f["requested"] == ["NO_RT_PUSH", "HRTICK"] and f["applied"] == f["requested"] and f["errors"] == [], "features %r" % f)
t = s["tunables"]
check(t["applied"] == {"latency_ns": 6000000, "min_granularity_ns": 750000}, "tunables applied %r" % t)
check(len(t["errors"]) == 1 and "'base_slice_ns' does not exist" in t["errors"][0], "tunables errors %r" % t)
c = s["cgroups"]
check(c["uid_weights"] == {"1000": 200, "1001": 1} and c["errors"] == [], "cgroups %r" % c)
check(s["run_id"] == "r-e2e-1" and s["workloads"] == 8 and s["errors"] == [], "summary %r" % s)
check(s["nr_cpus"] >= 1, "nr_cpus")

# the fake kernel's files
rd = lambda p: open(root + p).read()
check(rd("/sys/kernel/debug/sched/latency_ns") == "6000000\n", "latency_ns file")
check(rd("/sys/fs/cgroup/schedlab/user-1000.slice/cpu.weight") == "200\n", "cpu.weight 1000")
check(rd("/sys/fs/cgroup/schedlab/user-1001.slice/cpu.weight") == "1\n", "cpu.weight 1001")
check(rd("/sys/fs/cgroup/cgroup.subtree_control") == "+cpu", "root subtree_control")
check(rd("/sys/fs/cgroup/schedlab/cgroup.subtree_control") == "+cpu", "schedlab subtree_control")
check(rd("/sys/fs/cgroup/schedlab/user-1000.slice/cgroup.procs").strip().isdigit(), "id joined its group")
check("HRTICK" in rd("/sys/kernel/debug/sched/features").split(), "features file")
print("run 1: ok")
EOF

# --- run 2: a kernel that rejects the feature names (EINVAL, like the real
# features file for a name it does not know) ---
root=$tmp/root2
fakeroot "$root"
rm "$root/sys/kernel/debug/sched/features"
# /proc/self/oom_score_adj takes integers only: any name is EINVAL, harmlessly
ln -s /proc/self/oom_score_adj "$root/sys/kernel/debug/sched/features"
cat >"$tmp/plan2.json" <<'EOF'
{"run_id": "r-e2e-2", "features": ["NOT_A_FEATURE"],
 "workloads": [{"name": "true", "argv": ["/bin/true"], "timeout_s": 5}]}
EOF
rc=0
"$agent" --root "$root" --out "$tmp/frames2" --plan "$tmp/plan2.json" 2>"$tmp/log2" || rc=$?
cat "$tmp/log2"
[ "$rc" -eq 1 ] || { echo "FAIL: an unknown feature must make the agent exit 1, got $rc"; exit 1; }
"$agent" --decode "$tmp/frames2" | grep '^summary ' | cut -d' ' -f2- >"$tmp/summary2"
python3 - "$tmp/summary2" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
f = s["features"]
assert f["applied"] == [], f
assert f["errors"] == ["feature 'NOT_A_FEATURE' is not known to this kernel"], f
assert s["workloads"] == 1, s
print("run 2: ok")
EOF

# --- run 3: writes accepted but nothing reads back (/dev/null) ---
root=$tmp/root3
fakeroot "$root"
rm "$root/sys/kernel/debug/sched/features"
ln -s /dev/null "$root/sys/kernel/debug/sched/features"
cat >"$tmp/plan3.json" <<'EOF'
{"features": ["HRTICK"], "workloads": []}
EOF
rc=0
"$agent" --root "$root" --out "$tmp/frames3" --plan "$tmp/plan3.json" 2>/dev/null || rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: a feature that does not read back must fail, got $rc"; exit 1; }
"$agent" --decode "$tmp/frames3" | grep -q "feature 'HRTICK' was written but does not read back" ||
	{ echo "FAIL: run 3 has no read-back error"; "$agent" --decode "$tmp/frames3"; exit 1; }
echo "run 3: ok"

# --- run 4: a plan that must be refused still gets a summary ---
cat >"$tmp/plan4.json" <<'EOF'
{"tunables": {"../../../../etc/passwd": 1}, "workloads": [{"name": "x", "argv": ["/bin/true"]}]}
EOF
rc=0
"$agent" --root "$tmp/root3" --out "$tmp/frames4" --plan "$tmp/plan4.json" 2>/dev/null || rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: a bad plan must make the agent exit 1, got $rc"; exit 1; }
"$agent" --decode "$tmp/frames4" >"$tmp/decoded4"
grep -q '^hello ' "$tmp/decoded4" && grep -q '^summary .*may not contain' "$tmp/decoded4" &&
	! grep -q '^workload ' "$tmp/decoded4" ||
	{ echo "FAIL: run 4 frames:"; cat "$tmp/decoded4"; exit 1; }
echo "run 4: ok"

# --- run 5: schedstat asked for. With the switch writable, /proc/schedstat is
# sent before and after each workload; on a kernel without the switch the
# agent says so as an error and sends no snapshots (counters that stand
# still would read as zero differences) ---
cat >"$tmp/plan5.json" <<'EOF'
{"run_id": "r-e2e-5", "schedstat": true,
 "workloads": [{"name": "true", "argv": ["/bin/true"], "timeout_s": 5}]}
EOF
for case in on off; do
	root=$tmp/root5-$case
	fakeroot "$root"
	mkdir -p "$root/proc/sys/kernel"
	echo "version 15" >"$root/proc/schedstat"
	[ "$case" = off ] || echo 0 >"$root/proc/sys/kernel/sched_schedstats"
	[ "$case" = off ] || echo 0 >"$root/proc/sys/kernel/task_delayacct"
	rc=0
	"$agent" --root "$root" --out "$tmp/frames5" --plan "$tmp/plan5.json" 2>"$tmp/log5" || rc=$?
	want=0; [ "$case" = on ] || want=1
	[ "$rc" -eq "$want" ] || { cat "$tmp/log5"; echo "FAIL: schedstat $case: agent exited $rc, expected $want"; exit 1; }
	"$agent" --decode "$tmp/frames5" >"$tmp/decoded5"
	python3 - "$tmp/decoded5" "$case" "$root" <<'EOF'
import json, sys
case, root = sys.argv[2], sys.argv[3]
frames = [(l.split(" ", 1)[0], json.loads(l.split(" ", 1)[1])) for l in open(sys.argv[1])]
w = [p for k, p in frames if k == "workload"][0]
s = [p for k, p in frames if k == "summary"][0]
if case == "on":
    assert s["schedstat"] is True and s["errors"] == [], s
    assert w["schedstat_before"] == w["schedstat_after"] == "version 15\n", w
    ru = w["tasks_rusage"]
    assert sorted(ru) == ["nivcsw", "nvcsw", "stime_us", "utime_us"] and all(v >= 0 for v in ru.values()), ru
    assert open(root + "/proc/sys/kernel/sched_schedstats").read().strip() == "1", "switch not written"
    # taskstats against this host's own kernel (root, and a kernel with
    # delay accounting): /bin/true is one task that exited
    import os
    if os.geteuid() == 0 and os.path.exists("/proc/sys/kernel/task_delayacct"):
        assert s["taskstats"] is True, s
        assert open(root + "/proc/sys/kernel/task_delayacct").read().strip() == "1"
        td = w["tasks_delay"]
        assert td["tasks"] == 1 and td["lost"] is False and td["dropped"] == 0, td
        assert td["max_comm"] == "true" and td["timeslices"] >= 1 and td["version"] >= 8, td
    else:
        print("taskstats not checked: not root or no delay accounting here")
else:
    assert s["schedstat"] is False, s
    assert len(s["errors"]) == 1 and "kernel.sched_schedstats" in s["errors"][0], s["errors"]
    assert "schedstat_before" not in w and "tasks_rusage" not in w, w
print("run 5 (schedstat %s): ok" % case)
EOF
done

# --- the decoder flags a damaged stream ---
head -c -20 "$tmp/frames1" >"$tmp/cut"
if "$agent" --decode "$tmp/cut" >/dev/null 2>"$tmp/cut.err"; then
	echo "FAIL: a truncated stream decoded without error"; exit 1
fi
grep -q truncated "$tmp/cut.err" || { cat "$tmp/cut.err"; exit 1; }
echo "decoder: ok"
