#!/usr/bin/env bash
# A config fragment asking for options Kconfig cannot give (unmet
# dependencies) must fail the build before make runs, naming the option and
# the fragment; a malformed fragment line must be named too.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
e2e_need_schedlab
e2e_need jq
[ -f /usr/src/linux-source-6.1.tar.xz ] || e2e_skip "needs the Debian package linux-source-6.1"
e2e_tmpdir
k=$E2E_ROOT/guest-kernel/linux-6.1

# KVM_INTEL depends on KVM, which depends on VIRTUALIZATION: not in tinyconfig.
cp "$k/schedlab.config" "$E2E_TMP/dropped.config"
echo "CONFIG_KVM_INTEL=y # unmet dependencies on purpose" >>"$E2E_TMP/dropped.config"
jq -n --arg s "$k/series" --arg c "$E2E_TMP/dropped.config" \
	'{source: "debian:linux-source-6.1", series: $s, config: $c}' >"$E2E_TMP/spec.json"
rc=0
"$SCHEDLAB" kernel build "$E2E_TMP/spec.json" --json --quiet >"$E2E_TMP/out.json" || rc=$?
cat "$E2E_TMP/out.json"
[ "$rc" -eq 1 ] || e2e_fail "exit $rc, want 1"
msg=$(jq -r .error.message "$E2E_TMP/out.json")
[[ "$msg" == *"config option 'CONFIG_KVM_INTEL=y' from 'dropped.config' was dropped by Kconfig"* ]] ||
	e2e_fail "message does not name the option: $msg"
jq -e '.error.code == "config_option_dropped"' "$E2E_TMP/out.json" >/dev/null || e2e_fail "error code"

# a value Kconfig changes (NR_CPUS has a range of 2..512 with SMP)
cp "$k/schedlab.config" "$E2E_TMP/range.config"
sed -i 's/^CONFIG_NR_CPUS=64/CONFIG_NR_CPUS=100000/' "$E2E_TMP/range.config"
jq -n --arg s "$k/series" --arg c "$E2E_TMP/range.config" \
	'{source: "debian:linux-source-6.1", series: $s, config: $c}' >"$E2E_TMP/spec.json"
rc=0
"$SCHEDLAB" kernel build "$E2E_TMP/spec.json" --json --quiet >"$E2E_TMP/out.json" || rc=$?
msg=$(jq -r .error.message "$E2E_TMP/out.json")
echo "$msg"
[ "$rc" -eq 1 ] || e2e_fail "NR_CPUS out of range: exit $rc, want 1"
[[ "$msg" == *"'CONFIG_NR_CPUS=100000' from 'range.config' became 'CONFIG_NR_CPUS="* ]] ||
	e2e_fail "message does not name the changed option: $msg"

# a line that is not an option at all
printf 'CONFIG_SMP=y\nSMP=y\n' >"$E2E_TMP/bad.config"
jq -n --arg c "$E2E_TMP/bad.config" '{source: "debian:linux-source-6.1", patches: [], config: $c}' >"$E2E_TMP/spec.json"
rc=0
"$SCHEDLAB" kernel build "$E2E_TMP/spec.json" --json --quiet >"$E2E_TMP/out.json" || rc=$?
msg=$(jq -r .error.message "$E2E_TMP/out.json")
echo "$msg"
[[ "$msg" == *"'bad.config' line 2"* ]] || e2e_fail "malformed line not named: $msg"
echo ok
