#!/usr/bin/env bash
# An untrusted build cannot poison the object tree later builds reuse
# (docs/kernel-builds.md "Untrusted builds"). A hostile patch's
# Makefile rule, while `make tinyconfig` reads it, overwrites an object of
# the object directory make was given (O=) and of the tree's shared obj/
# with garbage newer than everything, and leaves a marker file; then it
# stops make. An honest patch of the same source (a README line, unique per
# run, so nothing is recompiled and only the relink would take a planted
# object) must then build: before the fix the relink read the garbage
# kernel/panic.o and the build failed. The shared obj/ must hold neither the
# garbage nor the marker, and no untrusted copy is left behind.
# obj/ heals itself: the first untrusted build finds obj/ marked with the
# base kernel's key (the built-in series and config), or builds the base
# there first; so the honest build copies a complete obj/ and compiles
# almost nothing (checked: at most 40 objects after the copy).
# The copy is bound at obj/'s path in the sandbox (O= names obj/): at its
# own path make rebuilt tools/objtool (absolute output paths) and then
# every object, which is what made the honest build take 1648 s here on
# 2026-12-05 (hostile 7 s, at load 4-17 on 2 cores).
# With obj/ marked at the base (here 2026-12-05 07:57 UTC, load 1.3-1.7):
# hostile 2 s, honest 47-51 s (2 objects compiled after the copy), the
# whole test 51 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
e2e_need_schedlab
e2e_need jq bwrap
[ -f /usr/src/linux-source-6.1.tar.xz ] || e2e_skip "needs the Debian package linux-source-6.1"
e2e_tmpdir
cd "$E2E_TMP"
poison=SCHEDLAB-POISON-$$
shared=
cleanup() {
	# a failed run must not leave the poison in the cache other builds use
	if [ -n "$shared" ]; then
		rm -f -- "$shared/schedlab-poison"
		grep -qs "SCHEDLAB-POISON" "$shared/kernel/panic.o" && rm -f -- "$shared/kernel/panic.o"
	fi
	_e2e_cleanup
}
trap cleanup EXIT

t0=$SECONDS
"$SCHEDLAB" kernel build "$E2E_KERNEL_SPEC" --json -q >base.json
echo "base kernel: cached=$(jq .cached base.json) in $((SECONDS - t0)) s"
gk=$E2E_ROOT/guest-kernel/linux-6.1

# spec NAME PATCH: the built-in series + PATCH, marked untrusted
spec() {
	jq -n --arg s "$gk/series" --arg p "$E2E_TMP/$2" --arg c "$gk/schedlab.config" \
		'{source: "debian:linux-source-6.1", series: $s, patches: [$p], config: $c,
		  untrusted: true}' >"$1.json"
}

# 1. the hostile build: plants garbage in every object directory it can name
cat >hostile.patch <<EOF
--- a/Makefile
+++ b/Makefile
@@ -1,4 +1,6 @@
 # SPDX-License-Identifier: GPL-2.0
+HOSTILE := \$(shell sh -c 'for d in \$(O) \$(CURDIR)/../obj; do [ -f \$\$d/kernel/panic.o ] && printf $poison >\$\$d/kernel/panic.o && echo planted \$\$d; echo x >\$\$d/schedlab-poison; done' 2>&1)
+\$(error hostile: O=\$(O) \$(HOSTILE))
 VERSION = 6
 PATCHLEVEL = 1
 SUBLEVEL = 192
EOF
spec hostile hostile.patch
t=$SECONDS rc=0
"$SCHEDLAB" kernel build hostile.json -q >hostile.out 2>hostile.err || rc=$?
echo "hostile: exit $rc in $((SECONDS - t)) s"
[ "$rc" -ne 0 ] || e2e_fail "hostile: the build succeeded"
cache=${SCHEDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab}
log=$cache/kernels/$("$SCHEDLAB" kernel key hostile.json).failed.log
o=$(sed -n 's/.*hostile: O=\([^ ]*\).*/\1/p' "$log" | tail -1)
[ -n "$o" ] || e2e_fail "hostile: the rule did not run: $(tail -3 "$log")"
grep "hostile: O=" "$log" | tail -1 | cut -c1-300
shared=$(dirname "$o")/obj
[ -d "$shared" ] || e2e_fail "no shared object directory beside '$o'"
[ -f "$shared/kernel/panic.o" ] || echo "note: the shared obj/ has no kernel/panic.o (a fresh tree)"

# 2. the shared object directory is as it was
bad=
[ ! -e "$shared/schedlab-poison" ] || bad="the marker file"
grep -qs "$poison" "$shared/kernel/panic.o" && bad="${bad:+$bad and }the garbage kernel/panic.o"
[ -z "$bad" ] || e2e_fail "the hostile build left $bad in the shared object directory"
[ ! -e "$(dirname "$o")/obj-untrusted" ] || e2e_fail "the untrusted copy was left behind"
echo "ok: the hostile build planted nothing in the shared object directory"

# 3. an honest patch of the same source builds, without the planted object
cat >honest.patch <<EOF
--- a/README
+++ b/README
@@ -1,4 +1,5 @@
 Linux kernel
+schedlab e2e 68, run $$ at $(date +%s)
 ============
 
 There are several guides for kernel developers and users. These guides can
EOF
spec honest honest.patch
t=$SECONDS rc=0
"$SCHEDLAB" kernel build honest.json --json -q >honest.out 2>honest.err || rc=$?
echo "honest: exit $rc in $((SECONDS - t)) s"
[ "$rc" -eq 0 ] || e2e_fail "honest: the build failed: $(tail -5 honest.err)"
jq -e '.cached == false' honest.out >/dev/null || e2e_fail "honest: not built (a cache hit)"
grep -qs "$poison" "$shared/kernel/panic.o" && e2e_fail "honest: the shared panic.o holds the garbage"
[ ! -e "$(dirname "$o")/obj-untrusted" ] || e2e_fail "honest: the untrusted copy was left behind"
echo "ok: an honest build after the hostile one builds and takes nothing planted"

# 4. obj/ is marked with the base kernel, and the honest build was incremental
hlog=$cache/kernels/$(jq -r .key honest.out)/build.log
grep -h "schedlab: the object directory holds\|schedlab: built the base\|schedlab: copied" \
	"$log" "$hlog" || true
basekey=$(jq -r .key base.json)
[ "$(head -n 1 "$shared/.schedlab-complete" 2>/dev/null)" = "$basekey" ] ||
	e2e_fail "obj/ is not marked with the base kernel $basekey"
grep -q "schedlab: the object directory holds the complete base kernel $basekey" "$hlog" ||
	e2e_fail "honest: obj/ did not hold the base kernel: $(grep 'object directory' "$hlog")"
n=$(sed -n '/schedlab: copied the object directory/,$p' "$hlog" | grep -c '^  CC ' || true)
echo "honest: $n objects compiled after the copy"
[ "$n" -le 40 ] || e2e_fail "honest: $n objects compiled: the copy was not incremental"
echo "ok: obj/ holds the base kernel and the honest build was incremental"
