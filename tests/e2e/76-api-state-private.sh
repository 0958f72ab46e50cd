#!/usr/bin/env bash
# tier: host
# The service's state and cache are private: a fresh `schedlab serve` under
# umask 022 makes its state directory and jobs/ 0700, the SQLite database
# and its -wal and -shm files 0600, and the kernel cache it is configured
# with 0700; a state an older schedlab left world-readable is made private
# again at the next start. No guest boots ("workers": 0: the one job stays
# queued).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
e2e_need curl python3 stat
e2e_need_schedlab
e2e_tmpdir
cd "$E2E_TMP"
umask 022
cat >config.json <<CFG
{"tokens": [{"token": "$API_TOKEN", "roles": ["submit", "read"]}],
 "workers": 0, "cache_dir": "$E2E_TMP/fresh/cache"}
CFG
API_LOG=$E2E_TMP/serve.log
state=$E2E_TMP/fresh/state
# api_start makes the directory first (0755 under this umask): the service
# has to tighten it, which is also what an existing install needs.
api_start "$state" config.json
trap 'echo "--- serve log:"; tail -n 20 "$API_LOG"; _api_cleanup' EXIT
api_nobuild_job private >job.json
api_expect 202 POST /v1/jobs -H 'Content-Type: application/json' --data-binary @job.json

mode_is() { # PATH WANT
	local got
	got=$(stat -c %a "$1" 2>/dev/null) || e2e_fail "'$1' is not there"
	[ "$got" = "$2" ] || e2e_fail "'${1#"$E2E_TMP"/}' has mode $got, expected $2"
	echo "ok: ${1#"$E2E_TMP"/} $got"
}
check_all() {
	mode_is "$state" 700
	mode_is "$state/jobs" 700
	mode_is "$state/schedlab.db" 600
	mode_is "$state/schedlab.db-wal" 600
	mode_is "$state/schedlab.db-shm" 600
	mode_is "$E2E_TMP/fresh/cache" 700
}
check_all
# nothing the service wrote under the state is readable by others through it
[ -z "$(find "$state" -maxdepth 1 -perm -o=r)" ] || e2e_fail "world-readable entries at the top of the state"

# An install made wide open (an older schedlab, a careless copy) is made
# private again at start.
api_stop
chmod 755 "$state" "$state/jobs"
chmod 644 "$state/schedlab.db"*
api_start "$state" config.json
TOKEN= api_expect 200 GET /v1/health
check_all
api_stop
echo "state and cache are private"
