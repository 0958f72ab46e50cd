#!/usr/bin/env bash
# tier: host
# Quotas, ownership, submit-time checks and bounded storage with the real
# service, which runs no job here ("workers": 0 holds them all
# in the queue), so no guest or build is started:
#   - a token with "roles": [] is 403, not 401;
#   - priority above 0 needs the admin role (403 naming "priority");
#   - a submit token cancels only its own jobs (403), admin any;
#   - beyond a token's queued-job quota: 429, Retry-After, the limit named;
#   - an unknown Debian source, series or config, and NUL in a patch: 400
#     naming the field, no host path in the message;
#   - 1000 jobs submitted and cancelled at once leave the store bounded
#     (retention at age 0), and an 8 MiB CI-shorthand body adds about its
#     own size to the store, not four times it (patches stored once), and
#     raises the server's peak memory (VmHWM) by less than 3.5 times it.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
e2e_need curl python3 sqlite3
e2e_need_schedlab
e2e_tmpdir
cd "$E2E_TMP"
ALICE=quota-test-token-alice-000000001
BOB=quota-test-token-bob-00000000002
ROOT=quota-test-token-admin-00000003
NOROLE=quota-test-token-no-roles-00004
cat >config.json <<EOF
{"tokens": [{"token": "$ALICE", "name": "alice", "roles": ["submit", "read"]},
            {"token": "$BOB", "name": "bob", "roles": ["submit", "read"]},
            {"token": "$ROOT", "name": "root", "roles": ["submit", "read", "admin"]},
            {"token": "$NOROLE", "roles": []}],
 "workers": 0,
 "limits": {"max_body_bytes": 9437184},
 "quotas": {"max_queued_per_token": 3, "retry_after_s": 30},
 "retention": {"finished_max_age_s": 0}}
EOF
API_LOG=$E2E_TMP/serve.log
state=$E2E_TMP/state
api_start "$state" config.json
trap 'echo "--- serve log:"; tail -n 30 "$API_LOG"; _api_cleanup' EXIT
J=(-H 'Content-Type: application/json')
job='{"name": "q", "base": {"source": "debian:linux-source-6.1"}, "patches": [],
      "workloads": [{"tool": "rt-migrate-test", "args": ["3"]}], "repeat": 1}'
path() { api_json 'j["error"].get("path")'; }

TOKEN=$NOROLE api_expect 403 GET /v1/jobs
TOKEN=$NOROLE api_expect 403 POST /v1/jobs "${J[@]}" --data-binary "$job"

TOKEN=$ALICE api_expect 403 POST '/v1/jobs?priority=5' "${J[@]}" --data-binary "$job"
[ "$(path)" = priority ] || e2e_fail "priority 403 does not name the field"
TOKEN=$ROOT api_expect 202 POST '/v1/jobs?priority=5' "${J[@]}" --data-binary "$job"
root_job=$(api_json 'j["id"]')

# Ownership.
TOKEN=$ALICE api_expect 202 POST /v1/jobs "${J[@]}" --data-binary "$job"
a1=$(api_json 'j["id"]')
TOKEN=$BOB api_expect 403 DELETE "/v1/jobs/$a1"
TOKEN=$BOB api_expect 403 DELETE "/v1/jobs/$root_job"
TOKEN=$ALICE api_expect 200 DELETE "/v1/jobs/$a1"
TOKEN=$BOB api_expect 202 POST /v1/jobs "${J[@]}" --data-binary "$job"
b1=$(api_json 'j["id"]')
TOKEN=$ROOT api_expect 200 DELETE "/v1/jobs/$b1"
TOKEN=$ROOT api_expect 200 DELETE "/v1/jobs/$root_job"

# The queued-job quota: 3 for alice, then 429 with Retry-After.
ids=()
for i in 1 2 3; do
	TOKEN=$ALICE api_expect 202 POST /v1/jobs "${J[@]}" --data-binary "$job"
	ids+=("$(api_json 'j["id"]')")
done
hdr=$E2E_TMP/headers
code=$(curl -sS -D "$hdr" -o "$API_BODY" -w '%{http_code}' -X POST -H "Authorization: Bearer $ALICE" \
	"${J[@]}" --data-binary "$job" "$API_URL/v1/jobs")
[ "$code" = 429 ] || e2e_fail "4th queued job: HTTP $code, expected 429"
[ "$(path)" = quotas.max_queued_per_token ] || e2e_fail "429 does not name the limit: $(cat "$API_BODY")"
grep -qi '^Retry-After: 30' "$hdr" || e2e_fail "no Retry-After: 30 header"
echo "ok: 429 $(api_json 'j["error"]["message"]')"
TOKEN=$BOB api_expect 202 POST /v1/jobs "${J[@]}" --data-binary "$job" # bob has his own
bq=$(api_json 'j["id"]')
for id in "${ids[@]}"; do TOKEN=$ALICE api_expect 200 DELETE "/v1/jobs/$id"; done
TOKEN=$BOB api_expect 200 DELETE "/v1/jobs/$bq"

# Submit-time checks: 400 naming the field, no host path.
bad() { # bad EXPECTED_PATH JSON
	TOKEN=$ALICE api_expect 400 POST /v1/jobs "${J[@]}" --data-binary "$2"
	[ "$(path)" = "$1" ] || e2e_fail "expected path $1, got $(path)"
	if api_json 'j["error"]["message"]' | grep -q /; then
		e2e_fail "a path in: $(api_json 'j["error"]["message"]')"
	fi
	echo "ok: 400 at $1"
}
bad '$.kernels.base.source' '{"name": "q", "base": {"source": "debian:linux-source-0.1"}, "patches": [],
  "workloads": [{"tool": "rt-migrate-test"}]}'
