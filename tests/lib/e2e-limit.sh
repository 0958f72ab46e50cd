# shellcheck shell=bash
# Sourced: the time limit of an e2e script, shared by tests/run.sh and
# bench/e2e-repeat.sh so that no script waits unbounded (a wedged libvirtd,
# docs/guests.md).
#   e2e_limit FILE   prints the script's "# timeout: N" (a line of its first
#                    20) or E2E_TIMEOUT_S (default 1200 s)
E2E_TIMEOUT_S=${E2E_TIMEOUT_S:-1200}

e2e_limit() {
	local n
	n=$(head -n 20 "$1" | sed -n 's/^# timeout: *\([0-9]\+\) *$/\1/p' | head -n 1)
	echo "${n:-$E2E_TIMEOUT_S}"
}
