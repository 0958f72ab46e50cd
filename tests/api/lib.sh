#!/usr/bin/env bash
# Black-box helpers for the HTTP API tests (tests/e2e/6x-*.sh, bench/api-load.sh):
# start the real `schedlab serve` on a free loopback port with a temporary
# state directory, talk to it with curl, stop it. Source after tests/e2e/lib.sh.
#   api_config FILE       writes a config with three tokens ($API_TOKEN: submit+read,
#                         $API_TOKEN_RO: read, $API_TOKEN_ADMIN: submit+read+admin,
#                         for priorities above 0) and one worker
#   api_start STATE [CFG] starts the service; sets API_PID, API_URL, API_LOG
#   api_stop              SIGTERM, waits (running jobs are re-queued), then SIGKILL
#   api_kill9             SIGKILL, the crash case
#   api_call METHOD PATH [CURL ARGS...]  prints the body to $API_BODY, the status on stdout
#   api_json EXPR         evaluates a python3 expression on the JSON in $API_BODY (as j)
#   api_wait_status ID STATUS... [TIMEOUT_S]   polls until the job has one of the statuses
#   api_need_runner       skips when this build has no job runner (runner.c)
#   api_start_receiver DIR [--fail-first]  starts tests/api/webhook_receiver.py
#                         saving POSTs as DIR/N.json; sets API_HOOK_URL (killed
#                         at exit)
# The EXIT trap kills a server still running and removes the temp dirs.
# shellcheck shell=bash

API_TOKEN=${API_TOKEN:-api-test-token-submit-and-read-0001}
API_TOKEN_RO=${API_TOKEN_RO:-api-test-token-read-only-000000002}
API_TOKEN_ADMIN=${API_TOKEN_ADMIN:-api-test-token-admin-0000000000003}
API_PID=
API_URL=
API_LOG=
API_BODY=

API_RECV_PID=
API_HOOK_URL=

_api_cleanup() {
	[ -z "$API_RECV_PID" ] || kill "$API_RECV_PID" 2>/dev/null
	if [ -n "$API_PID" ] && kill -0 "$API_PID" 2>/dev/null; then
		kill -9 "$API_PID" 2>/dev/null
		wait "$API_PID" 2>/dev/null
	fi
	_e2e_cleanup
}
trap _api_cleanup EXIT

api_start_receiver() {
	local dir=$1
	shift
	mkdir -p "$dir"
	rm -f "$dir/.port"
	python3 "$E2E_ROOT/tests/api/webhook_receiver.py" "$dir/.port" "$dir" "$@" &
	API_RECV_PID=$!
	for _ in $(seq 1 50); do [ -s "$dir/.port" ] && break; sleep 0.1; done
	[ -s "$dir/.port" ] || e2e_fail "the webhook receiver did not start"
	API_HOOK_URL=http://127.0.0.1:$(cat "$dir/.port")/hook
}

api_need_runner() {
	e2e_need_schedlab
	nm "$SCHEDLAB" 2>/dev/null | grep ' T runner_run_job$' >/dev/null ||
		e2e_skip "this build has no job runner (service/run/runner.c), so 'serve' cannot run jobs"
}

api_config() {
	cat >"$1" <<EOF
{"tokens": [{"token": "$API_TOKEN", "roles": ["submit", "read"]},
            {"token": "$API_TOKEN_RO", "roles": ["read"]},
            {"token": "$API_TOKEN_ADMIN", "roles": ["submit", "read", "admin"]}],
 "workers": 1,
 "limits": {"max_body_bytes": 1048576}}
EOF
}

