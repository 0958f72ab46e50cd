#!/usr/bin/env bash
# tier: host
# false-failure rate: 0 (deterministic as far as the statistics go: the only
# verdict is a cancelled job's "none"; timing margins are the test's own).
# Connection exhaustion against the real service, without a token: from
# 127.0.0.2, 300 slowloris connections (a partial header, one more byte every
# 2 s, so the idle timeout never fires) and 500 idle sockets, while
# GET /v1/health is probed from 127.0.0.1 every 0.25 s: every probe answers
# within 1 s (the per-IP limit keeps 32 of the 800), and every attack
# connection is closed by the request deadline (4 s here), though the
# slowloris ones keep sending. Then N event streams (30 from each of
# 127.0.0.3-5) on a running job: the service's threads (/proc/PID/task) do
# not grow with N, one stream over max_streams_per_token is refused 429 with
# Retry-After, and cancelling the job ends every stream with its final
# status. Then /metrics parses as Prometheus text (python3-prometheus-client)
# and counted all of it by route template. tests/api/conn_attack.py is the attack; run it against an older
# build to see the difference (docs/service.md "Connections").
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
e2e_need curl python3
# The Debian package installs for the system interpreter, which may not be
# the first python3 on PATH.
PROM_PY=
for py in python3 /usr/bin/python3; do
	"$py" -c 'import prometheus_client' 2>/dev/null && { PROM_PY=$py; break; }
done
[ -n "$PROM_PY" ] || e2e_skip "needs python3-prometheus-client"
api_need_runner
e2e_tmpdir
cd "$E2E_TMP"
cat >config.json <<EOF
{"tokens": [{"token": "$API_TOKEN", "roles": ["submit", "read"]},
            {"token": "$API_TOKEN_RO", "roles": ["read"]}],
 "workers": 1, "request_deadline_s": 4, "max_connections_per_ip": 32,
 "max_streams_per_token": 90}
EOF
API_LOG=$E2E_TMP/serve.log
api_start "$E2E_TMP/state" config.json
trap 'echo "--- serve log:"; grep -v "^Connection socket is closed" "$API_LOG" | tail -n 30; _api_cleanup' EXIT
port=${API_URL##*:}

# --- 300 slowloris + 500 idle sockets from one address -----------------------
python3 "$E2E_ROOT/tests/api/conn_attack.py" --port "$port" --idle 500 --slow 300 \
	--trickle-s 2 --duration-s 9 --expect-deadline 4 >attack.json ||
	{ cat attack.json; e2e_fail "the service did not hold up against the attack"; }
python3 - attack.json <<'PY' || e2e_fail "attack report"
import json, sys
r = json.load(open(sys.argv[1]))
print(f"health under attack: {r['probes']} probes, slowest {r['probe_max_s']} s, "
      f"{r['probe_failures']} failed; {r['attack_connected']} attack connections, "
      f"{r['attack_open_after_1s']} held after 1 s, {r['attack_open_at_end']} at the end; "
      f"closed by the deadline after {min(r['closed_after_s'] or [0])}-{max(r['closed_after_s'] or [0])} s")
assert r["attack_connected"] == 800, r
assert 0 < r["attack_open_after_1s"] <= 32, r
PY
TOKEN= api_expect 200 GET /v1/health

# --- event streams hold no thread each ---------------------------------------
job=$E2E_ROOT/examples/seed-reproduction-short.json
api_expect 202 POST /v1/jobs -H 'Content-Type: application/json' --data-binary "@$job"
id=$(api_json 'j["id"]')
python3 - "$port" "$id" "$API_PID" "$API_TOKEN_RO" "$API_TOKEN" <<'PY' || e2e_fail "event streams"
import os, socket, sys, time, urllib.request
port, job, pid, ro, rw = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
threads = lambda: len(os.listdir(f"/proc/{pid}/task"))

def stream(src, token):
    s = socket.socket()
    s.bind((src, 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    s.sendall(f"GET /v1/jobs/{job}/events HTTP/1.1\r\nHost: t\r\n"
              f"Authorization: Bearer {token}\r\n\r\n".encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    return s, buf

before = threads()
streams = []
for src in ("127.0.0.3", "127.0.0.4", "127.0.0.5"):
    for _ in range(30):
        s, head = stream(src, ro)
        assert head.startswith(b"HTTP/1.1 200"), head[:200]
        assert b"text/event-stream" in head and b"X-Accel-Buffering: no" in head, head
        streams.append([s, head])
time.sleep(0.5)
after = threads()
print(f"threads: {before} before, {after} with {len(streams)} open event streams")
assert after - before < 10, (before, after)
s, head = stream("127.0.0.6", ro)
assert head.startswith(b"HTTP/1.1 429") and b"Retry-After:" in head, head[:300]
s.close()
rq = urllib.request.Request(f"http://127.0.0.1:{port}/v1/jobs/{job}", method="DELETE",
                            headers={"Authorization": f"Bearer {rw}"})
with urllib.request.urlopen(rq, timeout=30) as r:
    print("cancel:", r.status)
end = time.monotonic() + 120  # the runner stops at its next cancellation point
for st in streams:
    s, buf = st
    while b"\r\n0\r\n\r\n" not in buf and time.monotonic() < end:
        s.settimeout(max(0.1, end - time.monotonic()))
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    assert b'"status":"cancelled"' in buf, buf[-300:]
    s.close()
print(f"all {len(streams)} streams ended with the cancelled status")
PY
api_wait_status "$id" cancelled 120

# --- /metrics: valid Prometheus text, counted as it happened -----------------
TOKEN=$API_TOKEN_RO api_expect 200 GET /metrics
$PROM_PY - "$API_BODY" "$id" <<'PY' || e2e_fail "/metrics"
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
fams = {f.name: f for f in text_string_to_metric_families(text)}  # raises on bad syntax
def value(name, **labels):
    for f in fams.values():
        for s in f.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    raise AssertionError(f"no sample {name} {labels}")
assert value("schedlab_build_info") == 1
import time
assert time.time() - 3600 < value("process_start_time_seconds") <= time.time() + 1
assert value("schedlab_jobs_finished_total", status="cancelled", verdict="none") == 1
ev = "/v1/jobs/{id}/events"
assert value("schedlab_http_requests_total", method="GET", route=ev, code="200") == 90
assert value("schedlab_http_requests_total", method="GET", route=ev, code="429") == 1
assert value("schedlab_http_requests_total", method="POST", route="/v1/jobs", code="202") == 1
assert not any(sys.argv[2] in s.labels.get("route", "") for f in fams.values() for s in f.samples)
assert value("schedlab_http_deadline_closed_total") >= 32
assert value("schedlab_http_streams_refused_total") == 1
assert value("schedlab_queue_wait_seconds_count") == 1
value("schedlab_kernel_cache_hits_total"), value("schedlab_kernel_cache_misses_total")
assert value("schedlab_jobs", status="cancelled") == 1
print(f"metrics: {len(fams)} families parse; requests, finished jobs, queue wait and "
      f"deadline closures counted")
PY
api_stop
trap _api_cleanup EXIT
echo "66-api-connections: ok"
