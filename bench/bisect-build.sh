#!/usr/bin/env bash
# Builds for many prefixes (issue 18 item 4): builds every prefix of a
# 16-patch series of small scheduler changes, the way a bisection or a
# per-patch attribution does (prefix k = the built-in base plus the first k
# patches, a new kernel each), through the real CLI, and prints the time of
# each prefix (and where it went: the build log's patches, configuration
# and make times) and in all, with the host load before and after.
#   --load      also run two busy loops per core while building (the
#               "busy host" figure); without it the host is as it is
#   --cache-dir DIR   the kernel cache (default: schedlab's own, so the base
#               tree is warm; the 16 kernels are removed again at the end)
#   --jobs N    make -jN
# The patches carry a fresh token each run, so every prefix is a real build
# and never a cache hit. Patch k adds a comment to one of eight files of
# kernel/sched (each file twice, in turn), so a prefix differs from the one
# before in one file. Takes about 16 x (one incremental build) plus the
# base tree's setup when the cache is cold.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
schedlab=${SCHEDLAB:-$root/build/schedlab}
cache=${SCHEDLAB_CACHE:-$HOME/.cache/schedlab} load=0 jobs=()
while [ $# -gt 0 ]; do
	case "$1" in
	--cache-dir) cache=$2; shift 2 ;;
	--load) load=1; shift ;;
	--jobs) jobs=(--jobs "$2"); shift 2 ;;
	-h|--help) sed -n '2,17p' "$0"; exit 0 ;;
	*) echo "bisect-build.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -x "$schedlab" ] || { echo "bisect-build.sh: build '$schedlab' first (make)" >&2; exit 2; }
command -v jq >/dev/null || { echo "bisect-build.sh: needs jq" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-bisect-bench.XXXXXX")
busy=()
keys=()
cleanup() {
	for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
	for k in "${keys[@]}"; do rm -rf "${cache:?}/kernels/$k"; done
	rm -rf "$work"
}
trap cleanup EXIT
kdir=$root/guest-kernel/linux-6.1
now() { date +%s.%N; }

# the base first: it makes sure the tree exists and is the series' base
"$schedlab" kernel build "$kdir/kernel.json" --cache-dir "$cache" "${jobs[@]}" --quiet >/dev/null
src=
for d in "$cache"/trees/*/src; do # the 6.1 tree (another base or a git tree may be cached too)
	if grep -q '^VERSION = 6$' "$d/Makefile" 2>/dev/null && grep -q '^PATCHLEVEL = 1$' "$d/Makefile"; then
		src=$d
		break
	fi
done
[ -n "$src" ] && [ -f "$src/kernel/sched/rt.c" ] || { echo "bisect-build.sh: no 6.1 tree in $cache" >&2; exit 1; }

files=(rt.c fair.c core.c deadline.c cpupri.c topology.c idle.c pelt.c)
token=$(date +%s%N)
mkdir -p "$work/cur/kernel/sched"
for f in "${files[@]}"; do cp "$src/kernel/sched/$f" "$work/cur/kernel/sched/$f"; done
for k in $(seq 1 16); do
	f=${files[$(((k - 1) % ${#files[@]}))]}
	rm -rf "$work/a" "$work/b"
	mkdir -p "$work/a/kernel/sched" "$work/b/kernel/sched"
	cp "$work/cur/kernel/sched/$f" "$work/a/kernel/sched/$f"
	{ echo "/* schedlab bench bisect-build $token: change $k */"; cat "$work/a/kernel/sched/$f"; } \
		>"$work/b/kernel/sched/$f"
	(cd "$work" && diff -u "a/kernel/sched/$f" "b/kernel/sched/$f" >"$work/$(printf '%02d' "$k").patch" || true)
	cp "$work/b/kernel/sched/$f" "$work/cur/kernel/sched/$f"
done

if [ "$load" = 1 ]; then
	for _ in $(seq 1 $((2 * $(nproc)))); do
		(while :; do :; done) &
		busy+=($!)
	done
fi
echo "host: $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)$([ "$load" = 1 ] && echo "; plus $((2 * $(nproc))) busy loops")"
total=0
for k in $(seq 1 16); do
	patches=$(for i in $(seq 1 "$k"); do printf '%s\n' "$work/$(printf '%02d' "$i").patch"; done | jq -R . | jq -s .)
	jq -n --arg s "$kdir/series" --argjson p "$patches" --arg c "$kdir/schedlab.config" \
		'{source: "debian:linux-source-6.1", series: $s, patches: $p, config: $c}' >"$work/prefix.json"
	keys+=("$("$schedlab" kernel key "$work/prefix.json" --cache-dir "$cache")")
	t=$(now)
	"$schedlab" kernel build "$work/prefix.json" --cache-dir "$cache" "${jobs[@]}" --quiet >"$work/out.txt"
	s=$(echo "$(now) - $t" | bc)
	grep -q '^cached: no' "$work/out.txt" || { echo "prefix $k was a cache hit?" >&2; exit 1; }
	total=$(echo "$total + $s" | bc)
	steps=$(grep -o 'steps: .*' "$cache/kernels/${keys[-1]}/build.log" 2>/dev/null | tail -1)
	printf 'prefix %2d (+%-12s): %7.1f s  %s\n' "$k" "${files[$(((k - 1) % ${#files[@]}))]}" "$s" "$steps"
done
printf 'all 16 prefixes:           %7.1f s (%.1f s per prefix)\n' "$total" "$(echo "$total / 16" | bc -l)"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
