#!/usr/bin/env bash
# timeout: 2700
# The HTTP API against bad input, with the real service: malformed JSON,
# wrong types, unknown fields, a huge body, a wrong content type, missing and
# bad tokens, a token without the role, unknown job ids, path traversal in
# ids and in patch names (JSON and multipart), and cancelling a running job
# (its guest domains are gone afterwards). Nothing outside the state
# directory may be touched.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
e2e_need curl python3 virsh
api_need_runner
e2e_tmpdir
cd "$E2E_TMP"
api_config config.json
API_LOG=$E2E_TMP/serve.log
api_start "$E2E_TMP/state" config.json
trap 'echo "--- serve log:"; tail -n 40 "$API_LOG"; _api_cleanup' EXIT
J=(-H 'Content-Type: application/json')

# Error bodies carry code, message and (for input errors) the JSON path.
api_expect 400 POST /v1/jobs "${J[@]}" --data-binary '{"name": "x", '
[ "$(api_json 'j["error"]["code"]')" = invalid ] || e2e_fail "malformed JSON: code"
api_json 'j["error"]["message"]'
api_expect 400 POST /v1/jobs "${J[@]}" --data-binary '{"name": "x"} trailing'
api_expect 400 POST /v1/jobs "${J[@]}" --data-binary '[]'
api_expect 400 POST /v1/jobs "${J[@]}" --data-binary '{"name": 17}'
api_expect 400 POST /v1/jobs "${J[@]}" --data-binary @- <<'EOF'
{"name": "t", "base": {"source": "debian:linux-source-6.1"}, "patches": [], "repeat": "three",
 "workloads": [{"tool": "rt-migrate-test", "args": ["3"]}]}
EOF
[ "$(api_json 'j["error"].get("path")')" = '$.repeat' ] || e2e_fail "wrong type: path is not \$.repeat"
api_expect 400 POST /v1/jobs "${J[@]}" --data-binary @- <<'EOF'
{"name": "t", "base": {"source": "debian:linux-source-6.1"}, "patches": [], "surprise": 1,
 "workloads": [{"tool": "rt-migrate-test", "args": ["3"]}]}
EOF
[ "$(api_json 'j["error"].get("path")')" = '$.surprise' ] || e2e_fail "unknown field: path is not \$.surprise"

# Size and type limits (max_body_bytes is 1 MiB in this config).
head -c 2000000 /dev/zero | tr '\0' ' ' >huge.json
api_expect 413 POST /v1/jobs "${J[@]}" --data-binary @huge.json
api_expect 415 POST /v1/jobs -H 'Content-Type: text/plain' --data-binary '{}'
api_expect 415 POST /v1/jobs -H 'Content-Type: application/x-www-form-urlencoded' --data 'a=b'

# Tokens: none, wrong, and read-only for a submit.
TOKEN= api_expect 401 GET /v1/jobs
TOKEN=not-a-valid-token-at-all-000000 api_expect 401 GET /v1/jobs
TOKEN=$API_TOKEN_RO api_expect 200 GET /v1/jobs
TOKEN=$API_TOKEN_RO api_expect 403 POST /v1/jobs "${J[@]}" --data-binary '{}'

# Unknown and hostile ids: a 400 or 404, never a file.
api_expect 404 GET /v1/jobs/0123456789abcdef0123456789abcdef
api_expect 404 DELETE /v1/jobs/0123456789abcdef0123456789abcdef
for p in '/v1/jobs/..%2F..%2Fetc%2Fpasswd' '/v1/jobs/..%2F..%2F..%2Fetc/result' \
	'/v1/jobs/%2e%2e/log' '/v1/jobs/ABCDEF0123456789abcdef0123456789/log'; do
	st=$(api_call GET "$p" --path-as-is)
	case "$st" in 400 | 404) echo "ok: GET $p -> $st" ;; *) e2e_fail "GET $p: HTTP $st" ;; esac
	grep -q 'root:' "$API_BODY" && e2e_fail "GET $p leaked a file"
done

