#!/usr/bin/env bash
# Makes the local base image docker.io/library/debian:bookworm: there is no
# registry here, so debootstrap (minbase) builds it from this machine's own
# configured Debian mirror, read from the apt sources at run time. The host's
# apt sources, keyrings and Acquire settings go into the image so that the
# Dockerfile's apt-get reaches the same mirror.
# Cached: the image is tagged localhost/schedlab-base:<key>, key = sha256 of
# this script and the apt sources/config it copies; a second call is a no-op.
# Usage: container/base-image.sh [--force]   (prints the image reference)
# Honours CONTAINERS_CONF and the usual podman environment.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
force=0
case "${1:-}" in
--force) force=1 ;;
-h|--help) sed -n '2,10p' "$0"; exit 0 ;;
"") ;;
*) echo "base-image.sh: unknown option '$1'" >&2; exit 2 ;;
esac
target=docker.io/library/debian:bookworm
suite=bookworm

# The apt files that define where packages come from: enabled sources only
# (*.sources, *.list), plus Acquire settings without hook scripts (a snapshot
# mirror needs Check-Valid-Until "false", for example).
apt_files() {
	local f
	[ -f /etc/apt/sources.list ] && echo /etc/apt/sources.list
	for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && echo "$f"
	done
	for f in /etc/apt/apt.conf.d/*; do
		[ -f "$f" ] && grep -q '^[[:space:]]*Acquire' "$f" && ! grep -qi 'Invoke' "$f" && echo "$f"
	done
	return 0
}

# The first http(s) URI of an enabled "deb" source for $suite, deb822 first.
find_mirror() {
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		uri=$(awk -v suite="$suite" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") && enabled != "no" && uri != "")
					{ print uri; found = 1; exit }
				types = suites = uri = ""; enabled = "yes"
			}
			BEGIN { enabled = "yes" }
			/^[[:space:]]*#/ { next }
			/^[[:space:]]*$/ { flush(); next }
			tolower($1) == "types:" { $1 = ""; types = $0; gsub(/^ +| +$/, "", types) }
			tolower($1) == "suites:" { $1 = ""; suites = $0; gsub(/^ +| +$/, "", suites) }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "enabled:" { enabled = tolower($2) }
			END { if (!found) flush() }' "$f")
		[ -n "$uri" ] && { echo "$uri"; return 0; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		# deb [opts] URI SUITE COMPONENTS...
		uri=$(sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
			awk -v suite="$suite" '$1 == "deb" && $3 == suite { print $2; exit }')
		[ -n "$uri" ] && { echo "$uri"; return 0; }
	done
	return 1
}

mapfile -t files < <(apt_files)
key=$( { sha256sum "$0"; for f in "${files[@]}"; do echo "== $f"; cat "$f"; done; } |
	sha256sum | cut -c1-16)
cached=localhost/schedlab-base:$key

if [ "$force" = 0 ] && podman image exists "$cached"; then
	podman tag "$cached" "$target"
	echo "$target"
	exit 0
fi

mirror=$(find_mirror) || {
	echo "base-image.sh: no enabled 'deb' source for '$suite' in /etc/apt; cannot choose a mirror." >&2
	exit 1
}
echo "base-image: debootstrap --variant=minbase $suite from '$mirror'" >&2

root=$(mktemp -d "${TMPDIR:-/var/tmp}/schedlab-rootfs.XXXXXX")
trap 'rm -rf --one-file-system "$root"' EXIT
debootstrap --variant=minbase "$suite" "$root" "$mirror" >&2

# Replace debootstrap's one-line source with the host's own configuration.
rm -f "$root/etc/apt/sources.list"
for f in "${files[@]}"; do
	install -D -m 0644 "$f" "$root$f"
done
# Keyrings named by Signed-By that minbase does not already hold.
for k in $(grep -h -i '^[[:space:]]*Signed-By:' "${files[@]}" 2>/dev/null | awk '{print $2}' | sort -u) \
	$(grep -h -o 'signed-by=[^] ]*' "${files[@]}" 2>/dev/null | cut -d= -f2 | sort -u); do
	[ -f "$k" ] && [ ! -e "$root$k" ] && install -D -m 0644 "$k" "$root$k"
done
for k in /etc/apt/trusted.gpg.d/*; do
	[ -f "$k" ] && [ ! -e "$root$k" ] && install -D -m 0644 "$k" "$root$k"
done
# An image carries no package lists or downloaded .debs.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb "$root"/var/log/*.log

tar --numeric-owner -C "$root" -c . |
	podman import \
		--change 'CMD ["bash"]' \
		--change 'ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change "LABEL=org.schedlab.base-key=$key" \
		--change "LABEL=org.schedlab.mirror=$mirror" \
		- "$cached" >&2
podman tag "$cached" "$target"
echo "$target"
