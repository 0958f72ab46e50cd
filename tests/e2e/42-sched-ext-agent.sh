#!/usr/bin/env bash
# The guest agent's sched_ext handling (workloads/agent/scx.c) in host mode
# against a fake root, with a fake loader that plays sched_ext's part (it
# writes /sys/kernel/sched_ext/state and root/ops and prints the user exit
# info as the real loaders do): a scheduler that loads, runs under the
# workload and stops with SIGINT; one that fails to load (its workloads are
# not run); one that sched_ext ejects during the workload. The same
# with the real scx_simple in a 6.12 guest waits for BPF_EVENTS in the 6.12
# config (docs/sched-ext.md, Status). Takes about 5 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
agent=$BUILD/agent
[ -x "$agent" ] || make -s "$agent"
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/fake-scx" <<'EOF'
#!/bin/sh
# fake-scx ROOT MODE: MODE ok, fail or eject
d=$1/sys/kernel/sched_ext
case $2 in
fail)
	echo "scx_simple.c:90 [SEV_BUG] Failed to load: -22 (Invalid argument)" >&2
	exit 1 ;;
esac
stop() {
	echo disabled >"$d/state"; rm -f "$d/root/ops"
	echo "EXIT: unregistered from user space" >&2
	exit 0
}
trap stop INT
sleep 0.3
mkdir -p "$d/root"; echo simple >"$d/root/ops"; echo enabled >"$d/state"
n=0
while :; do
	n=$((n + 1)); echo "local=$n global=0"
	if [ "$2" = eject ] && [ $n -ge 3 ]; then
		echo disabled >"$d/state"; rm -f "$d/root/ops"
		echo "EXIT: runnable task stall (kworker/0:1[9] failed to run for 30.1s)" >&2
		exit 0
	fi
	sleep 0.1
done
EOF
chmod +x "$tmp/fake-scx"

# run MODE: the agent with a plan whose sched_ext is the fake loader
run() {
	local mode=$1 root=$tmp/root-$1
	mkdir -p "$root/sys/kernel/sched_ext" "$root/sys/kernel/debug/sched" "$root/tmp"
	echo disabled >"$root/sys/kernel/sched_ext/state"
	cat >"$tmp/plan-$mode.json" <<EOF
{"run_id": "r-$mode", "features": [], "tunables": {},
 "sched_ext": {"scheduler": "scx_simple", "argv": ["$tmp/fake-scx", "$root", "$mode"]},
 "workloads": [{"name": "sleep", "argv": ["/bin/sh", "-c", "sleep 1; cat $root/sys/kernel/sched_ext/state"], "timeout_s": 10}]}
EOF
	local rc=0
	"$agent" --root "$root" --out "$tmp/frames-$mode" --plan "$tmp/plan-$mode.json" \
		2>"$tmp/log-$mode" || rc=$?
	cat "$tmp/log-$mode"
	"$agent" --decode "$tmp/frames-$mode" >"$tmp/decoded-$mode"
	echo "$rc" >"$tmp/rc-$mode"
}
run ok
run fail
run eject

python3 - "$tmp" <<'EOF'
import json, sys
tmp = sys.argv[1]

def load(mode):
    frames = []
    for line in open("%s/decoded-%s" % (tmp, mode)):
        kind, payload = line.rstrip("\n").split(" ", 1)
        frames.append((kind, json.loads(payload)))
    rc = int(open("%s/rc-%s" % (tmp, mode)).read())
    return frames, frames[-1][1], rc

def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)

frames, s, rc = load("ok")
x = s.get("sched_ext")
check(rc == 0, "ok: agent exit %d" % rc)
check(x and x["state"] == "enabled" and x["ops"] == "simple", "ok: read back %r" % x)
check(x["state_end"] == "enabled" and x["error"] is None, "ok: %r" % x)
check(x["exit_reason"] == "unregistered from user space" and x["loader_exit"] == "exit 0",
      "ok: exit %r" % x)
w = [p for k, p in frames if k == "workload"]
check(len(w) == 1 and w[0]["stdout"] == "enabled\n", "ok: the workload ran under it: %r" % w)

frames, s, rc = load("fail")
x = s["sched_ext"]
check(rc == 1, "fail: agent exit %d" % rc)
check("did not load" in x["error"] and "Failed to load: -22" in x["error"]
      and "exit 1" in x["error"], "fail: %r" % x)
check(not [p for k, p in frames if k == "workload"], "fail: workloads ran without the scheduler")

frames, s, rc = load("eject")
x = s["sched_ext"]
check(rc == 1, "eject: agent exit %d" % rc)
check(x["state"] == "enabled" and x["state_end"] == "disabled", "eject: states %r" % x)
check(x["exit_reason"].startswith("runnable task stall") and "ejected" in x["error"],
      "eject: %r" % x)
print("sched_ext agent: loaded, failed to load and ejected runs all recorded")
EOF
