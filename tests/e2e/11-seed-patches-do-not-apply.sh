#!/usr/bin/env bash
# The seeds' own 2.6.23-rt patches (tests/data/seed-patches/, copied from the
# public 2007 LKML posts) submitted against Linux 6.1: each must be reported
# as not applying, naming the patch, a file and a hunk; nothing crashes and
# nothing is built or cached.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
e2e_need_schedlab
e2e_need jq
[ -f /usr/src/linux-source-6.1.tar.xz ] || e2e_skip "needs the Debian package linux-source-6.1"
e2e_tmpdir
cache=${SCHEDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab}
n=0
for p in "$E2E_ROOT"/tests/data/seed-patches/*.patch; do
	name=$(basename "$p")
	jq -n --arg p "$p" --arg c "$E2E_ROOT/guest-kernel/linux-6.1/schedlab.config" \
		'{source: "debian:linux-source-6.1", patches: [$p], config: $c}' >"$E2E_TMP/spec.json"
	key=$("$SCHEDLAB" kernel key "$E2E_TMP/spec.json")
	rc=0
	"$SCHEDLAB" kernel build "$E2E_TMP/spec.json" --json --quiet >"$E2E_TMP/out.json" 2>"$E2E_TMP/err.txt" || rc=$?
	msg=$(jq -r .error.message "$E2E_TMP/out.json")
	echo "$name: exit $rc: $msg"
	[ "$rc" -eq 1 ] || e2e_fail "$name: exit $rc, want 1 (build error); stderr: $(cat "$E2E_TMP/err.txt")"
	jq -e '.error.code == "patch_does_not_apply"' "$E2E_TMP/out.json" >/dev/null || e2e_fail "$name: error code"
	[[ "$msg" == "patch 1/1 '$name' does not apply: "* ]] || e2e_fail "$name: message does not name the patch"
	[[ "$msg" =~ file\ \'[^\']+\'\ hunk\ \#[0-9]+ ]] || e2e_fail "$name: message names no file and hunk"
	[ ! -e "$cache/kernels/$key" ] || e2e_fail "$name: an artifact was cached for a patch that does not apply"
	grep -q "does not apply" "$cache/kernels/$key.failed.log" || e2e_fail "$name: no failure log"
	n=$((n + 1))
done
[ "$n" -ge 8 ] || e2e_fail "only $n seed patches found"
echo "ok: $n seed patches reported as not applying"
