#!/usr/bin/env bash
# Sandboxed kernel builds (docs/kernel-builds.md "The sandbox"):
# hostile candidate patches against the real built-in tree, each a rule at
# the top of the kernel's Makefile that acts while `make tinyconfig` reads it
# and then stops make. Each job exits 1 with the candidate's kernel
# build_failed, and nothing of the host changed:
#   write   files outside the tree (this test's dir, the cache's kernels/ and
#           ccache/, $HOME, the source tree itself): none appears;
#   read    a secret planted in this test's dir: not in the result or logs;
#   socket  a TCP connection to a listener this test runs on 127.0.0.1: the
#           listener sees none (a connection from the host is seen); the
#           seccomp filter already refuses the AF_INET socket;
#   fork    3000 background processes: the process limit stops it near 512,
#           and none is left afterwards;
#   hang    a rule that sleeps: --build-timeout stops it;
#   inside  what the build is: not uid 0 (as root: the sandbox's own uid,
#           not 65534), no capabilities, no user namespace of its own
#           (unshare -Ur fails), keyctl(2) and an AF_INET socket fail with
#           EPERM (the seccomp filter), /usr/local empty; the build log
#           says which cgroup limits held, or why none.
# Then: the base kernel is still a cache hit (the key did not change), and
# without bwrap a build that needs it is an error naming the package.
# 51 s with the base kernel cached, at load 15 on 2 cores (5 jobs of 1-16 s:
# revert the last patch, apply, tinyconfig; the fork bomb is the longest).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
e2e_need_schedlab
e2e_need jq python3 bwrap
[ -f /usr/src/linux-source-6.1.tar.xz ] || e2e_skip "needs the Debian package linux-source-6.1"
e2e_tmpdir
cd "$E2E_TMP"
cache=${SCHEDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab}
home_mark="$HOME/schedlab-e2e-sandbox-$$"
listener_pid=
cleanup() {
	[ -n "$listener_pid" ] && kill "$listener_pid" 2>/dev/null
	rm -f -- "$home_mark" "$cache/kernels/w-kernels-$$" "$cache/ccache/w-ccache-$$" \
		"$cache"/trees/*/src/w-src
	_e2e_cleanup
}
trap cleanup EXIT

# The base kernel first: every job below takes it from the cache.
t0=$SECONDS
"$SCHEDLAB" kernel build "$E2E_KERNEL_SPEC" --json -q >base.json
echo "base kernel: cached=$(jq .cached base.json) in $((SECONDS - t0)) s"

# hostile NAME MAKEFILE-LINE [schedlab run options]: a patch adding the
# line (make syntax) and a stop after it at the top of the Makefile, run as
# the candidate of a CI-shorthand job; checks the result says build_failed.
hostile() {
	local name=$1 line=$2
	shift 2
	cat >"$name.patch" <<EOF
--- a/Makefile
+++ b/Makefile
@@ -1,4 +1,6 @@
 # SPDX-License-Identifier: GPL-2.0
+HOSTILE := $line
+\$(error hostile $name: \$(HOSTILE))
 VERSION = 6
 PATCHLEVEL = 1
 SUBLEVEL = 192
EOF
	if [ -n "${hostile_script:-}" ]; then
		printf -- '--- /dev/null\n+++ b/hostile.sh\n@@ -0,0 +1,%d @@\n' \
			"$(printf '%s\n' "$hostile_script" | wc -l)" >>"$name.patch"
		printf '%s\n' "$hostile_script" | sed 's/^/+/' >>"$name.patch"
	fi
	jq -n --arg p "$name.patch" '{
		name: "sandbox",
		base: {source: "debian:linux-source-6.1", patches: [{series: "linux-6.1"}],
		       config: {builtin: "linux-6.1"}},
		patches: [{path: $p}],
		workloads: [{tool: "rt-migrate-test", args: ["-p", "60", "-l", "60", "3"], timeout_s: 90}],
		repeat: 2
	}' >"$name-job.json"
	local rc=0 t=$SECONDS
	"$SCHEDLAB" run "$name-job.json" -o "$name.json" --job-dir "$name.job" -q "$@" \
		>"$name.out" 2>"$name.err" || rc=$?
	echo "$name: exit $rc in $((SECONDS - t)) s"
	[ "$rc" -eq 1 ] || e2e_fail "$name: exit $rc, want 1; stderr: $(tail -5 "$name.err")"
	jq -e '.kernels.base.build.status == "ok" and .kernels.patched.build.status == "build_failed"' \
		"$name.json" >/dev/null ||
		e2e_fail "$name: not build_failed: $(jq -c '.kernels.patched.build | del(.log_excerpt)' "$name.json")"
	jq -e '.variants.patched.not_built == true and .comparisons == []' "$name.json" >/dev/null ||
		e2e_fail "$name: the candidate is not marked not_built"
	# the reason names the step, and is text without control bytes (the
	# write rule prints an escape sequence)
	jq -e '.kernels.patched.build.message | startswith("'"'"'make tinyconfig'"'"' failed (exit 2): ") or
		startswith("The kernel build step '"'"'make'"'"' did not finish")' "$name.json" >/dev/null ||
		e2e_fail "$name: the message does not name the failed step: $(jq -r .kernels.patched.build.message "$name.json" | cut -c1-300)"
	jq -e '[.kernels.patched.build.message, .kernels.patched.build.log_excerpt] |
		all(test("[\u0001-\u0008\u000b-\u001f\u007f]") | not)' "$name.json" >/dev/null ||
		e2e_fail "$name: a control byte in the message or the excerpt"
	jq -r '.kernels.patched.build.message' "$name.json" | cut -c1-300
}

# 1. write outside the tree
hostile write "\$(shell sh -c 'for f in $E2E_TMP/w-outside $cache/kernels/w-kernels-$$ $cache/ccache/w-ccache-$$ $home_mark \$(CURDIR)/w-src; do echo pwned > \$\$f && echo wrote \$\$f; done; printf \\\\033[2J' 2>&1)"
for f in "$E2E_TMP/w-outside" "$cache/kernels/w-kernels-$$" "$cache/ccache/w-ccache-$$" "$home_mark"; do
	[ ! -e "$f" ] || e2e_fail "write: the build wrote '$f'"
done
if ls "$cache"/trees/*/src/w-src >/dev/null 2>&1; then
	rm -f "$cache"/trees/*/src/w-src
	e2e_fail "write: the build wrote into the source tree"
fi
jq -e '.kernels.patched.build.log_excerpt | test("hostile write: .*(Read-only|Directory nonexistent|Permission denied)")' \
	write.json >/dev/null || e2e_fail "write: the rule did not run, or did not fail to write: $(jq -r .kernels.patched.build.log_excerpt write.json | tail -3)"
echo "ok: writes outside the object directory fail"

# 2. read a file outside the tree
secret=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$secret" >secret.txt
hostile read "\$(shell cat $E2E_TMP/secret.txt 2>&1; ls $cache/kernels 2>&1)"
jq -e '.kernels.patched.build.log_excerpt | test("hostile read: .*No such file")' read.json >/dev/null ||
	e2e_fail "read: the rule did not run: $(jq -r .kernels.patched.build.log_excerpt read.json | tail -3)"
if grep -rqs "$secret" read.json read.job read.out read.err "$cache"/kernels/*.failed.log; then
	e2e_fail "read: the secret is in the result or a log"
fi
echo "ok: a file outside the sandbox cannot be read"

# 3. a socket: a listener on 127.0.0.1 counts the connections it accepts
python3 - "$E2E_TMP/listener" <<'EOF' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".port.tmp", "w").write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".port.tmp", sys.argv[1] + ".port")
while True:
    c, _ = s.accept()
    with open(sys.argv[1] + ".hits", "a") as f:
        f.write("hit\n")
    c.close()
EOF
listener_pid=$!
for _ in $(seq 50); do [ -s listener.port ] && break; sleep 0.1; done
port=$(cat listener.port)
python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 3).close()"
for _ in $(seq 20); do [ -s listener.hits ] && break; sleep 0.1; done
[ -s listener.hits ] || e2e_fail "socket: the listener does not see a connection from the host"
rm -f listener.hits
hostile socket "\$(shell python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $port), 3); print(\"connected\")' 2>&1 | tail -1)"
sleep 1
[ ! -e listener.hits ] || e2e_fail "socket: the listener saw a connection from the build"
# the seccomp filter refuses an AF_INET socket (EPERM); without it the
# connection fails in the empty network namespace
jq -e '.kernels.patched.build.log_excerpt | test("hostile socket: .*(unreachable|refused|Operation not permitted)")' socket.json \
	>/dev/null || e2e_fail "socket: the rule did not run: $(jq -r .kernels.patched.build.log_excerpt socket.json | tail -3)"
echo "ok: no network in the sandbox"

# 4. fork endlessly: each child sleeps, so they add up
hostile fork "\$(shell sh -c 'i=0; while [ \$\$i -lt 3000 ]; do sleep 4242 >/dev/null 2>&1 & i=\$\$((i+1)); echo \$\$i >/tmp/forked; done' 2>/dev/null; read n </tmp/forked; echo forked \$\$n)" --build-timeout 120
n=$(jq -r '.kernels.patched.build.log_excerpt' fork.json | sed -n 's/.*hostile fork: forked \([0-9]*\).*/\1/p' | tail -1)
[ -n "$n" ] || e2e_fail "fork: the rule did not report: $(jq -r .kernels.patched.build.log_excerpt fork.json | tail -3)"
echo "fork: $n processes started before the limit"
{ [ "$n" -lt 3000 ] && [ "$n" -le 512 ]; } || e2e_fail "fork: $n processes started; the limit is 512"
sleep 1
if pgrep -f "sleep 4242" >/dev/null; then
	e2e_fail "fork: $(pgrep -fc 'sleep 4242') of the build's processes outlived it"
fi
echo "ok: the process limit holds and nothing outlives the build"

# 5. a build that hangs: the time limit stops it
# 20 s: the limit holds for each step, and the untrusted build's copy of
# obj/ (cp -a, on the host) took more than 8 s here under load
hostile hang "\$(shell sleep 4343)" --build-timeout 20
jq -e '.kernels.patched.build.message | test("did not finish within 20 s")' hang.json >/dev/null ||
	e2e_fail "hang: the message does not name the time limit"
sleep 1
pgrep -f "sleep 4343" >/dev/null && e2e_fail "hang: the sleeping rule outlived the build"
echo "ok: the time limit stops a build"

# 5b. what the build runs as, and what it may not do: a script the patch
# adds (hostile() appends $hostile_script as the new file hostile.sh)
hostile_script=$(cat <<'EOF'
echo uid=$(id -u)
grep CapEff /proc/self/status
unshare -Ur true 2>/dev/null && echo userns=made || echo userns=refused
perl -e 'syscall(250, 0, 0, 0, 0, 0); printf "keyctl=%d\n", $!+0'
perl -MSocket -e 'socket(my $s, PF_INET, SOCK_STREAM, 0) ? print "inet=made\n" : printf "inet=%d\n", $!+0'
echo usrlocal=$(ls -A /usr/local | wc -l)
EOF
)
hostile inside "\$(shell sh hostile.sh 2>&1 | tr '\n' ' ')"
hostile_script=
inside=$(jq -r '.kernels.patched.build.log_excerpt' inside.json | grep 'hostile inside' | tail -1)
echo "inside: $inside"
[[ $inside == *"uid=0 "* || $inside == *"uid=65534 "* ]] && e2e_fail "inside: the build runs as uid 0 or nobody"
[[ $inside == *"uid="[0-9]* ]] || e2e_fail "inside: the script did not run"
[[ $inside == *"CapEff:"*"0000000000000000"* ]] || e2e_fail "inside: the build has capabilities"
[[ $inside == *"userns=refused"* ]] || e2e_fail "inside: the build made a user namespace"
[[ $inside == *"keyctl=1 "* ]] || e2e_fail "inside: keyctl did not fail with EPERM (no seccomp filter)"
[[ $inside == *"inet=1 "* ]] || e2e_fail "inside: an AF_INET socket did not fail with EPERM"
[[ $inside == *"usrlocal=0"* ]] || e2e_fail "inside: /usr/local is visible"
# One grep, no pipe: under pipefail a "grep | grep -q" fails by SIGPIPE
# whenever the first grep has more to write after the second has matched.
grep -qsE "schedlab: sandbox: uid [0-9]+ in a user namespace, seccomp allow-list, cgroup (memory[.]max=|unavailable: .)" \
	"$cache"/kernels/*.failed.log ||
	e2e_fail "inside: the build log does not say which cgroup limits held"
echo "ok: the build is unprivileged in its own user namespace, filtered, without /usr/local"

# 6. the base kernel is still a cache hit: the sandbox changed no key
"$SCHEDLAB" kernel build "$E2E_KERNEL_SPEC" --json -q >again.json
jq -e '.cached == true' again.json >/dev/null || e2e_fail "the base kernel is no longer a cache hit"
[ "$(jq -r .key again.json)" = "$(jq -r .key base.json)" ] || e2e_fail "the base kernel's key changed"
echo "ok: the base kernel is a cache hit with the same key"

# 7. no bwrap: a build that needs it fails naming the package; a hit does not need it
mkdir nobwrap
for t in gcc sed cat; do ln -s "$(command -v $t)" nobwrap/$t; done
rc=0
PATH="$E2E_TMP/nobwrap" "$SCHEDLAB" kernel build "$E2E_KERNEL_SPEC" -q >/dev/null 2>nob-hit.err || rc=$?
[ "$rc" -eq 0 ] || e2e_fail "no bwrap: a cache hit failed: $(cat nob-hit.err)"
jq '{source: "debian:linux-source-6.1", series: "'"$E2E_ROOT"'/guest-kernel/linux-6.1/series",
     patches: ["'"$E2E_TMP"'/write.patch"], config: "'"$E2E_ROOT"'/guest-kernel/linux-6.1/schedlab.config"}' \
	-n >nobwrap.json
rc=0
PATH="$E2E_TMP/nobwrap" "$SCHEDLAB" kernel build nobwrap.json -q >/dev/null 2>nob.err || rc=$?
[ "$rc" -eq 2 ] || e2e_fail "no bwrap: exit $rc, want 2: $(cat nob.err)"
grep -q "Debian package 'bubblewrap'" nob.err || e2e_fail "no bwrap: the error does not name the package: $(cat nob.err)"
grep -q -- "--no-sandbox" nob.err || e2e_fail "no bwrap: the error does not say --no-sandbox"
echo "ok: without bwrap the build fails naming the package"
