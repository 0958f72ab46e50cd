#!/usr/bin/env bash
# Host CPU pinning (docs/guests.md "Pinning") with real guests and
# real libvirt, the built-in 6.1 kernel (warm from the other tests):
#   1. guest.pinning "yes" is refused before any guest boots, naming
#      $.guest.pinning.
#   2. Job A, a 1-vCPU guest with the default "auto", running long: every
#      run is pinned, its vCPU on the host's highest online CPU (nothing
#      else pinned here), the emulator on the rest, and what libvirt applied
#      (read back after the start) is that CPU. While A's guest runs, job B
#      (another schedlab process, same shape, short) starts: its first run
#      sees A's CPU held (libvirt's list of running schedlab guests), so on
#      a host of 2 or 3 online CPUs it floats, saying "1 of them held"; on
#      a bigger host it is pinned to another CPU than A's.
#   3. Job C with "pinning": "off": no run pinned, the reason says so.
# The 2-vCPU guests of every other test are never pinned on a 2-CPU host
# (they need 3 CPUs); that reason is in their run records.
# 6 boots of 1 vCPU under TCG: 78 s here (2026-12-05, quiet host).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
e2e_tmpdir
cd "$E2E_TMP"

job() { # job NAME PINNING LOOPS: a 1-vCPU seed job, one repeat
	python3 - "$E2E_ROOT/examples/seed-reproduction-short.json" "$1.json" "$1" "$2" "$3" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["name"] = sys.argv[3]
j["guest"] = {"vcpus": 1, "memory_mb": 512}
if sys.argv[4] != "-":
    j["guest"]["pinning"] = sys.argv[4]
j["repeat"] = 1
j["noise_policy"] = "keep"  # pinning is under test here, not the numbers
j["workloads"][0]["args"] = ["-p", "60", "-l", sys.argv[5], "2"]
json.dump(j, open(sys.argv[2], "w"), indent=1)
PY
}

# 1. A bad value.
job bad yes 5
set +e
"$SCHEDLAB" run bad.json -o bad-result.json --job-dir bad >bad.out 2>&1
rc=$?
set -e
cat bad.out
[ "$rc" -eq 2 ] || e2e_fail "pinning 'yes' should be refused (exit 2), got $rc"
grep -q 'guest.pinning' bad.out || e2e_fail "the refusal does not name \$.guest.pinning"
[ ! -d bad/runs ] || [ -z "$(ls -A bad/runs)" ] || e2e_fail "a guest ran for a refused job"

# 2. A (long) and, while A's guest runs pinned, B (short).
job a - 150
job b - 5
"$SCHEDLAB" run a.json -o a-result.json --job-dir a >a.out 2>&1 &
a_pid=$!
found=""
for _ in $(seq 1 600); do
	for d in $(e2e_virsh list --name 2>/dev/null | grep '^schedlab-' || true); do
		# a pinned vCPU shows one CPU in vcpupin's table (" 0      1")
		if e2e_virsh vcpupin "$d" 2>/dev/null | grep -Eq "^ *0 +[0-9]+ *$"; then
			found=$d
		fi
	done
	[ -n "$found" ] && break
	kill -0 "$a_pid" 2>/dev/null || break
	sleep 0.2
done
if [ -z "$found" ]; then
	wait "$a_pid" || true
	cat a.out
	e2e_fail "no pinned schedlab guest of job A was seen running"
fi
echo "job A's guest $found is running pinned:"
e2e_virsh vcpupin "$found"
e2e_virsh emulatorpin "$found"
set +e
"$SCHEDLAB" run b.json -o b-result.json --job-dir b >b.out 2>&1
b_rc=$?
wait "$a_pid"
a_rc=$?
set -e
tail -n 5 a.out b.out
if [ ! -f a-result.json ] || [ ! -f b-result.json ]; then
	e2e_fail "a job wrote no result (A $a_rc, B $b_rc)"
fi
grep -q 'pinning:' a.out || e2e_fail "A's summary has no pinning line"

# 3. Pinning off.
job c off 5
"$SCHEDLAB" run c.json -o c-result.json --job-dir c >c.out 2>&1 || true
for r in a b c; do
	"$SCHEDLAB" validate --result "$r-result.json"
	"$E2E_ROOT/tests/tools/check-schema.py" result "$r-result.json"
done

python3 - <<'PY'
import json
# the host's online CPUs, as libvirt counts them (not this process's affinity)
online = []
for part in open("/sys/devices/system/cpu/online").read().strip().split(","):
    lo, _, hi = part.partition("-")
    online += range(int(lo), int(hi or lo) + 1)
top, ncpu = max(online), len(online)
def runs(name):
    r = json.load(open(f"{name}-result.json"))
    rs = [run for v in r["variants"].values() for run in v["runs"]]
    assert len(rs) == 2, (name, len(rs))
    for run in rs:
        assert run["status"] == "ok", (name, run["key"], run["status"], run.get("reason"))
        print(name, run["key"], run["started_at"], run["pinning"])
    return sorted(rs, key=lambda run: run["started_at"])

a = runs("a")
for run in a:
    p = run["pinning"]
    assert p["pinned"], p
    assert p["vcpus"] == [top], (p, online)  # the highest online CPU
    assert p["applied"] == [str(top)], p
    assert str(top) not in p["emulator"].replace("-", ",").split(","), p
b = runs("b")
p = b[0]["pinning"]
if ncpu - 1 >= 2:
    assert p["pinned"] and p["vcpus"][0] != top, p
    assert p["applied"] == [str(p["vcpus"][0])], p
else:
    assert not p["pinned"], p
    assert "1 of them held" in p["reason"], p
for run in runs("c"):
    assert not run["pinning"]["pinned"], run["pinning"]
    assert run["pinning"]["reason"] == "guest.pinning is off", run["pinning"]
print(f"ok: A pinned to host CPU {top} of {ncpu} online; B's first run beside it:", p)
PY
