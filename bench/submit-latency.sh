#!/usr/bin/env bash
# Job-submit latency of the service: N sequential POST /v1/jobs of a small
# CI-shorthand job (curl's time_total each) to a loopback service with
# "workers": 0 (each job is validated, stored and queued; nothing builds),
# with its state directory under TMPDIR (or /tmp). Prints the median, p90
# and max in milliseconds. What a stored job costs in fsyncs shows here
# (docs/service.md "Durability" quotes it for synchronous=FULL).
# Usage: bench/submit-latency.sh [N (default 100, 10..1000)]
case "${1:-}" in -h | --help) sed -n '2,8p' "$0"; exit 0 ;; esac
set -uo pipefail
. "$(dirname "$0")/../tests/e2e/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
n=${1:-100}
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 10 ] && [ "$n" -le 1000 ] || { echo "N 10..1000" >&2; exit 2; }
e2e_need curl python3
e2e_need_schedlab
e2e_tmpdir
cat >"$E2E_TMP/config.json" <<CFG
{"tokens": [{"token": "$API_TOKEN_ADMIN", "name": "admin", "roles": ["submit", "read", "admin"]}],
 "workers": 0, "quotas": {"max_queued_per_token": 0, "max_queued_total": 0}}
CFG
API_LOG=$E2E_TMP/serve.log
api_start "$E2E_TMP/state" "$E2E_TMP/config.json" >/dev/null
api_nobuild_job latency >"$E2E_TMP/job.json"
: >"$E2E_TMP/times"
for _ in $(seq 1 "$n"); do
	curl -sS --max-time 60 -o /dev/null -w '%{http_code} %{time_total}\n' \
		-H "Authorization: Bearer $API_TOKEN_ADMIN" -H 'Content-Type: application/json' \
		--data-binary "@$E2E_TMP/job.json" "$API_URL/v1/jobs" >>"$E2E_TMP/times"
done
api_stop
python3 - "$E2E_TMP/times" "$n" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
bad = [r for r in rows if r[0] != "202"]
if bad:
    sys.exit(f"{len(bad)} submissions were not accepted (first: HTTP {bad[0][0]})")
t = sorted(float(r[1]) * 1000 for r in rows)
p90 = t[int(0.9 * (len(t) - 1))]
print(f"submit x{sys.argv[2]}: median {statistics.median(t):.2f} ms, p90 {p90:.2f} ms, "
      f"max {t[-1]:.2f} ms")
PY
