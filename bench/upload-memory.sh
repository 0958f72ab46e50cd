#!/usr/bin/env bash
# Peak memory of the service for one large upload: the server's VmHWM
# (/proc/PID/status, the resident high-water mark) before and after one
# POST /v1/jobs of a CI-shorthand body of SIZE_MIB (two kernels: the
# candidate's patches appear once in the body and are expanded per kernel),
# on a loopback service with "workers": 0 (the job is stored and queued,
# nothing builds). Prints the body size, the peak's increase and their ratio.
# Usage: bench/upload-memory.sh [SIZE_MIB (default 8, 1..16)] [json|multipart]
case "${1:-}" in -h | --help) sed -n '2,8p' "$0"; exit 0 ;; esac
set -uo pipefail
. "$(dirname "$0")/../tests/e2e/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
mib=${1:-8}
kind=${2:-json}
[[ "$mib" =~ ^[0-9]+$ ]] && [ "$mib" -ge 1 ] && [ "$mib" -le 16 ] || { echo "size 1..16 MiB" >&2; exit 2; }
case $kind in json | multipart) ;; *) echo "json or multipart" >&2; exit 2 ;; esac
e2e_need curl python3
e2e_need_schedlab
e2e_tmpdir
cat >"$E2E_TMP/config.json" <<EOF
{"tokens": [{"token": "$API_TOKEN_ADMIN", "name": "admin", "roles": ["submit", "read", "admin"]}],
 "workers": 0, "limits": {"max_body_bytes": $(((mib + 1) * 1048576))}}
EOF
API_LOG=$E2E_TMP/serve.log
api_start "$E2E_TMP/state" "$E2E_TMP/config.json" >/dev/null
python3 - "$E2E_TMP" "$mib" <<'EOF'
import json, sys
d, mib = sys.argv[1], int(sys.argv[2])
half = mib * 1048576 // 2 - 64
p = lambda c: {"name": c + ".patch", "content": "--- a\n+++ b\n" + c * half}
job = {"name": "big", "base": {"source": "debian:linux-source-6.1"},
       "patches": [p("a"), p("b")], "workloads": [{"tool": "rt-migrate-test"}], "repeat": 1}
open(d + "/big.json", "w").write(json.dumps(job))
open(d + "/a.patch", "w").write(p("a")["content"])
open(d + "/b.patch", "w").write(p("b")["content"])
del job["patches"]
open(d + "/job.json", "w").write(json.dumps(job))
EOF
hwm() { sed -n "s/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$API_PID/status"; }
# a small job first: what every submission allocates is not the upload's
TOKEN=$API_TOKEN_ADMIN api_call POST /v1/jobs -H 'Content-Type: application/json' \
	--data-binary "@$E2E_TMP/job.json" >/dev/null
before=$(hwm)
if [ "$kind" = json ]; then
	body=$(stat -c %s "$E2E_TMP/big.json")
	code=$(TOKEN=$API_TOKEN_ADMIN api_call POST /v1/jobs -H 'Content-Type: application/json' \
		--data-binary "@$E2E_TMP/big.json")
else
	body=$(($(stat -c %s "$E2E_TMP/a.patch") + $(stat -c %s "$E2E_TMP/b.patch") +
		$(stat -c %s "$E2E_TMP/job.json")))
	code=$(TOKEN=$API_TOKEN_ADMIN api_call POST /v1/jobs -F "job=@$E2E_TMP/job.json;type=application/json" \
		-F "patch=@$E2E_TMP/a.patch" -F "patch=@$E2E_TMP/b.patch")
fi
after=$(hwm)
api_stop
[ "$code" = 202 ] || { echo "upload: HTTP $code: $(cat "$API_BODY")" >&2; exit 1; }
inc=$(((after - before) * 1024))
echo "upload ($kind): body $body bytes, peak memory +$inc bytes (VmHWM $before -> $after kB)," \
	"ratio $(python3 -c "print(f'{$inc / $body:.2f}')")"
