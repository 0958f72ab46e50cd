#!/usr/bin/env bash
# The request body memory factor under concurrency: the service's peak
# resident memory (VmHWM in /proc/PID/status) before and after N concurrent
# POST /v1/jobs of a CI-shorthand body of SIZE_MIB each (two patches of
# SIZE/2; JSON or a multipart form with the patches as parts), on a loopback
# service with "workers": 0 (each job is stored and queued, nothing builds).
# "values" sends the worst case for a JSON parser instead: a body of SIZE_MIB
# that is one array of small numbers, where each byte pair would become a
# json-c object (refused: 413 from the pre-scan's value count, or 400 from
# validation after json-c parsed it all, as before the count).
# Prints the bodies' total, the peak's increase and the factor (increase /
# total), the number docs/service.md "Disk and memory budgets" quotes. The
# service is stopped at the end.
# Usage: bench/body-memory.sh [N (default 4, 1..16)] [SIZE_MIB (default 8, 1..16)] [json|multipart|values]
case "${1:-}" in -h | --help) sed -n '2,14p' "$0"; exit 0 ;; esac
set -uo pipefail
. "$(dirname "$0")/../tests/e2e/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
n=${1:-4}
mib=${2:-8}
kind=${3:-json}
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 16 ] || { echo "N 1..16" >&2; exit 2; }
[[ "$mib" =~ ^[0-9]+$ ]] && [ "$mib" -ge 1 ] && [ "$mib" -le 16 ] || { echo "size 1..16 MiB" >&2; exit 2; }
case $kind in json | multipart | values) ;; *) echo "json, multipart or values" >&2; exit 2 ;; esac
e2e_need curl python3
e2e_need_schedlab
e2e_tmpdir
cat >"$E2E_TMP/config.json" <<CFG
{"tokens": [{"token": "$API_TOKEN_ADMIN", "name": "admin", "roles": ["submit", "read", "admin"]}],
 "workers": 0, "http_threads": $((n > 4 ? n : 4)),
 "quotas": {"max_bytes_per_token": 0},
 "limits": {"max_body_bytes": $(((mib + 1) * 1048576))}}
CFG
API_LOG=$E2E_TMP/serve.log
api_start "$E2E_TMP/state" "$E2E_TMP/config.json" >/dev/null
# Distinct patch bytes per request: identical ones would share one blob.
python3 - "$E2E_TMP" "$mib" "$n" <<'PY'
import json, sys
d, mib, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
half = mib * 1048576 // 2 - 64
for i in range(n):
    p = lambda c: {"name": c + ".patch",
                   "content": "--- a\n+++ b\n" + f"{i:08d}" + c * (half - 8)}
    job = {"name": f"big{i}", "base": {"source": "debian:linux-source-6.1"},
           "patches": [p("a"), p("b")], "workloads": [{"tool": "rt-migrate-test"}], "repeat": 1}
    open(f"{d}/big{i}.json", "w").write(json.dumps(job))
    open(f"{d}/a{i}.patch", "w").write(p("a")["content"])
    open(f"{d}/b{i}.patch", "w").write(p("b")["content"])
    del job["patches"]
    open(f"{d}/job{i}.json", "w").write(json.dumps(job))
    job["junk"] = [0] * (mib * 1048576 // 2 - 64)
    open(f"{d}/values{i}.json", "w").write(json.dumps(job, separators=(",", ":")))
PY
hwm() { sed -n "s/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$API_PID/status"; }
# a small job first: what every submission allocates is not the bodies'
TOKEN=$API_TOKEN_ADMIN api_call POST /v1/jobs -H 'Content-Type: application/json' \
	--data-binary "@$E2E_TMP/job0.json" >/dev/null
before=$(hwm)
total=0
pids=()
auth=(-H "Authorization: Bearer $API_TOKEN_ADMIN")
for i in $(seq 0 $((n - 1))); do
	if [ "$kind" != multipart ]; then
		f=$E2E_TMP/big$i.json
		[ "$kind" = values ] && f=$E2E_TMP/values$i.json
		total=$((total + $(stat -c %s "$f")))
		curl -sS --max-time 120 -o /dev/null -w '%{http_code}\n' "${auth[@]}" \
			-H 'Content-Type: application/json' --data-binary "@$f" \
			"$API_URL/v1/jobs" >"$E2E_TMP/code$i" &
		pids+=($!)
	else
		total=$((total + $(stat -c %s "$E2E_TMP/a$i.patch") + $(stat -c %s "$E2E_TMP/b$i.patch") +
			$(stat -c %s "$E2E_TMP/job$i.json")))
		curl -sS --max-time 120 -o /dev/null -w '%{http_code}\n' "${auth[@]}" \
			-F "job=@$E2E_TMP/job$i.json;type=application/json" \
			-F "patch=@$E2E_TMP/a$i.patch" -F "patch=@$E2E_TMP/b$i.patch" \
			"$API_URL/v1/jobs" >"$E2E_TMP/code$i" &
		pids+=($!)
	fi
done
wait "${pids[@]}" # the curls only: the service runs in the background too
after=$(hwm)
api_stop
want=202
[ "$kind" = values ] && want='4[01][03]'
for i in $(seq 0 $((n - 1))); do
	[[ "$(cat "$E2E_TMP/code$i")" =~ ^$want$ ]] || { echo "upload $i: HTTP $(cat "$E2E_TMP/code$i")" >&2; exit 1; }
done
inc=$(((after - before) * 1024))
echo "$n x $kind bodies of $mib MiB: $total bytes in all, peak memory +$inc bytes" \
	"(VmHWM $before -> $after kB), factor $(python3 -c "print(f'{$inc / $total:.2f}')")"
