#!/usr/bin/env bash
# Which system calls does a sandboxed kernel build make? The seccomp
# allow-list in service/util/sandbox_filter.c comes from this measurement.
# Runs a cold `schedlab kernel build` (tinyconfig + the built-in fragment,
# the series applied by patch, bzImage) of the given spec in a throwaway
# cache under `strace -f -c`, which follows the build into bubblewrap, and
# prints one system call name per line (sorted), with the calls counted
# across every process of the build. For 6.12 specs the build also runs
# pahole (BTF) and the tools/sched_ext schedulers' build (clang, bpftool).
#
# Usage: bench/sandbox-syscalls.sh [--keep DIR] [SPEC.json ...]
#   SPEC.json  default: guest-kernel/linux-6.1/kernel.json and
#              guest-kernel/linux-6.12/kernel.json
#   --keep DIR leave the strace summaries (DIR/NAME.strace) there
# Takes as long as a cold build and more (strace slows each call): about
# 15 min for 6.1 and 40 for 6.12 on 2 cores. Needs strace, and what the
# build needs (scripts/setup.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
keep=
specs=()
while [ $# -gt 0 ]; do
	case $1 in
	--keep) keep=$2; shift 2 ;;
	-h|--help) sed -n '2,17p' "$0"; exit 0 ;;
	*) specs+=("$(realpath "$1")"); shift ;;
	esac
done
[ ${#specs[@]} -gt 0 ] || specs=("$root/guest-kernel/linux-6.1/kernel.json" "$root/guest-kernel/linux-6.12/kernel.json")
command -v strace >/dev/null || { echo "sandbox-syscalls: needs strace (apt-get install strace)" >&2; exit 2; }
make -s -C "$root" build/schedlab >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${keep:-$work}
mkdir -p "$out"
for spec in "${specs[@]}"; do
	name=$(basename "$(dirname "$spec")")
	echo "sandbox-syscalls: building $name cold under strace ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	# -U name,calls,errors: a call every build made but that always failed
	# (denied now) shows with as many errors as calls
	strace -f -qq -c -U name,calls,errors -o "$out/$name.strace" -- \
		"$root/build/schedlab" kernel build "$spec" --cache-dir "$work/cache-$name" --quiet >&2 ||
		{ echo "sandbox-syscalls: the $name build failed" >&2; exit 1; }
	rm -rf "$work/cache-$name"
done
# strace -c's table: header, dashes, rows "name calls errors", a total row
cat "$out"/*.strace | awk 'NF >= 2 && $1 !~ /^(-|syscall|total)/ {print $1}' | sort -u
