#!/usr/bin/env bash
# What an untrusted build costs with a self-healing obj/ (docs/kernel-builds.md
# "Untrusted builds"). Every build is a built-in base's series (6.1 by default) plus a one-line
# comment patch (a new comment each time, so the key is new):
#   marked: an untrusted rt.c patch while obj/ holds the base kernel (marked
#           complete): the copy of obj/ plus an incremental make;
#   stale:  first a trusted build of the series plus a kernel/sched/sched.h
#           comment patch leaves obj/ at another kernel, then an untrusted
#           rt.c patch: this build brings obj/ back to the base (the
#           scheduler's objects again) before its copy. Before obj/ healed
#           itself every untrusted build paid that difference, and more when
#           obj/ was half-built, in its copy: this is the old path's cost for
#           this difference, paid once now.
# PAIRS of each; prints each build's time, the copy's and the base
# refresh's times from the build log, the load, and the ratio of the
# medians (stale / marked). Uses the cache as it is (default
# $SCHEDLAB_CACHE or ~/.cache/schedlab): run it on a quiet host, it holds
# the base tree's lock for each build.
# Usage: bench/untrusted-build.sh [--cache-dir DIR] [--pairs N (default 1)]
#        [--base linux-6.1|linux-6.12]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
schedlab=${SCHEDLAB:-$root/build/schedlab}
cache=${SCHEDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab} pairs=1 base=linux-6.1
while [ $# -gt 0 ]; do
	case "$1" in
	--cache-dir) cache=$2; shift 2 ;;
	--pairs) pairs=$2; shift 2 ;;
	--base) base=$2; shift 2 ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	*) echo "untrusted-build.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[[ "$pairs" =~ ^[1-9]$ ]] || { echo "pairs: 1..9" >&2; exit 2; }
[[ "$base" =~ ^linux-6\.(1|12)$ ]] || { echo "base: linux-6.1 or linux-6.12" >&2; exit 2; }
[ -x "$schedlab" ] || { echo "untrusted-build.sh: build '$schedlab' first (make)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
kdir=$root/guest-kernel/$base source=$(jq -r .source "$root/guest-kernel/$base/kernel.json")
level=${base#linux-6.}
"$schedlab" kernel build "$kdir/kernel.json" --cache-dir "$cache" --quiet >/dev/null
src=
for d in "$cache"/trees/*/src; do
	grep -q "^PATCHLEVEL = $level\$" "$d/Makefile" 2>/dev/null && src=$d && break
done
[ -n "$src" ] || { echo "untrusted-build.sh: no $base tree in '$cache'" >&2; exit 2; }
for f in rt.c sched.h; do
	mkdir -p "$work/a/kernel/sched" "$work/b/kernel/sched"
	cp "$src/kernel/sched/$f" "$work/a/kernel/sched/$f"
done

# build N FILE KIND: one build of the series + a comment in kernel/sched/FILE;
# prints "KIND SECONDS COPY_S REFRESH_S COMPILED LOAD"
build() {
	local n=$1 f=$2 kind=$3 t0 t1 key log
	# a first line of its own (6.12's rt.c has no #include: build_policy.c
	# includes it); the lines after it move, so the file's objects change
	{ echo "/* schedlab bench $$ $n $(date +%s%N) */"; cat "$work/a/kernel/sched/$f"; } \
		>"$work/b/kernel/sched/$f"
	(cd "$work" && diff -u "a/kernel/sched/$f" "b/kernel/sched/$f" >"$work/p$n.patch" || true)
	[ -s "$work/p$n.patch" ] || { echo "untrusted-build.sh: empty patch" >&2; exit 1; }
	jq -n --arg s "$kdir/series" --arg p "$work/p$n.patch" --arg c "$kdir/schedlab.config" \
		--arg src "$source" --argjson u "$([ "$kind" = trusted ] && echo false || echo true)" \
		'{source: $src, series: $s, patches: [$p], config: $c,
		  untrusted: $u}' >"$work/s$n.json"
	t0=$(date +%s.%N)
	"$schedlab" kernel build "$work/s$n.json" --cache-dir "$cache" --quiet >"$work/o$n.txt"
	t1=$(date +%s.%N)
	key=$("$schedlab" kernel key "$work/s$n.json" --cache-dir "$cache")
	log=$cache/kernels/$key/build.log
	copy=$(sed -n 's/.*copied the object directory in \([0-9.]*\) s.*/\1/p' "$log" | tail -1)
	refresh=$(sed -n 's/.*built the base kernel in the object directory in \([0-9.]*\) s.*/\1/p' \
		"$log" | tail -1)
	printf '%s %.1f %s %s %s %s\n' "$kind" "$(echo "$t1 - $t0" | bc)" "${copy:--}" \
		"${refresh:--}" "$(grep -c '^  CC ' "$log" || true)" "$(cut -d' ' -f1 /proc/loadavg)"
}
echo "kind seconds copy_s refresh_s compiled load"
# the first untrusted build brings obj/ to the base if it is not there yet
build w0 rt.c warmup
: >"$work/times"
for i in $(seq "$pairs"); do
	build "m$i" rt.c marked | tee -a "$work/times"
	build "t$i" sched.h trusted
	build "s$i" rt.c stale | tee -a "$work/times"
done
uptime
python3 - "$work/times" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
m = [float(r[1]) for r in rows if r[0] == "marked"]
s = [float(r[1]) for r in rows if r[0] == "stale"]
print(f"median marked {statistics.median(m):.1f} s, stale {statistics.median(s):.1f} s, "
      f"ratio {statistics.median(s) / statistics.median(m):.2f}")
EOF
