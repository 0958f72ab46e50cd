#!/usr/bin/env bash
# The schedlab guest kernel, really built through the CLI (or taken from the
# cache a previous run filled): Linux 6.1 + the guest-kernel/linux-6.1 series
# + schedlab.config. Checks the artifact, its metadata and .config, and that a
# second request is a cache hit in well under a second.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
e2e_need_schedlab
e2e_need jq file
[ -f /usr/src/linux-source-6.1.tar.xz ] || e2e_skip "needs the Debian package linux-source-6.1"

start=$(date +%s)
"$SCHEDLAB" kernel build "$E2E_KERNEL_SPEC" --json >"${TMPDIR:-/tmp}/e2e10.$$.json"
json=$(cat "${TMPDIR:-/tmp}/e2e10.$$.json"); rm -f "${TMPDIR:-/tmp}/e2e10.$$.json"
echo "first request: $(( $(date +%s) - start )) s, cached=$(jq -r .cached <<<"$json")"

bz=$(jq -r .bzimage <<<"$json")
cfg=$(jq -r .config <<<"$json")
key=$(jq -r .key <<<"$json")
[ -s "$bz" ] || e2e_fail "no bzImage at '$bz'"
file -b "$bz" | grep -q "Linux kernel x86 boot executable" || e2e_fail "'$bz' is not an x86 bzImage: $(file -b "$bz")"
[[ "$key" =~ ^[0-9a-f]{64}$ ]] || e2e_fail "bad key '$key'"
[ "$(basename "$(dirname "$bz")")" = "$key" ] || e2e_fail "artifact dir is not named by the key"

# metadata: the four series patches by name, the 6.1 source, the compiler
jq -e '.meta.source == "debian:linux-source-6.1"' <<<"$json" >/dev/null || e2e_fail "meta.source"
jq -e '.meta.source_version | test("^6\\.1\\.[0-9]+$")' <<<"$json" >/dev/null || e2e_fail "meta.source_version: $(jq -r .meta.source_version <<<"$json")"
series=$(grep -v '^#' "$E2E_ROOT/guest-kernel/linux-6.1/series" | sed '/^$/d')
names=$(jq -r '.meta.patches[].name' <<<"$json")
[ "$series" = "$names" ] || e2e_fail "meta.patches '$names' != series '$series'"
jq -e '.meta.patches | all(.sha256 | test("^[0-9a-f]{64}$"))' <<<"$json" >/dev/null || e2e_fail "patch sha256"
jq -e '.meta.compiler | startswith("gcc")' <<<"$json" >/dev/null || e2e_fail "meta.compiler"
jq -e '.meta.build_seconds >= 0' <<<"$json" >/dev/null || e2e_fail "meta.build_seconds"
sha=$(sha256sum "$E2E_ROOT/guest-kernel/linux-6.1/schedlab.config" | cut -d' ' -f1)
jq -e --arg s "$sha" '.meta.config_sha256 == $s' <<<"$json" >/dev/null || e2e_fail "meta.config_sha256"

# every option of the fragment is in the kernel's .config
for opt in CONFIG_SMP=y CONFIG_PREEMPT=y CONFIG_HZ_250=y CONFIG_SERIAL_8250_NR_UARTS=4 \
	CONFIG_SCHED_DEBUG=y CONFIG_DEBUG_FS=y CONFIG_FAIR_GROUP_SCHED=y CONFIG_ACPI=y \
	CONFIG_MULTIUSER=y CONFIG_BLK_DEV_INITRD=y CONFIG_RD_GZIP=y CONFIG_SCHED_HRTICK=y; do
	grep -qx "$opt" "$cfg" || e2e_fail "'$opt' missing from '$cfg'"
done
grep -q "^CONFIG_RT_GROUP_SCHED=y" "$cfg" && e2e_fail "RT_GROUP_SCHED must stay off"

# a second request: a cache hit, fast, the same artifact
t0=$(date +%s%N)
again=$("$SCHEDLAB" kernel build "$E2E_KERNEL_SPEC" --json --quiet)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "second request: ${ms} ms"
jq -e '.cached == true' <<<"$again" >/dev/null || e2e_fail "second request was not a cache hit"
[ "$(jq -r .bzimage <<<"$again")" = "$bz" ] || e2e_fail "second request gave another bzImage"
[ "$ms" -lt 1000 ] || e2e_fail "cache hit took ${ms} ms (want < 1000)"

# lib.sh's helper gives the same kernel
[ "$(e2e_kernel)" = "$bz" ] || e2e_fail "e2e_kernel disagrees"
echo "ok: $bz"
