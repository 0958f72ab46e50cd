#!/usr/bin/env bash
# tier: host
# "--help on every command": every schedlab command and subcommand, every
# benchmark script under bench/, the test driver and the setup script answer
# --help with a usage text on stdout and exit 0, quickly and without doing
# anything else (a script that ignored --help would start its benchmark: the
# 20 s bound catches that). A new command or script is covered without a
# change here.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/e2e/lib.sh
e2e_need_schedlab
e2e_tmpdir

check() { # check LABEL COMMAND...
	local label=$1 rc=0
	shift
	timeout 20 "$@" --help >"$E2E_TMP/out" 2>"$E2E_TMP/err" </dev/null || rc=$?
	[ "$rc" = 0 ] || e2e_fail "$label --help exited $rc: $(head -c 300 "$E2E_TMP/err")"
	grep -q "Usage" "$E2E_TMP/out" || e2e_fail "$label --help printed no 'Usage' line on stdout"
	echo "ok $label"
	n=$((n + 1))
}
n=0
check "schedlab" "$SCHEDLAB"
# The commands are the ones `schedlab --help` lists.
commands=$("$SCHEDLAB" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ "$(wc -w <<<"$commands")" -ge 10 ] || e2e_fail "schedlab --help lists too few commands: $commands"
for c in $commands; do
	check "schedlab $c" "$SCHEDLAB" "$c"
done
for sub in "kernel build" "kernel key" "kernel tree" "guest run"; do
	# shellcheck disable=SC2086 # the words are the subcommand
	check "schedlab $sub" "$SCHEDLAB" $sub
done
for f in bench/*.sh; do
	check "$f" bash "$f"
done
check tests/run.sh bash tests/run.sh
check scripts/setup.sh bash scripts/setup.sh
echo "$n commands and scripts answer --help"
