#!/usr/bin/env bash
# Shared helpers for the end-to-end tests: source it from tests/e2e/NN-*.sh.
#   E2E_ROOT        the repository root (found from this file, never hard-coded)
#   SCHEDLAB        the CLI under test (build/schedlab unless $SCHEDLAB is set)
#   e2e_skip MSG    exit 77 with MSG as the last line (the reason run.sh shows)
#   e2e_fail MSG    exit 1 with MSG
#   e2e_need CMD... skip unless every command exists
#   e2e_tmpdir      a fresh directory removed when the test exits
#   e2e_need_guest  the CLI, agent, workloads and libvirtd are there, and
#                   E2E_KERNEL holds the schedlab kernel (built if need be;
#                   a failed build fails the test)
#   e2e_kernel      prints the bzImage path of the schedlab guest kernel
#                   (guest-kernel/linux-6.1/kernel.json), building it on the
#                   first call and taking it from the cache afterwards
#   e2e_guest_hanging ID  starts `schedlab guest run` in the background in
#                   the current directory on $E2E_KERNEL with a plan whose one
#                   workload never ends (crashme hang), deadline 600 s,
#                   writing console.log, out.json and err.txt; returns once
#                   the workload runs, with E2E_GUEST_PID set (fails the test
#                   if the run ends first or the workload never starts)
#   e2e_chromium ARG...  headless Chromium with a throwaway profile under
#                   $E2E_TMP, no network, at most 120 s; stderr appended to
#                   ./chromium.log
# shellcheck shell=bash

E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SCHEDLAB=${SCHEDLAB:-$E2E_ROOT/build/schedlab}
E2E_KERNEL_SPEC=${E2E_KERNEL_SPEC:-$E2E_ROOT/guest-kernel/linux-6.1/kernel.json}

# Under `make check` (SCHEDLAB_E2E_STRICT=1) a missing prerequisite is a
# failure: the check installs everything, so a skip there would hide a bug.
e2e_skip() {
	if [ "${SCHEDLAB_E2E_STRICT:-0}" = 1 ]; then
		echo "FAIL: a full check may not skip: $*" >&2
		exit 1
	fi
	echo "$*"
	exit 77
}

# A test that needs more host CPUs than this machine has is skipped even
# under `make check`: no install step can fix that, and the skip is counted
# and printed with its reason.
e2e_need_cpus() { # e2e_need_cpus N WHY
	[ "$(nproc)" -ge "$1" ] && return 0
	echo "needs $1 host CPUs, this host has $(nproc): $2"
	exit 77
}

e2e_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# virsh on qemu:///system, bounded (tests/lib/virsh.sh). A daemon that does
# not answer fails the test naming the call, also from a pipe or a command
# substitution: the message goes to the test's own stderr (saved below, so a
# caller's 2>/dev/null does not hide it) and the test shell gets SIGTERM,
# which runs its EXIT traps.
. "$E2E_ROOT/tests/lib/virsh.sh"
exec {_e2e_stderr}>&2
e2e_virsh() {
	local rc=0
	virsh_bounded qemu:///system "$@" || rc=$?
	if [ "$rc" -eq 124 ]; then
		echo "FAIL: libvirtd did not answer \`virsh $*\` within $VIRSH_TIMEOUT_S s: wedged?" >&$_e2e_stderr
		kill -TERM $$
		exit 1
	fi
	return "$rc"
}

# True while libvirt lists the domain $1 as running.
e2e_domain_running() {
	local doms
	doms=$(e2e_virsh list --name) || e2e_fail "virsh list failed"
	grep -qx -- "$1" <<<"$doms"
}

e2e_need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || e2e_skip "needs '$c', which is not installed"
	done
}

_e2e_tmpdirs=()
_e2e_cleanup() {
	local d
	for d in "${_e2e_tmpdirs[@]}"; do
		[ -n "$d" ] && rm -rf -- "$d"
	done
}
trap _e2e_cleanup EXIT

# Usage: dir=$(e2e_tmpdir) does not work (the trap lives in a subshell), so
# this sets E2E_TMP instead: e2e_tmpdir; cd "$E2E_TMP"
e2e_tmpdir() {
	E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-e2e.XXXXXX")
	_e2e_tmpdirs+=("$E2E_TMP")
}

e2e_need_schedlab() {
	[ -x "$SCHEDLAB" ] || e2e_fail "'$SCHEDLAB' is not built (run make)"
}

# Prints the bzImage path of the schedlab guest kernel. Progress of a real
# build goes to stderr (the test's log); a cache hit takes well under a second.
e2e_kernel() {
	e2e_need_schedlab
	local out
	out=$("$SCHEDLAB" kernel build "$E2E_KERNEL_SPEC") || {
		echo "e2e_kernel: 'schedlab kernel build' failed" >&2
		return 1
	}
	printf '%s\n' "$out" | sed -n 's/^bzImage: //p'
}

e2e_need_guest() {
	e2e_need_schedlab
	e2e_need virsh
	[ -x "$E2E_ROOT/build/agent" ] || e2e_skip "build/agent is not built (run make)"
	[ -x "$E2E_ROOT/build/workloads/crashme" ] || e2e_skip "build/workloads/crashme is not built (run make)"
	e2e_virsh version >/dev/null 2>&1 ||
		e2e_skip "libvirtd is not running (scripts/setup.sh starts it)"
	E2E_KERNEL=$(e2e_kernel) && [ -f "$E2E_KERNEL" ] || e2e_fail "the schedlab kernel could not be built"
}

e2e_guest_hanging() {
	cat >plan.json <<JSON
{"run_id": "$1", "features": [],
 "workloads": [{"name": "crashme", "argv": ["/usr/bin/crashme", "hang"], "timeout_s": 3600, "uid": 0}]}
JSON
	"$SCHEDLAB" guest run --kernel "$E2E_KERNEL" --plan plan.json --deadline 600 \
		--console-log console.log >out.json 2>err.txt &
	E2E_GUEST_PID=$!
	for _ in $(seq 1 300); do
		grep -q "running workload 0 'crashme'" console.log 2>/dev/null && return 0
		kill -0 "$E2E_GUEST_PID" 2>/dev/null || e2e_fail "guest run ended early: $(cat err.txt)"
		sleep 0.2
	done
	kill "$E2E_GUEST_PID"
	e2e_fail "the workload never started"
}

e2e_chromium() {
	local profile
	profile=$(mktemp -d "$E2E_TMP/profile.XXXXXX")
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--disable-quic --user-data-dir="$profile" "$@" 2>>chromium.log
}
