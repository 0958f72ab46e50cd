#!/usr/bin/env bash
# How often does schedlab cry wolf, and how often does it miss? Runs K A/A
# jobs (one kernel, two variants with identical settings) and K jobs with a
# planted RT placement regression (the candidate runs with RT_PUSH and
# RT_WAKEUP_PLACE off, the baseline with them on), each with the gates
# `inversions` and `latency_us.avg`, and prints per gated metric the
# false-positive rate (A/A comparisons called improved or regressed), the
# inconclusive rate, and the detection rate (planted jobs that fail, or are
# inconclusive — never pass), with the host's load average before and after.
#
# Usage: bench/verdict-accuracy.sh [-k K] [--repeat R|MIN:MAX] [--hog N] [--out DIR]
#   -k K        jobs of each kind (default 5)
#   --repeat    repeats per variant, or MIN:MAX for adaptive repeats (default 3)
#   --hog N     N busy loops on the host beside the jobs (default 0; 2 per
#               core is the "loaded" case of docs/statistics.md)
#   --out DIR   keep every job and result in DIR (default: a temp dir, removed)
# Needs the schedlab kernel in the cache (make check or make demo builds it);
# each job boots 2 x R TCG guests (about 20 s each here).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
schedlab=${SCHEDLAB:-$root/build/schedlab}
k=5 repeat=3 hog=0 out=""
while [ $# -gt 0 ]; do
	case "$1" in
	-k) k=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--hog) hog=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) sed -n '2,18p' "$0"; exit 0 ;;
	*) echo "verdict-accuracy.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[[ "$k" =~ ^[0-9]+$ && "$k" -ge 1 ]] || { echo "verdict-accuracy.sh: -k needs a positive integer" >&2; exit 2; }
[[ "$hog" =~ ^[0-9]+$ ]] || { echo "verdict-accuracy.sh: --hog needs a count" >&2; exit 2; }
if [[ "$repeat" =~ ^([0-9]+):([0-9]+)$ ]]; then
	repeat_json="{\"min\": ${BASH_REMATCH[1]}, \"max\": ${BASH_REMATCH[2]}}"
elif [[ "$repeat" =~ ^[0-9]+$ ]]; then
	repeat_json=$repeat
else
	echo "verdict-accuracy.sh: --repeat needs R or MIN:MAX" >&2; exit 2
fi
[ -x "$schedlab" ] || { echo "verdict-accuracy.sh: build '$schedlab' first (make)" >&2; exit 2; }
work=${out:-$(mktemp -d "${TMPDIR:-/tmp}/schedlab-accuracy.XXXXXX")}
mkdir -p "$work"
hogs=()
cleanup() {
	local p
	for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -n "$out" ] || rm -rf "$work"
}
trap cleanup EXIT

job() { # job NAME CANDIDATE-FEATURES-JSON
	cat <<JSON
{
  "name": "$1",
  "kernels": {"sched": {"source": "debian:linux-source-6.1", "patches": [{"series": "linux-6.1"}],
                        "config": {"builtin": "linux-6.1"}}},
  "guest": {"vcpus": 2, "memory_mb": 512},
  "variants": {
    "baseline": {"kernel": "sched", "features": ["RT_PUSH", "RT_WAKEUP_PLACE"]},
    "candidate": {"kernel": "sched", "features": $2}
  },
  "baseline": "baseline",
  "workloads": [
    {"name": "rtm", "tool": "rt-migrate-test", "maxerr_us": 18000, "args": ["-p", "60", "-l", "30", "3"], "timeout_s": 120},
    {"name": "ct", "tool": "cyclictest", "args": ["-t1", "-p90", "-i1000", "-l2000", "-q", "-h", "20000"], "timeout_s": 90}
  ],
  "repeat": $repeat_json,
  "gates": [{"workload": "rtm", "metric": "inversions"}, {"workload": "ct", "metric": "latency_us.avg"}]
}
JSON
}

for ((i = 0; i < hog; i++)); do
	( while :; do :; done ) &
	hogs+=($!)
done
load_before=$(cut -d' ' -f1 /proc/loadavg)
start=$(date +%s)
for kind in aa planted; do
	for ((i = 1; i <= k; i++)); do
		name=$kind-$i
		if [ "$kind" = aa ]; then
			job "$name" '["RT_PUSH", "RT_WAKEUP_PLACE"]' >"$work/$name.json"
		else
			job "$name" '["NO_RT_PUSH", "NO_RT_WAKEUP_PLACE"]' >"$work/$name.json"
		fi
		echo "[$(($(date +%s) - start))s] $name" >&2
		"$schedlab" run "$work/$name.json" -o "$work/$name.result.json" \
			--job-dir "$work/$name.job" >"$work/$name.log" 2>&1 || true
	done
done
load_after=$(cut -d' ' -f1 /proc/loadavg)

python3 - "$work" "$k" "$repeat" "$hog" "$load_before" "$load_after" "$(nproc)" <<'PY'
import collections, json, os, sys
work, k, repeat, hog, lb, la, cores = sys.argv[1:8]
rows = collections.defaultdict(collections.Counter)
jobs = collections.Counter()
for kind in ("aa", "planted"):
    for i in range(1, int(k) + 1):
        path = os.path.join(work, f"{kind}-{i}.result.json")
        if not os.path.exists(path):
            jobs[(kind, "no result")] += 1
            continue
        r = json.load(open(path))
        jobs[(kind, r["verdict"])] += 1
        for c in r["comparisons"]:
            if c["gated"]:
                rows[(kind, c["metric"])][c["verdict"]] += 1
print(f"verdict accuracy: {k} jobs of each kind, repeat {repeat}, {hog} host hog(s), "
      f"load {lb} before / {la} after on {cores} cores")
print(f"{'jobs':8} {'metric':16} {'improved':>9} {'regressed':>10} {'unchanged':>10} {'inconcl.':>9}")
for (kind, metric), c in sorted(rows.items()):
    print(f"{kind:8} {metric:16} {c['improved']:9} {c['regressed']:10} {c['unchanged']:10} {c['inconclusive']:9}")
for kind in ("aa", "planted"):
    counts = {v: n for (kd, v), n in jobs.items() if kd == kind}
    print(f"{kind} job verdicts: {counts}")
aa_fp = {m: (c["improved"] + c["regressed"]) / max(1, sum(c.values()))
         for (kd, m), c in rows.items() if kd == "aa"}
print("A/A false-positive rate per gated metric: " +
      ", ".join(f"{m} {100 * v:.0f} %" for m, v in sorted(aa_fp.items())))
planted_pass = sum(n for (kd, v), n in jobs.items() if kd == "planted" and v == "pass")
print(f"planted regressions that passed: {planted_pass} of {k}")
PY
