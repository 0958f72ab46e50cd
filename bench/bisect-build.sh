#!/usr/bin/env bash
# Builds for many prefixes: builds every prefix of a
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
#   --slots LIST  build slots, comma separated (default 1): for each, the 16
#               prefixes are built that many at a time (`kernel build
#               --build-slots N`, each build in its own work area of the
#               tree), with a fresh token so every pass builds; "1,2" gives
#               both side by side in one run, and their ratio
# The patches carry a fresh token each run, so every prefix is a real build
# and never a cache hit. Patch k adds a comment to one of eight files of
# kernel/sched (each file twice, in turn), so a prefix differs from the one
# before in one file. Takes about 16 x (one incremental build) plus the
# base tree's setup when the cache is cold.
# Usage: bench/bisect-build.sh [--load] [--cache-dir DIR] [--jobs N] [--slots LIST]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
schedlab=${SCHEDLAB:-$root/build/schedlab}
cache=${SCHEDLAB_CACHE:-$HOME/.cache/schedlab} load=0 jobs=() slots_list=1
while [ $# -gt 0 ]; do
	case "$1" in
	--cache-dir) cache=$2; shift 2 ;;
	--load) load=1; shift ;;
	--jobs) jobs=(--jobs "$2"); shift 2 ;;
	--slots) slots_list=$2; shift 2 ;;
	-h|--help) sed -n '2,23p' "$0"; exit 0 ;;
	*) echo "bisect-build.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[[ "$slots_list" =~ ^[1-8](,[1-8])*$ ]] || { echo "bisect-build.sh: --slots needs counts 1..8, comma separated" >&2; exit 2; }
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

# make_series DIR: 16 patches in DIR, a fresh token
make_series() {
	local d=$1 token f k
	token=$(date +%s%N)
	rm -rf "$d" && mkdir -p "$d/cur/kernel/sched"
	for f in "${files[@]}"; do cp "$src/kernel/sched/$f" "$d/cur/kernel/sched/$f"; done
	for k in $(seq 1 16); do
		f=${files[$(((k - 1) % ${#files[@]}))]}
		rm -rf "$d/a" "$d/b"
		mkdir -p "$d/a/kernel/sched" "$d/b/kernel/sched"
		cp "$d/cur/kernel/sched/$f" "$d/a/kernel/sched/$f"
		{ echo "/* schedlab bench bisect-build $token: change $k */"; cat "$d/a/kernel/sched/$f"; } \
			>"$d/b/kernel/sched/$f"
		(cd "$d" && diff -u "a/kernel/sched/$f" "b/kernel/sched/$f" >"$d/$(printf '%02d' "$k").patch" || true)
		cp "$d/b/kernel/sched/$f" "$d/cur/kernel/sched/$f"
	done
}

# prefix_spec DIR K: the spec of prefix K in DIR/prefix-K.json
prefix_spec() {
	local patches
	patches=$(for i in $(seq 1 "$2"); do printf '%s\n' "$1/$(printf '%02d' "$i").patch"; done | jq -R . | jq -s .)
	jq -n --arg s "$kdir/series" --argjson p "$patches" --arg c "$kdir/schedlab.config" \
		'{source: "debian:linux-source-6.1", series: $s, patches: $p, config: $c}' >"$1/prefix-$2.json"
	keys+=("$("$schedlab" kernel key "$1/prefix-$2.json" --cache-dir "$cache")")
}

if [ "$load" = 1 ]; then
	for _ in $(seq 1 $((2 * $(nproc)))); do
		(while :; do :; done) &
		busy+=($!)
	done
fi
echo "host: $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)$([ "$load" = 1 ] && echo "; plus $((2 * $(nproc))) busy loops")"
IFS=, read -r -a slot_passes <<<"$slots_list"
declare -A pass_total
for slots in "${slot_passes[@]}"; do
	d=$work/slots-$slots
	make_series "$d"
	for k in $(seq 1 16); do prefix_spec "$d" "$k"; done
	echo "-- $slots build slot(s): the 16 prefixes, $slots at a time (load $(cut -d' ' -f1 /proc/loadavg))"
	total=0
	for first in $(seq 1 "$slots" 16); do
		last=$((first + slots - 1 > 16 ? 16 : first + slots - 1))
		t=$(now)
		pids=()
		for k in $(seq "$first" "$last"); do
			"$schedlab" kernel build "$d/prefix-$k.json" --cache-dir "$cache" "${jobs[@]}" \
				--build-slots "$slots" --quiet >"$d/out-$k.txt" 2>"$d/err-$k.txt" &
			pids+=($!)
		done
		for p in "${pids[@]}"; do wait "$p" || { echo "a build of prefixes $first-$last failed: $(tail -3 "$d"/err-*.txt)" >&2; exit 1; }; done
		s=$(echo "$(now) - $t" | bc)
		total=$(echo "$total + $s" | bc)
		for k in $(seq "$first" "$last"); do
			grep -q '^cached: no' "$d/out-$k.txt" || { echo "prefix $k was a cache hit?" >&2; exit 1; }
			key=$("$schedlab" kernel key "$d/prefix-$k.json" --cache-dir "$cache")
			log=$cache/kernels/$key/build.log
			area=$(sed -n 's/^schedlab: work area \([0-9]*\) of.*/ area \1/p' "$log" | head -1)
			steps=$(grep -o 'steps: .*' "$log" 2>/dev/null | tail -1)
			secs=$(jq -r .build_seconds "$cache/kernels/$key/meta.json")
			printf 'prefix %2d (+%-12s):%s %7.1f s of its own  %s\n' "$k" \
				"${files[$(((k - 1) % ${#files[@]}))]}" "$area" "$secs" "$steps"
		done
		[ "$slots" = 1 ] || printf '  prefixes %d-%d at once: %.1f s wall\n' "$first" "$last" "$s"
	done
	pass_total[$slots]=$total
	printf 'all 16 prefixes, %d slot(s): %7.1f s wall (%.1f s per prefix)\n' "$slots" "$total" "$(echo "$total / 16" | bc -l)"
done
if [ "${#slot_passes[@]}" -gt 1 ]; then
	b=${slot_passes[0]}
	for slots in "${slot_passes[@]:1}"; do
		printf '%d slots / %d: %.2f of the wall time\n' "$slots" "$b" "$(echo "${pass_total[$slots]} / ${pass_total[$b]}" | bc -l)"
	done
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
