#!/usr/bin/env bash
# tier: host
# TLS with the real service: a self-signed certificate for 127.0.0.1 made at
# test time (openssl), `tls_cert`/`tls_key` in the config. Over https://
# health, metrics and the job list answer (curl --cacert); plain http and
# a client that does not trust the certificate are refused; `schedlab
# submit` with --cacert (and with SCHEDLAB_CACERT) submits a job whose base
# does not build, follows its event stream to the end over TLS and exits 2
# saying it failed; `submit status` reads it back. A config naming only one
# of the two files, or a key that does not match, is refused at start.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
e2e_need curl python3 openssl
api_need_runner
e2e_tmpdir
cd "$E2E_TMP"

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
	-addext "subjectAltName=IP:127.0.0.1" -keyout key.pem -out cert.pem 2>openssl.err ||
	{ cat openssl.err; e2e_fail "openssl could not make a certificate"; }
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=other" \
	-keyout other-key.pem -out other-cert.pem 2>/dev/null || e2e_fail "second certificate"

# Half a TLS setting, and a key that does not match, are refused.
cat >half.json <<EOF
{"tokens": [{"token": "$API_TOKEN"}], "tls_cert": "$E2E_TMP/cert.pem"}
EOF
"$SCHEDLAB" serve --listen 127.0.0.1:0 --state half --config half.json >half.out 2>&1 &&
	e2e_fail "tls_cert without tls_key was accepted"
grep -q "tls_key" half.out || e2e_fail "the error does not name tls_key: $(cat half.out)"
cat >mismatch.json <<EOF
{"tokens": [{"token": "$API_TOKEN"}], "tls_cert": "$E2E_TMP/cert.pem",
 "tls_key": "$E2E_TMP/other-key.pem"}
EOF
timeout 20 "$SCHEDLAB" serve --listen 127.0.0.1:0 --state mm --config mismatch.json >mm.out 2>&1 &&
	e2e_fail "a key that does not match the certificate was accepted"
echo "mismatched key: $(tail -n 1 mm.out)"

cat >config.json <<EOF
{"tokens": [{"token": "$API_TOKEN", "roles": ["submit", "read"]},
            {"token": "$API_TOKEN_RO", "roles": ["read"]}],
 "workers": 1, "tls_cert": "$E2E_TMP/cert.pem", "tls_key": "$E2E_TMP/key.pem"}
EOF
API_LOG=$E2E_TMP/serve.log
api_start "$E2E_TMP/state" config.json
trap 'echo "--- serve log:"; tail -n 30 "$API_LOG"; _api_cleanup' EXIT
port=${API_URL##*:}
API_URL=https://127.0.0.1:$port
export CURL_CA_BUNDLE=$E2E_TMP/cert.pem # api_call's curl trusts the test's certificate

TOKEN= api_expect 200 GET /v1/health
api_expect 200 GET /metrics
api_expect 200 GET /v1/jobs
TOKEN= api_expect 401 GET /v1/jobs
# Plain HTTP to the TLS port gets no answer; a client without the CA refuses.
code=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/health" 2>/dev/null)
[ "$code" = 200 ] && e2e_fail "plain http was answered on the TLS port"
echo "plain http: '$code' (no HTTP answer)"
CURL_CA_BUNDLE=$E2E_TMP/other-cert.pem curl -sS --max-time 10 -o /dev/null \
	"$API_URL/v1/health" 2>curl.err && e2e_fail "an untrusted certificate was accepted"
echo "untrusted: $(head -n 1 curl.err)"

# The CI client over https.
api_nobuild_job tls-base-does-not-build >nobuild.json
export SCHEDLAB_SERVER=$API_URL SCHEDLAB_TOKEN=$API_TOKEN
unset CURL_CA_BUNDLE
"$SCHEDLAB" submit nobuild.json 2>err.txt && e2e_fail "submit trusted an unknown certificate"
cat err.txt
grep -qi "certificate\|SSL\|TLS" err.txt || e2e_fail "the client does not say why: $(cat err.txt)"
"$SCHEDLAB" submit nobuild.json --cacert "$E2E_TMP/cert.pem" --gate >id.txt 2>gate.err
rc=$?
cat gate.err
id=$(cat id.txt)
[[ "$id" =~ ^[0-9a-f]{32}$ ]] || e2e_fail "submit over https printed no job id: '$id'"
[ "$rc" = 2 ] || e2e_fail "submit --gate over https exited $rc, not 2"
grep -q "ended failed" gate.err || e2e_fail "the client did not follow the job to its end"
SCHEDLAB_CACERT=$E2E_TMP/cert.pem "$SCHEDLAB" submit status "$id" >status.txt ||
	e2e_fail "submit status over https failed"
cat status.txt
grep -q "^$id tls-base-does-not-build failed" status.txt || e2e_fail "status line: $(cat status.txt)"
# The event stream over TLS replays to the final status and ends.
curl -sS --max-time 30 --cacert "$E2E_TMP/cert.pem" -H "Authorization: Bearer $API_TOKEN_RO" \
	"$API_URL/v1/jobs/$id/events" >events.txt || e2e_fail "event stream over https"
grep -q '"status":"failed"' events.txt || e2e_fail "the stream did not end with failed"
api_stop
trap _api_cleanup EXIT
echo "65-api-tls: ok"
