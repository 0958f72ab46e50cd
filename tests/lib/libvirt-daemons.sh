# shellcheck shell=bash
# The local libvirt daemons for scripts that boot guests (bench/*.sh): start
# virtlogd and libvirtd when they are not running, wait until libvirtd
# answers, and at the end stop only what was started here, so nothing is left
# running that was not running before.
#   libvirt_daemons_start   (needs root, as libvirtd does; exit 2 when the
#                            daemon does not answer within about 10 s)
#   libvirt_daemons_stop    (call it from the script's EXIT trap)
. "$(dirname "${BASH_SOURCE[0]}")/virsh.sh"
_libvirt_started=()

libvirt_daemons_start() {
	local d i
	for d in virtlogd libvirtd; do
		if ! pgrep -x "$d" >/dev/null; then
			command -v "$d" >/dev/null || { echo "$d is not installed (scripts/setup.sh installs it)" >&2; exit 2; }
			echo "starting $d (stopped again at the end)" >&2
			"$d" -d
			_libvirt_started+=("$d")
		fi
	done
	# The socket file alone proves nothing (a killed daemon leaves it):
	# wait until the daemon answers.
	for ((i = 0; i < 20; i++)); do
		VIRSH_TIMEOUT_S=5 virsh_bounded qemu:///system version >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	echo "libvirtd did not answer on qemu:///system within about 10 s" >&2
	exit 2
}

libvirt_daemons_stop() {
	local d
	for d in "${_libvirt_started[@]}"; do pkill -x "$d" || true; done
	. "$(dirname "${BASH_SOURCE[0]}")/virsh.sh"
_libvirt_started=()
}
