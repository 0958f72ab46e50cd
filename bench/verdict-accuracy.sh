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
#   --aa-jobs K A/A jobs per load, when not K (0: planted jobs only, to add a
#               second planted regression's runs beside an earlier pass's A/A)
#   --repeat    repeats per variant, or MIN:MAX for adaptive repeats (default 4)
#   --hogs LIST busy loops on the host beside the jobs, one pass per item,
#               comma separated (default "0,2xcores": quiet, then 2 per core,
#               the "loaded" case of docs/statistics.md); --hog N = --hogs N
#   --planted   the planted patch under tests/planted/ (default rt-placement)
#   --suite     the workloads and default gates (default rt)
#   --out DIR   keep every job and result in DIR (default: a temp dir, removed).
#               A DIR that already holds results is added to: the new jobs are
#               numbered after the old ones and the table counts them all, so
#               a rate can be gathered over several sessions (same --repeat,
#               --planted and --suite; the table says if they differ)
#   --summary   print the table of --out DIR and run nothing
# Needs the base and planted kernels in the cache (make check builds them);
# starts virtlogd and libvirtd when they are not running (and stops them after);
# each job boots 2 x R TCG guests (about 30 s each here).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
schedlab=${SCHEDLAB:-$root/build/schedlab}
k=5 aa_k='' repeat=4 hogs="0,$((2 * $(nproc)))" out="" planted=rt-placement suite=rt summary=0
while [ $# -gt 0 ]; do
	case "$1" in
	-k) k=$2; shift 2 ;;
	--aa-jobs) aa_k=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--hog | --hogs) hogs=$2; shift 2 ;;
	--planted) planted=$2; shift 2 ;;
	--suite) suite=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--summary) summary=1; shift ;;
	-h|--help) sed -n '2,32p' "$0"; exit 0 ;;
	*) echo "verdict-accuracy.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[[ "$k" =~ ^[0-9]+$ && "$k" -ge 1 ]] || { echo "verdict-accuracy.sh: -k needs a positive integer" >&2; exit 2; }
aa_k=${aa_k:-$k}
[[ "$aa_k" =~ ^[0-9]+$ ]] || { echo "verdict-accuracy.sh: --aa-jobs needs a count" >&2; exit 2; }
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
[ "$summary" = 0 ] || [ -n "$out" ] || { echo "verdict-accuracy.sh: --summary needs --out DIR" >&2; exit 2; }
[ -x "$schedlab" ] || { echo "verdict-accuracy.sh: build '$schedlab' first (make)" >&2; exit 2; }
work=${out:-$(mktemp -d "${TMPDIR:-/tmp}/schedlab-accuracy.XXXXXX")}
mkdir -p "$work"
source "$root/tests/lib/libvirt-daemons.sh"
cleanup() {
	stop_hogs
	libvirt_daemons_stop
	[ -n "$out" ] || rm -rf "$work"
}
trap cleanup EXIT
[ "$summary" = 1 ] || libvirt_daemons_start

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
touch "$work/loads"
[ "$summary" = 1 ] && hog_list=()
for hog in "${hog_list[@]}"; do
	for ((i = 0; i < hog; i++)); do
		( while :; do :; done ) &
		hogs_pids+=($!)
	done
	sleep $((hog > 0 ? 20 : 0)) # let the load average rise
	load_before=$(cut -d' ' -f1 /proc/loadavg)
	for kind in aa planted; do
		# after the jobs an earlier pass left in --out DIR
		first=1
		while [ -e "$work/$kind-$first-hog$hog.json" ]; do first=$((first + 1)); done
		n=$k
		[ "$kind" = planted ] || n=$aa_k
		for ((i = first; i < first + n; i++)); do
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
	echo "$hog $load_before $(cut -d' ' -f1 /proc/loadavg) $(date -u +%Y-%m-%dT%H:%MZ) $repeat $planted $suite" >>"$work/loads"
	stop_hogs
done

python3 - "$work" "$(nproc)" <<'PY'
import collections, glob, json, os, re, sys
work, cores = sys.argv[1:3]
passes = collections.defaultdict(list)  # hog -> [(load before, after, when, repeat, planted, suite)]
for line in open(os.path.join(work, "loads")):
    f = line.split()
    if len(f) >= 3:
        passes[f[0]].append(f[1:])
for hog in sorted(passes, key=int):
    rows = collections.defaultdict(collections.Counter)
    jobs = collections.Counter()
    n = collections.Counter()
    for kind in ("aa", "planted"):
        for path in sorted(glob.glob(os.path.join(work, f"{kind}-*-hog{hog}.json"))):
            if not re.fullmatch(rf"{kind}-[0-9]+-hog{hog}\.json", os.path.basename(path)):
                continue
            n[kind] += 1
            res = path[:-len(".json")] + ".result.json"
            if not os.path.exists(res):
                jobs[(kind, "no result")] += 1
                continue
            r = json.load(open(res))
            jobs[(kind, r["verdict"])] += 1
            for c in r["comparisons"]:
                if c["gated"]:
                    rows[(kind, c["metric"])][c["verdict"]] += 1
    p = passes[hog]
    loads = [float(x) for q in p for x in q[:2]]
    settings = sorted({" ".join(q[3:6]) for q in p if len(q) >= 6})
    print(f"\nverdict accuracy: {n['aa']} A/A and {n['planted']} planted jobs, {hog} host hog(s), "
          f"{len(p)} pass(es) ({', '.join(q[2] for q in p if len(q) >= 3)}), "
          f"load {min(loads):.2f} to {max(loads):.2f} on {cores} cores")
    print("settings (repeat, planted, suite): " + ("; ".join(settings) or "not recorded")
          + ("  ** the passes differ **" if len(settings) > 1 else ""))
    print(f"{'jobs':8} {'metric':16} {'improved':>9} {'regressed':>10} {'unchanged':>10} {'inconcl.':>9}")
    for (kind, metric), c in sorted(rows.items()):
        print(f"{kind:8} {metric:16} {c['improved']:9} {c['regressed']:10} {c['unchanged']:10} {c['inconclusive']:9}")
    for kind in ("aa", "planted"):
        counts = {v: m for (kd, v), m in jobs.items() if kd == kind}
        print(f"{kind} job verdicts: {counts}")
    aa_fp = {m: ((c["improved"] + c["regressed"]), sum(c.values()))
             for (kd, m), c in rows.items() if kd == "aa"}
    print("A/A false-positive rate per gated metric: " +
          ", ".join(f"{m} {a}/{t} ({100 * a / max(1, t):.0f} %"
                    + (f"; at most {100 * (1 - 0.05 ** (1 / t)):.0f} %, one-sided 95 %" if a == 0 and t else "")
                    + ")" for m, (a, t) in sorted(aa_fp.items())))
    fail, inc, passed = jobs[("planted", "fail")], jobs[("planted", "inconclusive")], jobs[("planted", "pass")]
    print(f"planted detection: {fail} of {n['planted']} fail, {inc} inconclusive, {passed} pass "
          f"(detected or flagged: {100 * (fail + inc) / max(1, n['planted']):.0f} %)")
PY
