#!/usr/bin/env bash
# Which system calls does a sandboxed build make? The seccomp allow-list in
# service/util/sandbox_filter.c comes from this measurement.
#
# Runs, under `strace -f -c` (every process counted), each kind of step the
# sandbox runs, on this host's toolchain:
#   config   make tinyconfig and olddefconfig in an empty object directory
#            (hostcc builds kconfig's conf; flex and bison run);
#   patch    patch --dry-run, apply and revert (-R) of the series;
#   kernel   make bzImage in a cached, complete object directory, in
#            place under the tree's lock, with kernel/sched/core.o removed:
#            gcc, as, ld, objtool, the relink, kallsyms, pahole (6.12's
#            BTF), the compressor and the bzImage tools, without compiling
#            the whole tree (a cold build under strace takes hours on 2
#            cores);
#   scx      for a 6.12 tree: tools/sched_ext's schedulers in a scratch copy
#            (clang, bpftool, libbpf), as kernel/kbuild_scx.c builds them;
#   tools    what the tests run inside: python3, perl, sh, ls, wc, tr.
# and prints the union, one name per line, sorted; then, on stderr, which
# of them service/util/sandbox_filter.c would refuse (exit 1 when a call
# outside its lists was measured: add it, or say why it may fail).
#
# Usage: bench/sandbox-syscalls.sh [--keep DIR] [--cache DIR]
#   --cache DIR  the schedlab cache holding built trees (default
#                $SCHEDLAB_CACHE or ~/.cache/schedlab); every tree under
#                DIR/trees whose obj/ holds a vmlinux is measured
#   --keep DIR   leave the strace tables (DIR/STEP-TREE.strace) there
# About 5 to 15 minutes on 2 cores per tree. Needs strace and the build's
# tools (scripts/setup.sh); clang-16 and bpftool for the scx step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
keep= cache=${SCHEDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab}
while [ $# -gt 0 ]; do
	case $1 in
	--keep) keep=$2; shift 2 ;;
	--cache) cache=$2; shift 2 ;;
	-h|--help) sed -n '2,29p' "$0"; exit 0 ;;
	*) echo "sandbox-syscalls: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
command -v strace >/dev/null || { echo "sandbox-syscalls: needs strace (apt-get install strace)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${keep:-$work/tables}
mkdir -p "$out"
trace() { # trace NAME COMMAND...: the command's calls into $out/NAME.strace
	local name=$1
	shift
	echo "sandbox-syscalls: $name ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	strace -f -qq -c -U name,calls,errors -o "$out/$name.strace" -- "$@" >"$work/$name.log" 2>&1 ||
		{ echo "sandbox-syscalls: $name failed:" >&2; tail -20 "$work/$name.log" >&2; exit 1; }
}
n=0
for tree in "$cache"/trees/*/; do
	# NAME.N is a second build slot's copy of tree NAME: the same tools
	case $(basename "$tree") in *.*) continue ;; esac
	src=$tree/src obj=$tree/obj
	[ -f "$obj/vmlinux" ] && [ -f "$src/Makefile" ] || continue
	id=$(basename "$tree")
	n=$((n + 1))
	trace "config-$id" make -s -C "$src" O="$work/cfg-$id" tinyconfig
	trace "olddefconfig-$id" make -s -C "$src" O="$work/cfg-$id" olddefconfig
	rm -rf "$work/cfg-$id"
	# the built-in series' last patch, reverted as a dry run: patch reads
	# the tree and writes nothing
	series=$root/guest-kernel/linux-$(make -s -C "$src" kernelversion | cut -d. -f1-2)
	p=$(ls "$series"/0*.patch 2>/dev/null | tail -1)
	[ -z "$p" ] || trace "patch-$id" sh -c "patch -p1 -R --dry-run -d '$src' <'$p' >/dev/null || true"
	# In place, under the tree's lock: kbuild rebuilds every object whose
	# command line changed, and O= and CC are on it, so a copy elsewhere or
	# another CC would rebuild the whole tree. Removing core.o and making
	# bzImage again rebuilds the same kernel the directory held.
	exec 9>"${tree%/}.lock"
	flock 9
	rm -f "$obj/kernel/sched/core.o"
	trace "kernel-$id" make -C "$src" O="$obj" -j2 "CC=ccache gcc" bzImage
	if [ -d "$src/tools/sched_ext" ] && grep -q '^CONFIG_SCHED_CLASS_EXT=y' "$obj/.config" &&
		command -v clang-16 >/dev/null; then
		mkdir -p "$work/scx-$id"
		trace "scx-$id" make -C "$src/tools/sched_ext" O="$work/scx-$id" \
			VMLINUX_BTF="$obj/vmlinux" -j2 CLANG=clang-16
	fi
	exec 9>&-
	rm -rf "$work/scx-$id"
done
[ "$n" -gt 0 ] || { echo "sandbox-syscalls: no built tree under $cache/trees (build a kernel first)" >&2; exit 1; }
trace tools sh -c 'python3 -c "import socket, ctypes" && perl -e "1" && ls / | wc -l | tr -d " " >/dev/null && id -u >/dev/null && grep -c . /proc/self/status >/dev/null'
# strace -c's table: a header, dashes, rows "name calls errors", a total row
cat "$out"/*.strace | awk 'NF >= 2 && $1 !~ /^(-|syscall|total)/ {print $1}' | sort -u >"$work/calls"
cat "$work/calls"
# what the filter would refuse: names in no list of sandbox_filter.c (socket
# and clone have rules of their own; clone3's ENOSYS is meant)
python3 - "$root/service/util/sandbox_filter.c" "$work/calls" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
lists = {}
for name in ("allowed", "denied"):
    body = re.search(r"static const char \*const %s\[\] = \{(.*?)\n\};" % name, src, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    lists[name] = set(re.findall(r'"([a-z0-9_]+)"', body))
ruled = {"socket", "clone", "clone3"}
calls = [c.strip() for c in open(sys.argv[2]) if c.strip()]
refused = [c for c in calls if c not in lists["allowed"] | ruled]
denied = [c for c in refused if c in lists["denied"]]
unlisted = [c for c in refused if c not in lists["denied"]]
print(f"sandbox-syscalls: {len(calls)} calls measured; the filter allows "
      f"{len(calls) - len(refused)}, denies {denied or 'none'} (EPERM), "
      f"and would answer {unlisted or 'none'} with ENOSYS", file=sys.stderr)
sys.exit(1 if unlisted else 0)
PY
