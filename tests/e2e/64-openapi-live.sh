#!/usr/bin/env bash
# tier: host
# false-failure rate: 0 (deterministic: seeded store, a base that fails to
# build in seconds; no comparison is judged).
# Live OpenAPI conformance: the real `schedlab serve`, driven by
# tests/api/openapi_live.py from results-schema/openapi.yaml (every
# operation, wrong methods, malformed ids, bad parameters and bodies), in
# four states:
#   1. no tokens (loopback), empty store; ends by submitting a job whose
#      base kernel does not build (it fails in seconds, no guest boots),
#      as JSON and multipart, and cancelling the queued ones (200/202);
#   2. tokens (submit+read, read, submit), the same store, now seeded: those
#      failed and cancelled jobs, plus one done job with a result and one
#      whose result file is gone (a 500 for result and report);
#   3. tokens, an empty store;
#   4. no tokens, the seeded store.
# Every answer must be listed in the document with its content type and a
# body valid against its schema, and every operation must have been driven.
# The done jobs are the only things not made through the API (that needs a
# guest run): jobs rows, and tests/data/result-example.json as a result. No
# answer may contain the temporary directory's path.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
e2e_need python3
api_need_runner
python3 -c 'import jsonschema, yaml' 2>/dev/null ||
	e2e_skip "needs python3-jsonschema and python3-yaml"
e2e_tmpdir
cd "$E2E_TMP" || exit 1
API_LOG=$E2E_TMP/serve.log
trap 'echo "--- serve log:"; tail -n 20 "$API_LOG"; _api_cleanup' EXIT
SPEC=$E2E_ROOT/results-schema/openapi.yaml
CHECK=$E2E_ROOT/tests/api/openapi_live.py
MAX_BODY=65536
SUBMIT_ONLY=api-test-token-submit-only-0000003
t0=$SECONDS

cat >notoken.json <<EOF
{"workers": 1, "limits": {"max_body_bytes": $MAX_BODY}}
EOF
cat >tokens.json <<EOF
{"tokens": [{"token": "$API_TOKEN", "roles": ["submit", "read"]},
            {"token": "$API_TOKEN_RO", "roles": ["read"]},
            {"token": "$SUBMIT_ONLY", "roles": ["submit"]}],
 "workers": 1, "limits": {"max_body_bytes": $MAX_BODY}}
EOF
TOKENS=(--token "rw=$API_TOKEN:submit,read" --token "ro=$API_TOKEN_RO:read"
	--token "submit=$SUBMIT_ONLY:submit")
# A job whose base kernel does not build: the patch does not apply.
api_nobuild_job openapi-live-does-not-build >nobuild.json
"$SCHEDLAB" validate --job nobuild.json >/dev/null || e2e_fail "nobuild.json is not a valid job"

check() {
	echo "== $1"
	shift
	python3 "$CHECK" --spec "$SPEC" --url "$API_URL" --max-body "$MAX_BODY" \
		--record coverage.json --secret "$E2E_TMP" "$@" || e2e_fail "the service answered outside openapi.yaml"
}

api_start "$E2E_TMP/seeded" notoken.json
check "1: no tokens, empty store, then submissions" --job nobuild.json
api_stop

# The done jobs: rows as the store writes them; one has its result file.
python3 - "$E2E_TMP/seeded" "$E2E_ROOT/tests/data/result-example.json" <<'PY' ||
import json, os, secrets, shutil, sqlite3, sys
state, example = sys.argv[1:]
r = json.load(open(example))
db = sqlite3.connect(os.path.join(state, "schedlab.db"), timeout=10)
spec = json.dumps(r["job"])
t = "2026-01-02T03:04:05Z"
for with_result in (True, False):
    jid = secrets.token_hex(16)
    os.makedirs(os.path.join(state, "jobs", jid))
    if with_result:
        shutil.copy(example, os.path.join(state, "jobs", jid, "result.json"))
    with open(os.path.join(state, "jobs", jid, "build.log"), "w") as f:
        f.write("make: seeded for the OpenAPI test\n")
    db.execute("INSERT INTO jobs(id, name, status, priority, spec_json, expanded_json, "
               "created_at, started_at, finished_at, verdict) VALUES (?,?,?,?,?,?,?,?,?,?)",
               (jid, r["job"]["name"], "done", 0, spec, spec, t, t, t, r["verdict"]))
    print("seeded done job %s, %s" % (jid, "with its result" if with_result else "result gone"))
db.commit()
PY
	e2e_fail "could not seed the done jobs"

api_start "$E2E_TMP/seeded" tokens.json
check "2: tokens, seeded store" "${TOKENS[@]}" --job nobuild.json
api_stop
api_start "$E2E_TMP/empty" tokens.json
check "3: tokens, empty store" "${TOKENS[@]}"
api_stop
api_start "$E2E_TMP/seeded" notoken.json
check "4: no tokens, seeded store"
api_stop

python3 "$CHECK" --spec "$SPEC" --record coverage.json --check-coverage ||
	e2e_fail "an operation of openapi.yaml was not driven"
# The seeded phases saw the statuses only a store with jobs gives.
python3 - coverage.json <<'PY' || e2e_fail "the seeded store did not give its answers"
import json, sys
c = json.load(open(sys.argv[1]))
for op, st in (("GET /v1/jobs/{id}/result", "200"), ("GET /v1/jobs/{id}/report", "200"),
               ("GET /v1/jobs/{id}/result", "500"), ("GET /v1/jobs/{id}/report", "500"),
               ("GET /v1/jobs/{id}/result", "409"), ("DELETE /v1/jobs/{id}", "409"),
               ("GET /v1/jobs/{id}/events", "200"), ("POST /v1/jobs", "202")):
    assert st in c.get(op, {}), (op, st, c.get(op))
assert "200" in c["DELETE /v1/jobs/{id}"] or "202" in c["DELETE /v1/jobs/{id}"], c
PY
trap _api_cleanup EXIT
echo "64-openapi-live: ok in $((SECONDS - t0)) s"