bad '$.kernels.base.patches[0].series' '{"name": "q", "base": {"source": "debian:linux-source-6.1",
  "patches": [{"series": "linux-9.9"}]}, "patches": [], "workloads": [{"tool": "rt-migrate-test"}]}'
bad '$.kernels.base.config.builtin' '{"name": "q", "base": {"source": "debian:linux-source-6.1",
  "config": {"builtin": "nope"}}, "patches": [], "workloads": [{"tool": "rt-migrate-test"}]}'
bad '$.kernels.patched.patches[0].content' '{"name": "q", "base": {"source": "debian:linux-source-6.1"},
  "patches": [{"name": "n.patch", "content": "a\u0000b"}], "workloads": [{"tool": "rt-migrate-test"}]}'

# Bounded storage: 1000 submitted and cancelled (each its own 16 KiB patch).
db_bytes() {
	sqlite3 -cmd '.timeout 5000' "$state/schedlab.db" \
		'SELECT page_count * page_size FROM pragma_page_count, pragma_page_size;'
}
size0=$(db_bytes)
python3 "$E2E_ROOT/tests/api/flood.py" "$API_URL" "$ROOT" 1000 16384 || e2e_fail "flood failed"
size1=$(db_bytes)
wal=$(stat -c %s "$state/schedlab.db-wal" 2>/dev/null || echo 0)
dirs=$(find "$state/jobs" -mindepth 1 -maxdepth 1 | wc -l)
echo "store: $size0 bytes before, $size1 after 1000 submitted+cancelled (WAL $wal), $dirs job dirs"
[ "$size1" -lt 4194304 ] || e2e_fail "the store grew to $size1 bytes"
[ "$dirs" -eq 0 ] || e2e_fail "$dirs job directories left"

# An 8 MiB body (the CI shorthand: two kernels) adds about 8 MiB, once.
python3 -c '
import json
p = lambda c: {"name": c + ".patch", "content": "--- a\n+++ b\n" + c * (4096 * 1024 - 64)}
print(json.dumps({"name": "big", "base": {"source": "debian:linux-source-6.1"},
                  "patches": [p("a"), p("b")], "workloads": [{"tool": "rt-migrate-test"}],
                  "repeat": 1}))' >big.json
body=$(stat -c %s big.json)
before=$(db_bytes)
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$API_PID/status"; }
hwm0=$(hwm)
TOKEN=$ROOT api_expect 202 POST /v1/jobs "${J[@]}" --data-binary @big.json
big=$(api_json 'j["id"]')
hwm1=$(hwm)
after=$(db_bytes)
echo "a $body-byte body grew the store by $((after - before)) bytes"
[ $((after - before)) -lt $((body * 3 / 2)) ] || e2e_fail "the body was stored more than once"
# The server's peak memory: 2.5 times the body here (bench/upload-memory.sh
# on a fresh service), 5.3 times before the body and the patches were held
# once (docs/service.md "Security"). A bound of 3.5 leaves room for malloc.
peak=$(((hwm1 - hwm0) * 1024))
echo "the upload raised the server's peak memory by $peak bytes ($(python3 -c "print(f'{$peak / $body:.2f}')") x the body)"
[ "$peak" -lt $((body * 7 / 2)) ] || e2e_fail "the upload raised the peak memory by $peak bytes, over 3.5 x the body"
TOKEN=$ROOT api_expect 200 DELETE "/v1/jobs/$big"
TOKEN=$ROOT api_expect 202 POST /v1/jobs "${J[@]}" --data-binary "$job" # retention runs
[ "$(sqlite3 "$state/schedlab.db" 'SELECT COUNT(*) FROM blobs;')" = 0 ] || e2e_fail "the big job's patches stayed"
api_stop

# Retention on a timer (retention.interval_s): a job cancelled on a running
# service is purged within seconds with no submission and no restart (the
# passes at start and per submission cannot have done it).
cat >config2.json <<EOF
{"tokens": [{"token": "$ROOT", "name": "root", "roles": ["submit", "read", "admin"]}],
 "workers": 0, "retention": {"finished_max_age_s": 0, "interval_s": 1}}
EOF
API_LOG=$E2E_TMP/serve2.log
state=$E2E_TMP/state2
api_start "$state" config2.json
TOKEN=$ROOT api_expect 202 POST /v1/jobs "${J[@]}" --data-binary "$job"
old=$(api_json 'j["id"]')
TOKEN=$ROOT api_expect 200 DELETE "/v1/jobs/$old"
t=$SECONDS
purged=
for _ in $(seq 100); do
	purged=$(sqlite3 -cmd '.timeout 5000' "$state/schedlab.db" \
		"SELECT purged_at IS NOT NULL FROM jobs WHERE id = '$old';")
	[ "$purged" = 1 ] && break
	sleep 0.1
done
[ "$purged" = 1 ] || e2e_fail "the cancelled job was not purged by the timer within 10 s"
[ ! -e "$state/jobs/$old" ] || e2e_fail "the purged job's directory is still there"
grep -q "retention: purged 1 finished job" "$API_LOG" || e2e_fail "the timer's pass is not in the log"
echo "ok: the retention timer purged the cancelled job in $((SECONDS - t)) s, with no submission"
api_stop
trap _api_cleanup EXIT
echo "67-api-quotas: ok"
