#!/usr/bin/env bash
# schedlab's decision rule against the peers' rules on the same real runs:
# pools the runs that bench/verdict-accuracy.sh stored in DIR (one host load
# pass) and replays N simulated A/A and planted jobs through schedlab's rule
# (5 a side, and adaptive as `schedlab test` runs it) and through lkp-tests',
# mmtests', Pinpoint's, PerfCompare's and Firecracker's rules
# (service/compare/peer_rules.h), all on the same drawn runs
# (bench/verdict_peers.c). Prints per rule and gated metric the false-change
# rate (A/A) and the detection rate (planted) with 95 % Clopper-Pearson
# intervals, the mean runs a side and the undecided share; then the power
# table: A/A jobs with the candidate shifted 5 to 50 % toward worse, the
# share detected and the share called unchanged ("false pass"), and the
# smallest shift detected in 80 % of jobs. docs/statistics.md quotes it.
#
# Usage: bench/verdict-peers.sh [--jobs N] [--seed S] [--hogs H] [--workload W]
#                               [--adaptive MIN:MAX] [--shifts LIST]
#                               [--planted-dir D] --out DIR
#   --jobs N      simulated jobs of each kind (default 300)
#   --workload W  only workload W and its gates, as `--suite latency` (cyclictest)
#                 or `--suite rt` (rt-migrate-test) would run (default: all)
#   --adaptive    schedlab's adaptive repeats (default 5:20, `schedlab test`'s)
#   --shifts LIST power shifts in percent (default 5,10,15,20,30,50; none)
#   --planted-dir the planted jobs' directory, when not DIR
#   --hogs, --seed, --out as bench/verdict-resample.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
args=() out=""
while [ $# -gt 0 ]; do
	case "$1" in
	--jobs | --seed | --hogs | --workload | --adaptive | --shifts | --planted-dir)
		[ $# -ge 2 ] || { echo "verdict-peers.sh: $1 needs a value" >&2; exit 2; }
		args+=("$1" "$2"); shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '2,24p' "$0"; exit 0 ;;
	*) echo "verdict-peers.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$out" ] || { echo "verdict-peers.sh: --out DIR is needed (bench/verdict-accuracy.sh --out DIR fills it)" >&2; exit 2; }
[ -d "$out" ] || { echo "verdict-peers.sh: '$out' is not a directory" >&2; exit 2; }
make -s -C "$root" build/bench/verdict_peers >&2
echo "host load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ)"
"$root/build/bench/verdict_peers" "${args[@]}" "$out"
echo "host load after: $(cut -d' ' -f1-3 /proc/loadavg)"
