#!/usr/bin/env bash
# Guest CPU topology (docs/guests.md "Topology"): a job with
# guest.topology 2 sockets x 2 cores x 1 thread (vcpus left out: it follows)
# boots real 6.1 guests (the base kernel, warm from the other tests) whose
# sysfs reads the topology back: every run records cpus 4, sockets 2,
# cores 2, threads 1, and CPU 0's sched domains show the scheduler built a
# core level (MC) and a level above it. A topology whose product is not the
# vcpus is refused before any guest boots, naming $.guest.topology.
# Then the same on the built-in 6.12 kernel (warm from e2e 41), whose
# debug/sched/domains exists only while debug/sched/verbose is on: the agent
# turns it on around the read, so the names are there too.
# 1 repeat of a 20-loop rt-migrate-test: 2 boots of 4 vCPUs under TCG,
# 61 s here at load 9 for 6.1 alone; with the 6.12 half (2 more boots,
# its kernel cached) 142 s at load 7 to 12 (2026-12-05), which read back
# MC, DIE on 6.1 and MC, PKG on 6.12.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_job.sh"
e2e_need_guest
e2e_tmpdir

python3 - "$E2E_ROOT/examples/seed-reproduction-short.json" "$E2E_TMP/bad.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["name"] = "topology-bad"
j["guest"] = {"vcpus": 3, "topology": {"sockets": 2, "cores": 2}}
json.dump(j, open(sys.argv[2], "w"))
PY
e2e_run_refused "$E2E_TMP/bad.json" bad
grep -q '\$\.guest\.topology: .*4 CPUs, not the guest.s 3 vcpus' "$E2E_TMP/bad.out" ||
	e2e_fail "the refusal does not name \$.guest.topology and the counts"

e2e_run_example seed-reproduction-short.json topology '
j["guest"] = {"memory_mb": 512, "topology": {"sockets": 2, "cores": 2, "threads": 1}}
j["repeat"] = 1
j["noise_policy"] = "keep"  # the topology is under test here, not the numbers
j["workloads"][0]["args"] = ["-p", "60", "-l", "20", "3"]
'
python3 - "$E2E_TMP/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job"]["guest"]["vcpus"] == 4, r["job"]["guest"]
runs = [run for v in r["variants"].values() for run in v["runs"]]
assert len(runs) == 2, len(runs)
for run in runs:
    t = run.get("topology")
    print(run["key"], run["status"], t)
    assert run["status"] == "ok", (run["key"], run["status"], run.get("reason"))
    assert t and (t["cpus"], t["sockets"], t["cores"], t["threads"]) == (4, 2, 2, 1), t
    d = t.get("sched_domains") or []
    assert "MC" in d and len(d) >= 2 and d.index("MC") < len(d) - 1, d
PY
echo "PASS: 2 x 2 x 1 read back in every run, with an MC level and one above it"

result_61=$E2E_TMP/result.json
e2e_run_example seed-reproduction-6.12.json topology-612 '
j["guest"] = {"memory_mb": 512, "topology": {"sockets": 2, "cores": 2, "threads": 1}}
j["repeat"] = 1
j["noise_policy"] = "keep"
j["workloads"][0]["args"] = ["-p", "60", "-l", "20", "3"]
'
[ "$E2E_TMP/result.json" != "$result_61" ] || e2e_fail "the 6.12 run reused the 6.1 result"
python3 - "$E2E_TMP/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
runs = [run for v in r["variants"].values() for run in v["runs"]]
assert len(runs) == 2, len(runs)
for run in runs:
    t = run.get("topology")
    print("6.12", run["key"], run["status"], t)
    assert run["status"] == "ok", (run["key"], run["status"], run.get("reason"))
    assert t and (t["cpus"], t["sockets"], t["cores"], t["threads"]) == (4, 2, 2, 1), t
    d = t.get("sched_domains") or []
    assert "MC" in d and len(d) >= 2 and d.index("MC") < len(d) - 1, d
PY
echo "PASS: on 6.12 too, with sched/verbose turned on for the domain names"
