#!/usr/bin/env bash
# What an untrusted build's own object directory costs (docs/kernel-builds.md
# "Untrusted builds"): rebuilds after a one-line change to kernel/sched/rt.c
# (the built-in series plus one patch, a new comment each time so the key is
# new), alternating trusted (make in the tree's obj/) and untrusted
# ("untrusted": true: make in a copy of obj/), PAIRS times each. Prints each
# build's time, the copy's time from the build log, the load, and the ratio
# of the medians. Uses the cache as it is (warm: the base built), default
# $SCHEDLAB_CACHE or ~/.cache/schedlab.
# Usage: bench/untrusted-build.sh [--cache-dir DIR] [--pairs N (default 2)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
schedlab=${SCHEDLAB:-$root/build/schedlab}
cache=${SCHEDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab} pairs=2
while [ $# -gt 0 ]; do
	case "$1" in
	--cache-dir) cache=$2; shift 2 ;;
	--pairs) pairs=$2; shift 2 ;;
	-h | --help) sed -n '2,10p' "$0"; exit 0 ;;
	*) echo "untrusted-build.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[[ "$pairs" =~ ^[1-9]$ ]] || { echo "pairs: 1..9" >&2; exit 2; }
[ -x "$schedlab" ] || { echo "untrusted-build.sh: build '$schedlab' first (make)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
kdir=$root/guest-kernel/linux-6.1
"$schedlab" kernel build "$kdir/kernel.json" --cache-dir "$cache" --quiet >/dev/null
src=$(ls -d "$cache"/trees/*/src | head -n 1)
for d in "$cache"/trees/*/src; do
	grep -q '^PATCHLEVEL = 1$' "$d/Makefile" 2>/dev/null && src=$d && break
done
mkdir -p "$work/a/kernel/sched" "$work/b/kernel/sched"
cp "$src/kernel/sched/rt.c" "$work/a/kernel/sched/rt.c"

# build N KIND: one rebuild; prints "KIND SECONDS COPY_S LOAD"
build() {
	local n=$1 kind=$2 t0 t1 key
	sed "0,/^#include/s//\/* schedlab bench $$ $n $(date +%s%N) *\/\n#include/" \
		"$work/a/kernel/sched/rt.c" >"$work/b/kernel/sched/rt.c"
	(cd "$work" && diff -u a/kernel/sched/rt.c b/kernel/sched/rt.c >"$work/p$n.patch" || true)
	jq -n --arg s "$kdir/series" --arg p "$work/p$n.patch" --arg c "$kdir/schedlab.config" \
		--argjson u "$([ "$kind" = untrusted ] && echo true || echo false)" \
		'{source: "debian:linux-source-6.1", series: $s, patches: [$p], config: $c,
		  untrusted: $u}' >"$work/s$n.json"
	t0=$(date +%s.%N)
	"$schedlab" kernel build "$work/s$n.json" --cache-dir "$cache" --quiet >"$work/o$n.txt"
	t1=$(date +%s.%N)
	key=$("$schedlab" kernel key "$work/s$n.json" --cache-dir "$cache")
	copy=$(sed -n 's/.*copied the object directory in \([0-9.]*\) s.*/\1/p' \
		"$cache/kernels/$key/build.log" | tail -1)
	printf '%s %.1f %s %s\n' "$kind" "$(echo "$t1 - $t0" | bc)" "${copy:--}" \
		"$(cut -d' ' -f1 /proc/loadavg)"
}
: >"$work/times"
for i in $(seq "$pairs"); do
	build "t$i" trusted | tee -a "$work/times"
	build "u$i" untrusted | tee -a "$work/times"
done
python3 - "$work/times" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
t = [float(r[1]) for r in rows if r[0] == "trusted"]
u = [float(r[1]) for r in rows if r[0] == "untrusted"]
print(f"median trusted {statistics.median(t):.1f} s, untrusted {statistics.median(u):.1f} s, "
      f"ratio {statistics.median(u) / statistics.median(t):.2f}")
EOF
