#!/usr/bin/env bash
# How `schedlab kernel tree` should leave its objects packed, measured side
# by side on one extracted kernel source: a loose `git add` plus commit and
# then `git repack -a -d`, against `git -c core.bigFileThreshold=1 add`
# (every blob streamed into a pack as it is added) plus commit and a
# `git repack -d` of the remaining loose trees. Either leaves no loose
# object, so the user's first commit starts no background `git gc --auto`.
# Usage: bench/export_pack.sh [SOURCE_TARBALL]
#   SOURCE_TARBALL defaults to Debian's /usr/src/linux-source-6.1.tar.xz.
case "${1:-}" in -h | --help) sed -n '2,9p' "$0"; exit 0 ;; esac
set -euo pipefail
src=${1:-/usr/src/linux-source-6.1.tar.xz}
[ -f "$src" ] || { echo "no kernel source tarball '$src' (apt-get install linux-source-6.1)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-bench-pack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/loose" "$tmp/stream"
tar -xf "$src" -C "$tmp/loose" --strip-components=1
cp -a "$tmp/loose/." "$tmp/stream/"
now() { date +%s.%N; }
g() { git -c gc.auto=0 -c user.name=bench -c user.email=bench@localhost "$@"; }
echo "host load before: $(cut -d' ' -f1-3 /proc/loadavg)"

cd "$tmp/loose"
git init -q
t0=$(now); g add -A -f; g commit -qm base; t1=$(now); g repack -a -d -q; t2=$(now)
printf 'loose add+commit %.1f s, repack -a %.1f s, total %.1f s\n' \
	"$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" "$(echo "$t2 - $t0" | bc)"

cd "$tmp/stream"
git init -q
t0=$(now); g -c core.bigFileThreshold=1 add -A -f; g commit -qm base; t1=$(now); g repack -d -q; t2=$(now)
printf 'streamed add+commit %.1f s, repack -d %.1f s, total %.1f s\n' \
	"$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" "$(echo "$t2 - $t0" | bc)"
echo "loose objects left: $(git count-objects | cut -d' ' -f1)"
echo "host load after: $(cut -d' ' -f1-3 /proc/loadavg)"