api_start() {
	local state=$1 cfg=${2:-} i
	mkdir -p "$state"
	API_LOG=${API_LOG:-$state.log}
	# Set here, not in api_call: that runs in $(...) subshells.
	API_BODY=$state.body
	rm -f "$state.port"
	"$SCHEDLAB" serve --listen 127.0.0.1:0 --state "$state" ${cfg:+--config "$cfg"} \
		--port-file "$state.port" >>"$API_LOG" 2>&1 </dev/null &
	API_PID=$!
	for i in $(seq 1 200); do
		[ -s "$state.port" ] && break
		kill -0 "$API_PID" 2>/dev/null || {
			cat "$API_LOG" >&2
			e2e_fail "schedlab serve exited during start"
		}
		sleep 0.1
	done
	[ -s "$state.port" ] || e2e_fail "schedlab serve did not start within 20 s"
	API_URL=http://127.0.0.1:$(cat "$state.port")
	echo "service up at $API_URL (pid $API_PID)"
}

api_stop() {
	[ -n "$API_PID" ] || return 0
	kill -TERM "$API_PID" 2>/dev/null
	local i
	for i in $(seq 1 600); do
		kill -0 "$API_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$API_PID" 2>/dev/null
	wait "$API_PID" 2>/dev/null
	API_PID=
}

api_kill9() {
	kill -9 "$API_PID"
	wait "$API_PID" 2>/dev/null
	API_PID=
}

# api_call METHOD PATH [extra curl args]: body to $API_BODY, status on stdout.
# The token is $TOKEN if set (empty: none), else $API_TOKEN.
api_call() {
	local method=$1 path=$2
	shift 2
	local tok=${TOKEN-$API_TOKEN}
	local auth=()
	[ -n "$tok" ] && auth=(-H "Authorization: Bearer $tok")
	curl -sS --max-time 60 -o "$API_BODY" -w '%{http_code}' -X "$method" "${auth[@]}" "$@" \
		"$API_URL$path"
}

api_json() {
	python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" "$API_BODY"
}

# api_expect STATUS METHOD PATH [curl args]: fails unless the status matches.
api_expect() {
	local want=$1
	shift
	local got
	got=$(api_call "$@")
	if [ "$got" != "$want" ]; then
		echo "body: $(head -c 600 "$API_BODY")" >&2
		e2e_fail "$1 $2: HTTP $got, expected $want"
	fi
	echo "ok: $1 $2 -> $got"
}

api_wait_status() {
	local id=$1
	shift
	local timeout=1800
	local want=("$@")
	if [[ "${want[-1]}" =~ ^[0-9]+$ ]]; then
		timeout=${want[-1]}
		unset 'want[-1]'
	fi
	local end=$((SECONDS + timeout)) st w
	while [ $SECONDS -lt $end ]; do
		api_call GET "/v1/jobs/$id" >/dev/null
		st=$(api_json 'j["status"]' 2>/dev/null) || st=
		for w in "${want[@]}"; do
			[ "$st" = "$w" ] && { echo "job $id is $st"; return 0; }
		done
		case "$st" in done | failed | cancelled)
			head -c 2000 "$API_BODY" >&2
			e2e_fail "job $id ended $st while waiting for ${want[*]}" ;;
		esac
		sleep 1
	done
	e2e_fail "job $id did not reach ${want[*]} within ${timeout}s (last: $st)"
}

# api_nobuild_job NAME: prints a CI-shorthand job named NAME whose base
# kernel does not build (a patch that does not apply to kernel/sched/core.c):
# submitted, it fails within seconds and no guest boots.
api_nobuild_job() {
	python3 - "$1" <<'PY'
import json, sys
bad = ("--- a/kernel/sched/core.c\n+++ b/kernel/sched/core.c\n"
       "@@ -1,3 +1,3 @@\n-no such line in core.c\n+nor this one\n context that is not there\n")
print(json.dumps({
    "name": sys.argv[1],
    "base": {"source": "debian:linux-source-6.1",
             "patches": [{"series": "linux-6.1"},
                         {"name": "0001-does-not-apply.patch", "content": bad}],
             "config": {"builtin": "linux-6.1"}},
    "patches": [],
    "workloads": [{"tool": "rt-migrate-test", "args": ["-p", "60", "-l", "10", "3"]}],
    "repeat": 1}))
PY
}
