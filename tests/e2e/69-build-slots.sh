#!/usr/bin/env bash
# Builds of one source tree at once, as a bisection's prefixes are built
# (docs/kernel-builds.md "Builds at once"). Two `schedlab kernel build --build-slots 2` of
# different untrusted prefixes are started together, twice:
# 1. the first pair: one build takes the tree (area 0), the other finds it
#    busy and takes work area 1, which it seeds from area 0 once area 0 is
#    free (a hard-link copy of src/, a copy of the rest); its make is then
#    incremental (at most 40 objects after the copy of obj/), which only
#    holds when its sandbox shows area 1 at area 0's paths (the objects and
#    tools/objtool record absolute paths);
# 2. the second pair, with area 1 seeded: each takes an area at once and
#    neither waits for a tree's lock, so the two makes overlap.
# Each artifact must be a kernel image (the bzImage header's "HdrS") and
# each area's applied/list must end with the last patch of the build it
# held.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
e2e_need_schedlab
e2e_need jq bwrap
[ -f /usr/src/linux-source-6.1.tar.xz ] || e2e_skip "needs the Debian package linux-source-6.1"
e2e_tmpdir
cd "$E2E_TMP"
cache=${SCHEDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab}
gk=$E2E_ROOT/guest-kernel/linux-6.1
keys=()
cleanup() {
	for k in "${keys[@]}"; do rm -rf "${cache:?}/kernels/$k"; done
	_e2e_cleanup
}
trap cleanup EXIT

t0=$SECONDS
"$SCHEDLAB" kernel build "$E2E_KERNEL_SPEC" --json -q >base.json
echo "base kernel: cached=$(jq .cached base.json) in $((SECONDS - t0)) s"

# patch NAME FILE: one comment line, unique to this run, at the top of FILE
token="schedlab e2e 69, run $$ at $(date +%s)"
tree61=
for d in "$cache"/trees/*/src; do # the 6.1 tree (another base may be cached too)
	# not a work area (NAME.N): it holds whatever its last build applied,
	# and a patch made against that would not apply to the base
	case $d in */trees/*.*/src) continue ;; esac
	if grep -q '^VERSION = 6$' "$d/Makefile" 2>/dev/null && grep -q '^PATCHLEVEL = 1$' "$d/Makefile"; then
		tree61=$d
		break
	fi
done
[ -n "$tree61" ] || e2e_fail "no extracted 6.1 tree in '$cache' after the base build"
patch_of() {
	local src=$tree61/$2
	[ -f "$src" ] || e2e_fail "the 6.1 tree has no $2"
	mkdir -p "a/$(dirname "$2")" "b/$(dirname "$2")"
	head -3 "$src" >"a/$2"
	{ echo "/* $token: $1 */"; head -3 "$src"; } >"b/$2"
	diff -u "a/$2" "b/$2" | sed "1s|^--- .*|--- a/$2|;2s|^+++ .*|+++ b/$2|" >"$1.patch" || true
	rm -rf a b
}
patch_of p1 kernel/sched/rt.c
patch_of p2 kernel/sched/fair.c
patch_of p3 kernel/sched/core.c
patch_of p4 kernel/sched/deadline.c

# spec NAME PATCH...: the built-in series + PATCHES, untrusted (a user's)
spec() {
	local name=$1
	shift
	jq -n --arg s "$gk/series" --arg c "$gk/schedlab.config" \
		--argjson p "$(printf '%s\n' "$@" | sed "s|^|$E2E_TMP/|" | jq -R . | jq -s .)" \
		'{source: "debian:linux-source-6.1", series: $s, patches: $p, config: $c,
		  untrusted: true}' >"$name.json"
	keys+=("$("$SCHEDLAB" kernel key "$name.json")")
}

