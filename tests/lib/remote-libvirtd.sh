#!/usr/bin/env bash
# A second libvirtd on this machine that behaves like a remote hypervisor
# host, for the scale-out tests: source it, then
#   remote_libvirtd_start DIR   creates a network namespace with a veth pair
#                               (a private /30 in 10.213.0.0/16, used only
#                               inside this namespace pair), and starts
#                               libvirtd in it under its own mount namespace,
#                               with private /etc/libvirt, /run/libvirt,
#                               /var/lib/libvirt, /var/cache/libvirt,
#                               /var/log/libvirt and /run/lock under DIR. Sets REMOTE_URI
#                               (qemu+tcp://ADDR/system), REMOTE_ADDR, REMOTE_NS.
#   remote_libvirtd_kill        kills the remote daemon (SIGKILL), like a host
#                               that drops; its QEMUs go too
#   remote_libvirtd_stop        kills every process in the namespace and
#                               removes the namespace and the veth pair
# The caller traps remote_libvirtd_stop on EXIT. Needs root, ip and unshare.
# shellcheck shell=bash

. "$(dirname "${BASH_SOURCE[0]}")/virsh.sh"
REMOTE_NS= REMOTE_ADDR= REMOTE_URI= REMOTE_DIR= _remote_veth=

remote_libvirtd_start() {
	local dir=$1 n=$(($$ % 250 + 1)) d
	REMOTE_DIR=$dir
	REMOTE_NS=schedlab-rl-$$
	_remote_veth=slrl$$
	local nsveth=slrn$$
	REMOTE_ADDR=10.213.$n.2
	ip netns add "$REMOTE_NS" || return 1
	ip link add "$_remote_veth" type veth peer name "$nsveth" || return 1
	ip link set "$nsveth" netns "$REMOTE_NS"
	ip addr add "10.213.$n.1/30" dev "$_remote_veth"
	ip link set "$_remote_veth" up
	ip netns exec "$REMOTE_NS" ip addr add "$REMOTE_ADDR/30" dev "$nsveth"
	ip netns exec "$REMOTE_NS" ip link set "$nsveth" up
	ip netns exec "$REMOTE_NS" ip link set lo up

	for d in etc run lib cache log lock; do
		mkdir -p "$dir/$d"
	done
	cp -a /etc/libvirt/. "$dir/etc/"
	# No networks or hooks of the host's daemon; no virtlogd in here.
	rm -rf "$dir/etc/qemu/networks/autostart" "$dir/etc/hooks"
	echo 'stdio_handler = "file"' >>"$dir/etc/qemu.conf"
	cat >"$dir/libvirtd.conf" <<CONF
listen_tls = 0
listen_tcp = 1
listen_addr = "$REMOTE_ADDR"
auth_tcp = "none"
auth_unix_rw = "none"
CONF
	ip netns exec "$REMOTE_NS" unshare -m --propagation private sh -c '
		set -e
		d=$1
		mount --bind "$d/etc" /etc/libvirt
		mount --bind "$d/run" /run/libvirt
		mount --bind "$d/lib" /var/lib/libvirt
		mount --bind "$d/cache" /var/cache/libvirt
		mount --bind "$d/log" /var/log/libvirt
		# Console pty lock files (LCK.._pts_N): a killed daemon leaves its
		# own behind, which must not block the host daemon from that pty.
		mount --bind "$d/lock" /run/lock
		exec libvirtd -d --listen --config "$d/libvirtd.conf" -p "$d/libvirtd.pid"
	' sh "$dir" || return 1
	REMOTE_URI="qemu+tcp://$REMOTE_ADDR/system"
	local i
	for i in $(seq 1 100); do
		VIRSH_TIMEOUT_S=5 virsh_bounded "$REMOTE_URI" version >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "remote_libvirtd_start: the daemon at '$REMOTE_URI' did not answer" >&2
	return 1
}

remote_libvirtd_kill() {
	[ -n "$REMOTE_NS" ] || return 0
	local p=
	p=$(cat "$REMOTE_DIR/libvirtd.pid" 2>/dev/null) || true
	[ -n "$p" ] && { kill -KILL "$p" 2>/dev/null || true; }
	# QEMU does not die with libvirtd; a dropped host loses its guests too.
	for p in $(ip netns pids "$REMOTE_NS" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null || true
	done
	return 0
}

remote_libvirtd_stop() {
	[ -n "$REMOTE_NS" ] || return 0
	remote_libvirtd_kill
	sleep 0.3
	ip link del "$_remote_veth" 2>/dev/null || true
	ip netns del "$REMOTE_NS" 2>/dev/null || true
	REMOTE_NS=
	return 0
}
