#!/usr/bin/env bash
# Kernel build timings through the real CLI: a cold build (fresh cache dir,
# cold ccache), a warm cache hit, and a rebuild after a one-line change to
# kernel/sched/rt.c (the series plus one extra patch: the tree and its objects
# are reused, only the scheduler is recompiled). Prints the three times.
# Usage: bench/kernel-build.sh [--cache-dir DIR] [--keep] [--jobs N]
# Takes about 10-15 min on 2 cores. The cache dir is removed unless --keep.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
schedlab=${SCHEDLAB:-$root/build/schedlab}
cache="" keep=0 jobs=()
while [ $# -gt 0 ]; do
	case "$1" in
	--cache-dir) cache=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--jobs) jobs=(--jobs "$2"); shift 2 ;;
	-h|--help) sed -n '2,8p' "$0"; exit 0 ;;
	*) echo "kernel-build.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -x "$schedlab" ] || { echo "kernel-build.sh: build '$schedlab' first (make)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-bench.XXXXXX")
[ -n "$cache" ] || cache=$work/cache
cleanup() { rm -rf "$work"; [ "$keep" -eq 1 ] || rm -rf "$cache"; }
trap cleanup EXIT
spec=$root/guest-kernel/linux-6.1/kernel.json

now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc; }

t=$(now)
"$schedlab" kernel build "$spec" --cache-dir "$cache" "${jobs[@]}" --quiet >"$work/cold.txt"
cold=$(elapsed "$t")
grep -q '^cached: no' "$work/cold.txt" || { echo "cold build was a cache hit?" >&2; exit 1; }

t=$(now)
"$schedlab" kernel build "$spec" --cache-dir "$cache" --quiet >"$work/warm.txt"
warm=$(elapsed "$t")
grep -q '^cached: yes' "$work/warm.txt" || { echo "second build was not a cache hit" >&2; exit 1; }

# a one-line change to kernel/sched/rt.c, as a patch on top of the series
src=$(ls -d "$cache"/trees/*/src | head -n 1)
mkdir -p "$work/a/kernel/sched" "$work/b/kernel/sched"
cp "$src/kernel/sched/rt.c" "$work/a/kernel/sched/rt.c"
sed '0,/^#include/s//\/* schedlab bench: a one-line change *\/\n#include/' \
	"$work/a/kernel/sched/rt.c" >"$work/b/kernel/sched/rt.c"
(cd "$work" && diff -u a/kernel/sched/rt.c b/kernel/sched/rt.c >"$work/touch-rt.patch" || true)
kdir=$root/guest-kernel/linux-6.1
jq -n --arg s "$kdir/series" --arg p "$work/touch-rt.patch" --arg c "$kdir/schedlab.config" \
	'{source: "debian:linux-source-6.1", series: $s, patches: [$p], config: $c}' >"$work/touch.json"
t=$(now)
"$schedlab" kernel build "$work/touch.json" --cache-dir "$cache" "${jobs[@]}" --quiet >"$work/touch.txt"
touch_s=$(elapsed "$t")
grep -q '^cached: no' "$work/touch.txt" || { echo "the touched kernel was a cache hit?" >&2; exit 1; }

printf 'cold build:               %7.1f s\n' "$cold"
printf 'warm cache hit:           %7.3f s\n' "$warm"
printf 'rebuild after rt.c touch: %7.1f s\n' "$touch_s"
