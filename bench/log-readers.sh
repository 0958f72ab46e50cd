#!/usr/bin/env bash
# Memory of stalled GET /v1/jobs/{id}/log readers: a job (queued on a
# "workers": 0 loopback service) given 8 logs of 4 MiB (the 32 MiB the
# endpoint returns at most), then N readers that take 1 KiB/s; the
# service's resident memory (VmRSS) before and after 5 s of them. The
# readers and the service are stopped at the end.
# Usage: bench/log-readers.sh [N (default 8, 1..64)]
case "${1:-}" in -h | --help) sed -n '2,7p' "$0"; exit 0 ;; esac
set -uo pipefail
. "$(dirname "$0")/../tests/e2e/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
n=${1:-8}
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || { echo "N 1..64" >&2; exit 2; }
e2e_need curl python3
e2e_need_schedlab
e2e_tmpdir
cat >"$E2E_TMP/config.json" <<CFG
{"tokens": [{"token": "$API_TOKEN", "roles": ["submit", "read"]}], "workers": 0}
CFG
API_LOG=$E2E_TMP/serve.log
api_start "$E2E_TMP/state" "$E2E_TMP/config.json" >/dev/null
api_nobuild_job logs >"$E2E_TMP/job.json"
api_call POST /v1/jobs -H 'Content-Type: application/json' --data-binary "@$E2E_TMP/job.json" >/dev/null
id=$(api_json 'j["id"]')
mkdir -p "$E2E_TMP/state/jobs/$id"
for i in 1 2 3 4 5 6 7 8; do
	head -c $((4 * 1048576)) /dev/urandom | base64 -w 100 | head -c $((4 * 1048576)) \
		>"$E2E_TMP/state/jobs/$id/part$i.log"
done
rss() { sed -n "s/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$API_PID/status"; }
before=$(rss)
pids=()
for _ in $(seq 1 "$n"); do
	curl -sS --max-time 30 --limit-rate 1k -o /dev/null -H "Authorization: Bearer $API_TOKEN" \
		"$API_URL/v1/jobs/$id/log" 2>/dev/null &
	pids+=($!)
done
sleep 5
after=$(rss)
kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
api_stop
echo "$n stalled /log readers of 32 MiB: VmRSS $before -> $after kB (+$(((after - before) / 1024)) MiB)"
