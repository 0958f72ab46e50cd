#!/usr/bin/env bash
# Load on the HTTP API while a job runs: wrk against GET /v1/health and
# GET /v1/jobs/{id} on a loopback service with a temporary state directory.
# Prints requests/s and p99 latency per endpoint.
# Usage: bench/api-load.sh [DURATION_S (default 10, max 120)] [CONNECTIONS (default 16)]
case "${1:-}" in -h | --help) sed -n '2,5p' "$0"; exit 0 ;; esac
set -uo pipefail
. "$(dirname "$0")/../tests/e2e/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
dur=${1:-10}
conns=${2:-16}
[[ "$dur" =~ ^[0-9]+$ ]] && [ "$dur" -ge 1 ] && [ "$dur" -le 120 ] || { echo "duration 1..120 s" >&2; exit 2; }
[[ "$conns" =~ ^[0-9]+$ ]] && [ "$conns" -ge 1 ] && [ "$conns" -le 200 ] || { echo "connections 1..200" >&2; exit 2; }
e2e_need wrk curl python3
api_need_runner
e2e_tmpdir
api_config "$E2E_TMP/config.json"
API_LOG=$E2E_TMP/serve.log
api_start "$E2E_TMP/state" "$E2E_TMP/config.json"

api_call POST /v1/jobs -H 'Content-Type: application/json' \
	--data-binary "@$E2E_ROOT/examples/seed-reproduction-short.json" >/dev/null
id=$(api_json 'j["id"]')
api_wait_status "$id" building booting running 600 >/dev/null
echo "job $id is $(api_call GET "/v1/jobs/$id" >/dev/null; api_json 'j["status"]') during the load"

lua=$E2E_TMP/auth.lua
printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$API_TOKEN" >"$lua"
for path in /v1/health "/v1/jobs/$id"; do
	out=$(wrk -t2 -c"$conns" -d"${dur}s" --latency -s "$lua" "$API_URL$path" 2>&1)
	rps=$(printf '%s\n' "$out" | sed -n 's/^Requests\/sec: *//p')
	p99=$(printf '%s\n' "$out" | awk '$1 == "99%" {print $2}')
	errs=$(printf '%s\n' "$out" | sed -n 's/^ *Non-2xx or 3xx responses: *//p')
	printf '%-45s %10s req/s   p99 %8s   non-2xx %s\n' "GET $path" "$rps" "$p99" "${errs:-0}"
done
api_call DELETE "/v1/jobs/$id" >/dev/null
api_stop
