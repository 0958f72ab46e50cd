#!/usr/bin/env bash
# How often does schedlab cry wolf, and how often does it miss? Runs K A/A
# jobs (the built-in base kernel against itself: the CI shorthand with no
# patches, so both variants boot one kernel) and K jobs with a planted
# regression (the base against base + tests/planted/NAME.patch, as `schedlab
# test` builds them), both with the same suite and its default gates, at each
# host load asked for (a quiet host, then N busy loops beside the jobs), and
# prints per load and gated metric the false-positive rate (A/A comparisons
# called improved or regressed), the inconclusive rate, and the detection
# rate (planted jobs that fail, or are inconclusive; never pass), with the
# host's load average before and after.
#
# Usage: bench/verdict-accuracy.sh [-k K] [--repeat R|MIN:MAX] [--hogs LIST]
#                                  [--planted NAME] [--suite S] [--out DIR]
#   -k K        jobs of each kind per load (default 5)
#   --repeat    repeats per variant, or MIN:MAX for adaptive repeats (default 4)
#   --hogs LIST busy loops on the host beside the jobs, one pass per item,
#               comma separated (default "0,2xcores": quiet, then 2 per core,
#               the "loaded" case of docs/statistics.md); --hog N = --hogs N
#   --planted   the planted patch under tests/planted/ (default rt-placement)
#   --suite     the workloads and default gates (default rt)
#   --out DIR   keep every job and result in DIR (default: a temp dir, removed)
# Needs the base and planted kernels in the cache (make check builds them);
# each job boots 2 x R TCG guests (about 30 s each here).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
schedlab=${SCHEDLAB:-$root/build/schedlab}
k=5 repeat=4 hogs="0,$((2 * $(nproc)))" out="" planted=rt-placement suite=rt
while [ $# -gt 0 ]; do
	case "$1" in
	-k) k=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--hog | --hogs) hogs=$2; shift 2 ;;
	--planted) planted=$2; shift 2 ;;
	--suite) suite=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) sed -n '2,24p' "$0"; exit 0 ;;
	*) echo "verdict-accuracy.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[[ "$k" =~ ^[0-9]+$ && "$k" -ge 1 ]] || { echo "verdict-accuracy.sh: -k needs a positive integer" >&2; exit 2; }
[[ "$hogs" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "verdict-accuracy.sh: --hogs needs counts, comma separated" >&2; exit 2; }
[[ "$planted" =~ ^[a-z0-9-]+$ && -f "$root/tests/planted/$planted.patch" ]] || { echo "verdict-accuracy.sh: no planted patch '$planted'" >&2; exit 2; }
[[ "$suite" =~ ^(rt|latency|fair|all)$ ]] || { echo "verdict-accuracy.sh: --suite must be rt, latency, fair or all" >&2; exit 2; }
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
cleanup() {
	stop_hogs
	[ -n "$out" ] || rm -rf "$work"
}
trap cleanup EXIT

job() { # job NAME PATCHES-JSON
	cat <<JSON
{
  "name": "$1",
  "base": {"source": "debian:linux-source-6.1", "patches": [{"series": "linux-6.1"}],
           "config": {"builtin": "linux-6.1"}},
  "patches": $2,
  "suite": "$suite",
  "repeat": $repeat_json
}
JSON
}

stop_hogs() {
	local p
	for p in "${hogs_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	hogs_pids=()
}
hogs_pids=()
start=$(date +%s)
IFS=, read -r -a hog_list <<<"$hogs"
: >"$work/loads"
for hog in "${hog_list[@]}"; do
	for ((i = 0; i < hog; i++)); do
		( while :; do :; done ) &
		hogs_pids+=($!)
	done
	sleep $((hog > 0 ? 20 : 0)) # let the load average rise
	load_before=$(cut -d' ' -f1 /proc/loadavg)
	for kind in aa planted; do
		for ((i = 1; i <= k; i++)); do
			name=$kind-$i-hog$hog
			if [ "$kind" = aa ]; then
				job "$name" '[]' >"$work/$name.json"
			else
				job "$name" "[{\"path\": \"$root/tests/planted/$planted.patch\"}]" >"$work/$name.json"
			fi
			echo "[$(($(date +%s) - start))s] $name (load $(cut -d' ' -f1 /proc/loadavg))" >&2
			"$schedlab" run "$work/$name.json" -o "$work/$name.result.json" \
				--job-dir "$work/$name.job" >"$work/$name.log" 2>&1 || true
		done
	done
	echo "$hog $load_before $(cut -d' ' -f1 /proc/loadavg)" >>"$work/loads"
	stop_hogs
done

python3 - "$work" "$k" "$repeat" "$(nproc)" "$planted" "$suite" <<'PY'
import collections, json, os, sys
work, k, repeat, cores, planted, suite = sys.argv[1:7]
for line in open(os.path.join(work, "loads")):
    hog, lb, la = line.split()
    rows = collections.defaultdict(collections.Counter)
    jobs = collections.Counter()
    for kind in ("aa", "planted"):
        for i in range(1, int(k) + 1):
            path = os.path.join(work, f"{kind}-{i}-hog{hog}.result.json")
            if not os.path.exists(path):
                jobs[(kind, "no result")] += 1
                continue
            r = json.load(open(path))
            jobs[(kind, r["verdict"])] += 1
            for c in r["comparisons"]:
                if c["gated"]:
                    rows[(kind, c["metric"])][c["verdict"]] += 1
    print(f"\nverdict accuracy: {k} jobs of each kind, suite {suite}, planted {planted}, "
          f"repeat {repeat}, {hog} host hog(s), load {lb} before / {la} after on {cores} cores")
    print(f"{'jobs':8} {'metric':16} {'improved':>9} {'regressed':>10} {'unchanged':>10} {'inconcl.':>9}")
    for (kind, metric), c in sorted(rows.items()):
        print(f"{kind:8} {metric:16} {c['improved']:9} {c['regressed']:10} {c['unchanged']:10} {c['inconclusive']:9}")
    for kind in ("aa", "planted"):
        counts = {v: n for (kd, v), n in jobs.items() if kd == kind}
        print(f"{kind} job verdicts: {counts}")
    aa_fp = {m: ((c["improved"] + c["regressed"]), sum(c.values()))
             for (kd, m), c in rows.items() if kd == "aa"}
    print("A/A false-positive rate per gated metric: " +
          ", ".join(f"{m} {a}/{n} ({100 * a / max(1, n):.0f} %)" for m, (a, n) in sorted(aa_fp.items())))
    fail = jobs[("planted", "fail")]
    inc = jobs[("planted", "inconclusive")]
    passed = jobs[("planted", "pass")]
    print(f"planted detection: {fail} of {k} fail, {inc} inconclusive, {passed} pass "
          f"(detected or flagged: {100 * (fail + inc) / int(k):.0f} %)")
PY
