#!/usr/bin/env bash
# Sourced: virsh with a time limit, for every script that talks to libvirt.
#
# A wedged libvirtd (docs/guests.md, "A libvirtd deadlock") accepts the
# connection and never answers, and a plain `virsh` then waits for ever: it
# once held a CI run until its 90-minute limit. Every virsh call in tests/,
# bench/ and scripts/ goes through virsh_bounded instead.
#
#   virsh_bounded URI ARGS...   virsh -c URI ARGS..., killed after
#                               $VIRSH_TIMEOUT_S s (default 30); on expiry
#                               it says so on stderr and returns 124

VIRSH_TIMEOUT_S=${VIRSH_TIMEOUT_S:-30}

virsh_bounded() {
	local uri=$1 rc=0
	shift
	# -k: a virsh stuck in an uninterruptible wait still goes.
	timeout -k 5 "$VIRSH_TIMEOUT_S" virsh -c "$uri" "$@" || rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "libvirtd did not answer \`virsh $*\` within $VIRSH_TIMEOUT_S s: wedged?" \
			"(docs/guests.md says how to tell and what to do)" >&2
		return 124
	fi
	return "$rc"
}
