#!/usr/bin/env bash
# What schedstat costs (docs/workloads.md "schedstat"): the built-in
# 6.1 kernel against the same kernel with "schedstat": true (CONFIG_SCHEDSTATS
# and kernel.sched_schedstats on, snapshots around each workload), side by
# side in one job, on cyclictest (latency) and hackbench (throughput). Both
# kernels are otherwise identical, so every difference is schedstat's cost;
# the comparison's interval says how well this host can see it. Prints the
# host load before and after, the job's summary, and per metric the medians,
# the change and its 95 % interval.
# Uses the cache as it is (default $SCHEDLAB_CACHE or ~/.cache/schedlab):
# the schedstat kernel is one cold build the first time (about 5 min on a
# quiet 2-core host; e2e 95 builds the same one).
# Starts virtlogd and libvirtd when they are not running (stopped after).
# Usage: bench/schedstat-cost.sh [--repeat N (default 5)] [--vcpus N (default 2)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
schedlab=${SCHEDLAB:-$root/build/schedlab}
repeat=5 vcpus=2
while [ $# -gt 0 ]; do
	case $1 in
	--repeat) repeat=$2; shift 2 ;;
	--vcpus) vcpus=$2; shift 2 ;;
	-h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
done
[[ "$repeat" =~ ^[0-9]+$ ]] && [ "$repeat" -ge 2 ] && [ "$repeat" -le 20 ] || { echo "--repeat 2..20" >&2; exit 2; }
[[ "$vcpus" =~ ^[0-9]+$ ]] && [ "$vcpus" -ge 1 ] && [ "$vcpus" -le 8 ] || { echo "--vcpus 1..8" >&2; exit 2; }
[ -x "$schedlab" ] || make -C "$root" -s all
source "$root/tests/lib/libvirt-daemons.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-bench-schedstat.XXXXXX")
trap 'rm -rf "$tmp"; libvirt_daemons_stop' EXIT
libvirt_daemons_start

cat >"$tmp/job.json" <<JOB
{"name": "schedstat-cost",
 "kernels": {
  "plain": {"source": "debian:linux-source-6.1", "patches": [{"series": "linux-6.1"}], "config": {"builtin": "linux-6.1"}},
  "schedstat": {"source": "debian:linux-source-6.1", "patches": [{"series": "linux-6.1"}], "config": {"builtin": "linux-6.1"}, "schedstat": true}
 },
 "guest": {"vcpus": $vcpus, "memory_mb": 512},
 "variants": {"plain": {"kernel": "plain"}, "schedstat": {"kernel": "schedstat"}},
 "baseline": "plain",
 "workloads": [
  {"name": "cyclictest", "tool": "cyclictest", "args": ["-t1", "-p90", "-i1000", "-l3000", "-q", "-h2000"], "timeout_s": 60},
  {"name": "hackbench", "tool": "hackbench", "args": ["-p", "-g", "4", "-f", "10", "-l", "100"], "timeout_s": 120}
 ],
 "gates": [],
 "repeat": $repeat}
JOB
echo "host load before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs), $(date -u +%FT%TZ)"
start=$(date +%s)
rc=0
"$schedlab" run "$tmp/job.json" -o "$tmp/result.json" || rc=$?
echo "host load after: $(cut -d' ' -f1-3 /proc/loadavg), $(($(date +%s) - start)) s, schedlab run exited $rc"
[ -f "$tmp/result.json" ] || exit 1
python3 - "$tmp/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v, var in r["variants"].items():
    waits = [(run.get("host_interference") or {}).get("vcpu_wait_pct") for run in var["runs"]]
    print(f"{v}: {len(var['runs'])} runs, status {[run['status'] for run in var['runs']]}, vCPU wait % {waits}")
print(f"{'workload':12} {'metric':28} {'plain':>10} {'schedstat':>10} {'change':>8}  95% CI")
for c in r.get("comparisons", []):
    m = c["metric"]
    if m.startswith("schedstat.") or m.startswith("cpu_fraction."):
        continue
    ci = c.get("ci95") or [None, None]
    rel = c.get("change_pct")
    fmt = lambda x: "-" if x is None else f"{x:.4g}"
    print(f"{c['workload']:12} {m:28} {fmt(c['baseline']['median']):>10} {fmt(c['candidate']['median']):>10} "
          f"{(fmt(rel) + '%') if rel is not None else '-':>8}  [{fmt(ci[0])}, {fmt(ci[1])}]  {c.get('verdict')}")
PY
