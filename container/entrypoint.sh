#!/usr/bin/env bash
# The schedlab container's entrypoint (PID 2, under tini): starts virtlogd and
# libvirtd, prepares /dev/kvm and the volumes, writes the service config with
# the bearer token, then execs `schedlab serve` as the unprivileged user.
#
# Environment:
#   SCHEDLAB_TOKEN   bearer token with the roles submit and read (16..256 of
#                    [A-Za-z0-9._~+/=-]); or
#   SCHEDLAB_CONFIG  path of a mounted service config (JSON, see docs/container.md).
#                    One of the two is required: the service listens on 0.0.0.0,
#                    and it refuses a non-loopback address without a token.
#   SCHEDLAB_USER    the user the service runs as: schedlab (default) or root.
#                    root is for a mounted kernel cache owned by root (e.g. the
#                    host's own cache); see docs/container.md.
# The service is the only libvirt user in here, so it may destroy any
# leftover schedlab- domain at start (--cleanup-domains).
# Arguments starting with '-' are passed on to `schedlab serve` after the
# defaults; any other arguments are a command to run instead of the service,
# with libvirtd already up (e.g. `virsh -c qemu:///system list`).
set -euo pipefail

state=/var/lib/schedlab
cache=${SCHEDLAB_CACHE:-/var/cache/schedlab}
user=${SCHEDLAB_USER:-schedlab}
log() { echo "entrypoint: $*" >&2; }
die() { log "$*"; exit 1; }

case "$user" in
schedlab|root) ;;
*) die "SCHEDLAB_USER '$user' is not supported; use 'schedlab' or 'root'." ;;
esac

# A command instead of options (e.g. virsh, or `schedlab run JOB.json`) runs
# as root once libvirtd is up, without the service and its token.
command_mode=0
[ $# -gt 0 ] && [ "${1#-}" = "$1" ] && command_mode=1

if [ "$command_mode" = 0 ]; then
	# The service config: a mounted file, or one written from SCHEDLAB_TOKEN to
	# /run/schedlab, readable only by root and the service user.
	mkdir -p /run/schedlab
	chmod 0750 /run/schedlab
	if [ -n "${SCHEDLAB_CONFIG:-}" ]; then
		[ -r "$SCHEDLAB_CONFIG" ] || die "SCHEDLAB_CONFIG '$SCHEDLAB_CONFIG' is not a readable file."
		config=$SCHEDLAB_CONFIG
	elif [ -n "${SCHEDLAB_TOKEN:-}" ]; then
		# The token goes into JSON unescaped, so it must not need escaping.
		[[ "$SCHEDLAB_TOKEN" =~ ^[A-Za-z0-9._~+/=-]{16,256}$ ]] ||
			die "SCHEDLAB_TOKEN must be 16 to 256 characters of A-Z a-z 0-9 . _ ~ + / = -."
		config=/run/schedlab/config.json
		umask 077
		printf '{"tokens": [{"token": "%s", "roles": ["submit", "read"]}]}\n' \
			"$SCHEDLAB_TOKEN" >"$config"
		umask 022
	else
		die "Set SCHEDLAB_TOKEN or SCHEDLAB_CONFIG: the service refuses to listen on 0.0.0.0 without a token."
	fi
	unset SCHEDLAB_TOKEN
fi

# /dev/kvm as root:root 0600 makes libvirt re-probe QEMU on every domain
# start (about 44 s each); group kvm with 0660 lets its capability cache hold
# and lets QEMU use it. Whether KVM really works is probed by the service.
if [ -e /dev/kvm ]; then
	chgrp kvm /dev/kvm 2>/dev/null && chmod 0660 /dev/kvm 2>/dev/null ||
		log "cannot set group 'kvm' and mode 0660 on /dev/kvm; libvirt will re-probe QEMU on every start."
fi

# QEMU runs as the same user as the service (see container/libvirt/qemu.conf).
if [ "$user" = root ]; then
	sed -i -e 's/^user = .*/user = "root"/' -e 's/^group = .*/group = "root"/' /etc/libvirt/qemu.conf
fi

# libvirtd runs as root: it creates the guests' devices, sockets, log files and
# ownership changes, none of which an unprivileged libvirtd (qemu:///session)
# could do for a system service. No systemd here: start the daemons by hand.
mkdir -p /run/libvirt /var/log/libvirt
virtlogd -d
libvirtd -d
for _ in $(seq 1 100); do
	[ -S /run/libvirt/libvirt-sock ] && break
	sleep 0.1
done
[ -S /run/libvirt/libvirt-sock ] || die "libvirtd did not create /run/libvirt/libvirt-sock within 10 s."
log "libvirtd is up ($(libvirtd --version))."

[ "$command_mode" = 1 ] && exec "$@"

mkdir -p "$state" "$cache"
if [ "$user" = schedlab ]; then
	# Volumes start out root-owned; hand over the ones that are ours. A mounted
	# cache owned by someone else stays as it is, and the service says so if it
	# cannot write there.
	for d in "$state" "$cache"; do
		owner=$(stat -c %U "$d")
		if [ "$owner" = root ] && [ -z "$(ls -A "$d")" ]; then
			chown schedlab:schedlab "$d"
		elif [ "$owner" != schedlab ]; then
			log "'$d' is owned by '$owner', not 'schedlab'; set SCHEDLAB_USER=root or chown it."
		fi
	done
	chgrp schedlab /run/schedlab
	if [ "$config" = /run/schedlab/config.json ]; then
		chgrp schedlab "$config" && chmod 0640 "$config"
	fi
	export HOME=/var/lib/schedlab USER=schedlab LOGNAME=schedlab
	exec setpriv --reuid=schedlab --regid=schedlab --init-groups \
		schedlab serve --listen 0.0.0.0:8080 --state "$state" --config "$config" --cleanup-domains "$@"
fi
exec schedlab serve --listen 0.0.0.0:8080 --state "$state" --config "$config" --cleanup-domains "$@"
