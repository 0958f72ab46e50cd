#!/usr/bin/env bash
# The decision rule's error rates on real guest runs, by resampling: pools the
# runs that bench/verdict-accuracy.sh stored in DIR (one host load pass) and
# replays N simulated A/A and planted jobs through schedlab's own comparison
# and adaptive-repeat stopping rule (bench/verdict_resample.c), printing the
# false-positive and detection rates with 95 % Clopper-Pearson bounds. Real
# jobs take minutes, so their rates are known only roughly; this measures the
# rule on the same real values, assuming runs are exchangeable (no drift
# between jobs). docs/statistics.md quotes both.
#
# Usage: bench/verdict-resample.sh [--jobs N] [--seed S] [--hogs H] --out DIR
#   --jobs N   simulated jobs of each kind (default 2000; 35-45 ms a look on this 2-core host)
#   --seed S   the random seed (default 1)
#   --hogs H   which pass of DIR: the busy loops beside its jobs (default 0)
#   --out DIR  the directory bench/verdict-accuracy.sh --out DIR filled
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
args=() out=""
while [ $# -gt 0 ]; do
	case "$1" in
	--jobs | --seed | --hogs) args+=("$1" "$2"); shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '2,15p' "$0"; exit 0 ;;
	*) echo "verdict-resample.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$out" ] || { echo "verdict-resample.sh: --out DIR is needed (bench/verdict-accuracy.sh --out DIR fills it)" >&2; exit 2; }
[ -d "$out" ] || { echo "verdict-resample.sh: '$out' is not a directory" >&2; exit 2; }
bin=$root/build/bench/verdict_resample
make -s -C "$root" build/bench/verdict_resample >&2
echo "host load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
"$bin" "${args[@]}" "$out"