# pair A B: both built at once with two slots; prints each one's area
pair() {
	local t=$SECONDS pa pb rca=0 rcb=0
	"$SCHEDLAB" kernel build "$1.json" --build-slots 2 --json -q >"$1.out" 2>"$1.err" &
	pa=$!
	"$SCHEDLAB" kernel build "$2.json" --build-slots 2 --json -q >"$2.out" 2>"$2.err" &
	pb=$!
	wait "$pa" || rca=$?
	wait "$pb" || rcb=$?
	echo "pair $1 + $2: exit $rca and $rcb in $((SECONDS - t)) s (load $(cut -d' ' -f1 /proc/loadavg))"
	for n in "$1:$rca" "$2:$rcb"; do
		[ "${n#*:}" -eq 0 ] || e2e_fail "${n%%:*}: the build failed: $(tail -5 "${n%%:*}.err")"
		jq -e '.cached == false' "${n%%:*}.out" >/dev/null || e2e_fail "${n%%:*}: a cache hit"
		bz=$(jq -r .bzimage "${n%%:*}.out")
		[ "$(dd if="$bz" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ] ||
			e2e_fail "${n%%:*}: '$bz' is not a kernel image"
	done
}
log_of() { echo "$cache/kernels/$(jq -r .key "$1.out")/build.log"; }
area_of() { sed -n 's/^schedlab: work area \([0-9]*\) of 2 of the tree.*/\1/p' "$(log_of "$1")" | head -1; }

# 1. the first pair: one build seeds area 1 (unless an earlier run did)
spec a p1.patch
spec b p2.patch
pair a b
aa=$(area_of a) ab=$(area_of b)
echo "a built in area $aa, b in area $ab"
[ -n "$aa" ] && [ -n "$ab" ] && [ "$aa" != "$ab" ] ||
	e2e_fail "the two builds did not take two areas (a: '$aa', b: '$ab')"
one=a
[ "$ab" = 1 ] && one=b
tree=$(sed -n "s|^schedlab: reusing the source tree '\(.*\)/src'|\1|p" "$(log_of "$one")" | head -1)
[ -n "$tree" ] && [ -f "$tree/src/Makefile" ] || e2e_fail "area 1 has no source tree ('$tree')"
case "$tree" in *.1) ;; *) e2e_fail "area 1 is '$tree', not <tree>.1" ;; esac
grep -h "schedlab: seed\|schedlab: the object directory holds\|schedlab: copied" "$(log_of "$one")" || true
n=$(sed -n '/schedlab: copied the object directory/,$p' "$(log_of "$one")" | grep -c '^  CC ' || true)
echo "area 1: $n objects compiled after the copy"
[ "$n" -le 40 ] || e2e_fail "area 1: $n objects compiled: its make was not incremental"
echo "ok: area 1 built incrementally from area 0's objects, seen at area 0's paths"

# 2. the second pair, area 1 ready: neither waits for a lock
spec c p1.patch p3.patch
spec d p2.patch p4.patch
pair c d
ac=$(area_of c) ad=$(area_of d)
echo "c built in area $ac, d in area $ad"
[ -n "$ac" ] && [ -n "$ad" ] && [ "$ac" != "$ad" ] ||
	e2e_fail "the second pair did not take two areas (c: '$ac', d: '$ad')"
for x in c d; do
	if grep -q "schedlab: waiting for another build holding\|schedlab: seed" "$(log_of $x)"; then
		e2e_fail "$x waited for the other build: $(grep 'waiting\|seed' "$(log_of $x)" | head -2)"
	fi
	m=$(sed -n '/schedlab: copied the object directory/,$p' "$(log_of $x)" | grep -c '^  CC ' || true)
	echo "$x: $m objects compiled after the copy; $(grep -o 'steps: .*' "$(log_of $x)" | tail -1)"
	[ "$m" -le 40 ] || e2e_fail "$x: $m objects compiled: not incremental"
done
# each area's applied/list holds the series and the patches its last build applied
for x in c d; do
	dir=$tree
	[ "$(area_of $x)" = 0 ] && dir=${tree%.1}
	last=$(tail -1 "$dir/applied/list")
	want=$(sha256sum "$(jq -r '.patches[-1]' $x.json)" | cut -d' ' -f1)
	[ "$last" = "$want" ] || e2e_fail "area $(area_of $x) does not hold $x's last patch"
done
echo "ok: with two slots two builds of one tree ran at once, one in each area"
