#!/usr/bin/env bash
# Installs what schedlab needs on a Debian bookworm host and starts libvirt.
# Idempotent: a second call on a ready machine takes well under a second.
# Usage: scripts/setup.sh [--packages-only] [--with-tests] [--extra PKG...]
#   --with-tests  also install scripts/packages-test.txt (make check does)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
packages_only=0
with_tests=0
extra=()
while [ $# -gt 0 ]; do
	case "$1" in
	--packages-only) packages_only=1 ;;
	--with-tests) with_tests=1 ;;
	--extra) shift; while [ $# -gt 0 ]; do extra+=("$1"); shift; done; break ;;
	-h|--help) sed -n '2,5p' "$0"; exit 0 ;;
	*) echo "setup.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done

lists=("$here/packages.txt")
[ "$with_tests" = 1 ] && lists+=("$here/packages-test.txt")
mapfile -t pkgs < <(cat "${lists[@]}" | grep -v '^\s*#' | sed '/^\s*$/d')
pkgs+=("${extra[@]}")
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >&2
	apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi
[ "$packages_only" = 1 ] && exit 0

# The build sandbox's uid (SANDBOX_UID, service/util/sandbox.h) gets a name,
# so that ps and ls show it and no later useradd hands it to someone else.
# Only when the id is free; nothing depends on the entry.
sandbox_id=1900000000
if [ "$(id -u)" = 0 ] && ! getent passwd "$sandbox_id" >/dev/null &&
	! getent passwd schedlab-build >/dev/null; then
	getent group "$sandbox_id" >/dev/null || groupadd --system --gid "$sandbox_id" schedlab-build
	useradd --system --uid "$sandbox_id" --gid "$sandbox_id" --no-create-home \
		--home-dir /nonexistent --shell /usr/sbin/nologin schedlab-build
fi

# /dev/kvm as root:root 0600 makes libvirt re-probe QEMU on every domain start
# (about 44 s each); group kvm with mode 0660 lets its capability cache hold.
if [ -e /dev/kvm ] && getent group kvm >/dev/null; then
	chgrp kvm /dev/kvm 2>/dev/null || true
	chmod 660 /dev/kvm 2>/dev/null || true
fi

# No systemd here: start the daemons by hand when they are not running.
if ! pgrep -x virtlogd >/dev/null; then
	echo "setup: starting virtlogd" >&2
	virtlogd -d
fi
if ! pgrep -x libvirtd >/dev/null; then
	echo "setup: starting libvirtd" >&2
	libvirtd -d
fi
for _ in $(seq 1 50); do
	[ -S /run/libvirt/libvirt-sock ] && exit 0
	sleep 0.2
done
echo "setup: libvirtd did not create /run/libvirt/libvirt-sock within 10 s" >&2
exit 1