# Patch names are plain file names, in JSON and in multipart uploads.
api_expect 400 POST /v1/jobs "${J[@]}" --data-binary @- <<'EOF'
{"name": "t", "base": {"source": "debian:linux-source-6.1"},
 "patches": [{"name": "../../etc/passwd", "content": "x"}],
 "workloads": [{"tool": "rt-migrate-test", "args": ["3"]}]}
EOF
echo "traversal in JSON at: $(api_json 'j["error"]["path"]')"
printf -- '--- a/x\n+++ b/x\n' >ok.patch
cat >short.json <<'EOF'
{"name": "t", "base": {"source": "debian:linux-source-6.1", "config": {"builtin": "linux-6.1"},
 "patches": [{"series": "linux-6.1"}]}, "patches": [],
 "workloads": [{"tool": "rt-migrate-test", "args": ["-p", "60", "-l", "10", "3"]}], "repeat": 1}
EOF
api_expect 400 POST /v1/jobs -F "job=<short.json;type=application/json" \
	-F 'patch=@ok.patch;filename=../../etc/passwd'
api_expect 400 POST /v1/jobs -F "job=<short.json;type=application/json" \
	-F 'patch:nosuchkernel=@ok.patch'
api_expect 400 POST /v1/jobs -F 'patch=@ok.patch'
"$SCHEDLAB" validate --job short.json >/dev/null || e2e_fail "short.json should be a valid job"
find "$E2E_TMP" -name passwd | grep . && e2e_fail "a file named passwd was created"

# Cancel a running job: submit the short seed job, wait until a guest or a
# build runs, cancel, and check that its domains are gone.
api_expect 202 POST /v1/jobs "${J[@]}" --data-binary "@$E2E_ROOT/examples/seed-reproduction-short.json"
id=$(api_json 'j["id"]')
api_wait_status "$id" booting running 2400
# A guest is up once its run directory exists (named by the run id).
ours=()
for i in $(seq 1 600); do
	for d in "$E2E_TMP"/state/jobs/"$id"/runs/*/; do
		[ -d "$d" ] && ours+=("schedlab-$(basename "$d")")
	done
	[ ${#ours[@]} -gt 0 ] && break
	sleep 0.1
done
[ ${#ours[@]} -gt 0 ] || e2e_fail "no run of job $id started within 60 s"
sleep 1
e2e_virsh list --name | grep -x "${ours[0]}" || echo "(domain ${ours[0]} not up yet)"
api_expect 202 DELETE "/v1/jobs/$id"
[ "$(api_json 'j["cancel_requested"]')" = True ] || e2e_fail "cancel was not requested"
api_wait_status "$id" cancelled 120
api_expect 409 DELETE "/v1/jobs/$id"
api_expect 409 GET "/v1/jobs/$id/result"
# The run ids of this job name its domains: none may still run.
# (captured before the cancel: the runner may remove a cancelled run's directory)
for dom in "${ours[@]}"; do
	e2e_virsh list --name | grep -qx "$dom" && e2e_fail "domain $dom still runs"
	echo "domain $dom is gone"
done
grep -q "job $id cancelled" "$API_LOG" || e2e_fail "the log does not show the cancel"

# A queued job is cancelled at once.
api_expect 202 POST /v1/jobs "${J[@]}" --data-binary "@$E2E_ROOT/examples/seed-reproduction-short.json"
a=$(api_json 'j["id"]')
api_expect 202 POST /v1/jobs "${J[@]}" --data-binary "@$E2E_ROOT/examples/seed-reproduction-short.json"
b=$(api_json 'j["id"]')
api_expect 200 DELETE "/v1/jobs/$b"
[ "$(api_json 'j["status"]')" = cancelled ] || e2e_fail "queued job not cancelled at once"
st=$(api_call DELETE "/v1/jobs/$a")
case "$st" in 200 | 202) ;; *) e2e_fail "DELETE $a: HTTP $st" ;; esac
api_wait_status "$a" cancelled 120
api_stop
trap _api_cleanup EXIT
echo "61-api-bad-input: ok"
