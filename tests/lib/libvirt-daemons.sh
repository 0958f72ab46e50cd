# shellcheck shell=bash
# The local libvirt daemons for scripts that boot guests (bench/*.sh): start
# virtlogd and libvirtd when they are not running, wait for libvirtd's
# socket, and at the end stop only what was started here, so nothing is left
# running that was not running before.
#   libvirt_daemons_start   (needs root, as libvirtd does; exit 2 when the
#                            socket does not appear within 10 s)
#   libvirt_daemons_stop    (call it from the script's EXIT trap)
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
	for ((i = 0; i < 100; i++)); do
		[ -S /run/libvirt/libvirt-sock ] && return 0
		sleep 0.1
	done
	echo "libvirtd did not create /run/libvirt/libvirt-sock within 10 s" >&2
	exit 2
}

libvirt_daemons_stop() {
	local d
	for d in "${_libvirt_started[@]}"; do pkill -x "$d" || true; done
	_libvirt_started=()
}
