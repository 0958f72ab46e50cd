#!/usr/bin/env bash
# Scale-out across two libvirt hosts on this machine: the local daemon and a
# second libvirtd in a network namespace reached over qemu+tcp
# (tests/lib/remote-libvirtd.sh). Checks that
#  1. a spread job (the short seed reproduction, 2 repeats) runs on both
#     hosts, each round on one host, with the kernel and initrd uploaded into
#     the remote host's 'schedlab' pool and every run ok;
#  2. when the remote daemon is killed in the middle of a job, its run is
#     retried locally, the job finishes, and no run is lost or counted twice.
# Needs root, ip, unshare, libvirtd and virsh; builds or takes the kernel.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_ROOT/tests/lib/remote-libvirtd.sh"
e2e_need ip unshare libvirtd virsh python3
[ "$(id -u)" = 0 ] || e2e_skip "needs root for a network namespace and a second libvirtd"
e2e_need_schedlab
e2e_kernel >/dev/null || e2e_fail "the guest kernel did not build"
e2e_tmpdir
T=$E2E_TMP
cleanup() {
	remote_libvirtd_stop
	_e2e_cleanup
}
trap cleanup EXIT

remote_libvirtd_start "$T/remote" || e2e_fail "the remote libvirtd did not start"
echo "remote host: $REMOTE_URI"
cat >"$T/hypervisors.json" <<JSON
[{"uri": "qemu:///system", "slots": 1},
 {"uri": "$REMOTE_URI", "slots": 1, "labels": ["test-remote"]}]
JSON

make_job() { # NAME REPEAT OUT
	python3 - "$E2E_ROOT/examples/seed-reproduction-short.json" "$3" "$1" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["name"] = sys.argv[3]
j["repeat"] = int(sys.argv[4])
j["placement"] = "spread"
j["accelerator"] = "tcg"
for w in j["workloads"]:
    w["args"] = ["-p", "60", "-l", "10", "3"]
json.dump(j, open(sys.argv[2], "w"), indent=1)
PY
}

# Checks a result: every run ok, each key once, repeat x variants runs, the
# hosts used. Prints "host-of-each-round" lines for the caller.
check_result() { # RESULT REPEAT
	python3 - "$1" "$2" "$REMOTE_URI" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); repeat = int(sys.argv[2]); remote = sys.argv[3]
keys, hosts = [], {}
for vname, v in r["variants"].items():
    assert len(v["runs"]) == repeat, f"{vname}: {len(v['runs'])} runs, not {repeat}"
    for run in v["runs"]:
        assert run["status"] == "ok", f"{run['key']}: {run['status']} {run.get('reason')}"
        assert run["host"] in ("qemu:///system", remote), run["host"]
        keys.append(run["key"]); hosts.setdefault(run["repeat"], set()).add(run["host"])
assert len(keys) == len(set(keys)), f"a run counted twice: {sorted(keys)}"
p = r["placement"]
assert p["mode"] == "spread", p
used = sorted({h for s in hosts.values() for h in s})
assert sorted(p["hosts"]) == used, (p, used)
assert p["crossed_hosts"] == (len(used) > 1), p
for rep in sorted(hosts):
    print(f"round {rep}:", " ".join(sorted(hosts[rep])))
print("retried_runs", p["retried_runs"])
PY
}

if [ -z "${SCALEOUT_SKIP1:-}" ]; then
echo "== 1. a spread job runs on both hosts"
make_job scaleout-spread 2 "$T/job1.json"
"$SCHEDLAB" run "$T/job1.json" -o "$T/result1.json" --job-dir "$T/job1" \
	--hypervisors "$T/hypervisors.json" || echo "schedlab run exited $?"
[ -f "$T/result1.json" ] || e2e_fail "job 1 wrote no result"
"$SCHEDLAB" validate --result "$T/result1.json"
out=$(check_result "$T/result1.json" 2) || e2e_fail "job 1's result is wrong"
echo "$out"
echo "$out" | grep -qx "round 0: qemu:///system" || e2e_fail "round 0 did not run locally"
echo "$out" | grep -qx "round 1: $REMOTE_URI" || e2e_fail "round 1 did not run on the remote host"
echo "$out" | grep -qx "retried_runs 0" || e2e_fail "job 1 retried runs"
# The uploads are in the remote host's pool, not the local one; the run's
# initrd was deleted after it, the kernel stays for the next job.
ls "$T/remote/lib/schedlab-pool" | tee "$T/pool.txt"
grep -q '^kernel-[0-9a-f]\{32\}$' "$T/pool.txt" || e2e_fail "no kernel volume on the remote host"
if grep -q '^initrd-' "$T/pool.txt"; then e2e_fail "a run's initrd volume was left behind"; fi

fi
echo "== 2. the remote host drops in the middle of a job"
make_job scaleout-failover 4 "$T/job2.json"
"$SCHEDLAB" run "$T/job2.json" -o "$T/result2.json" --job-dir "$T/job2" \
	--hypervisors "$T/hypervisors.json" 2>"$T/run2.log" &
pid=$!
killed=
for _ in $(seq 1 600); do
	if grep -q "on '$REMOTE_URI'" "$T/run2.log" 2>/dev/null; then
		sleep 3 # in the middle of the remote run
		remote_libvirtd_kill
		killed=1
		echo "killed the remote libvirtd"
		break
	fi
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.5
done
rc=0
wait "$pid" || rc=$?
grep -vE '^\[building' "$T/run2.log" | tail -40
[ -n "$killed" ] || e2e_fail "no run went to the remote host, so none could be retried"
[ -f "$T/result2.json" ] || e2e_fail "job 2 wrote no result (exit $rc)"
"$SCHEDLAB" validate --result "$T/result2.json"
out=$(check_result "$T/result2.json" 4) || e2e_fail "job 2's result is wrong"
echo "$out"
grep -q "Retrying on another host" "$T/run2.log" || e2e_fail "no retry was logged"
retried=$(echo "$out" | sed -n 's/^retried_runs //p')
[ "$retried" -ge 1 ] || e2e_fail "job 2 retried no run"
# Everything after the drop ran locally.
echo "$out" | grep -qx "round 3: qemu:///system" || e2e_fail "round 3 did not run locally"
echo "PASS: spread over two hosts; a dropped host's run was retried locally ($retried retried)"
