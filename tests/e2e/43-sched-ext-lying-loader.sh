#!/usr/bin/env bash
# A guest that lies in the agent's own protocol, through the service: the
# submitter's own sched_ext loader (examples/scx-user's scx_gfifo, posted as
# content) runs as root in the guest and, before it loads its scheduler,
# writes a well-formed summary frame whose "errors" is an object, not an
# array, to the agent's results port. json-c asserts on such a value when it
# is read as an array, so a host that trusted the frame would abort, and
# after a restart redo the run and abort again.
#   - the service stays up (same pid, /v1/health answers 200) and ends the
#     job; the loader's run is "error" with a reason naming the summary
#     frame and its field; the EEVDF run beside it is "ok";
#   - after a restart on the same state the job is not run again.
# The 6.12 kernel and the scheduler build are e2e 42's and 43's (same content
# keys), so in make check only the two boots are this test's own.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
e2e_need_guest
e2e_need curl python3 jq clang-16
api_need_runner
e2e_tmpdir
cd "$E2E_TMP"
api_config config.json
API_LOG=$E2E_TMP/serve.log
state=$E2E_TMP/state
api_start "$state" config.json
trap 'echo "--- serve log:"; tail -n 30 "$API_LOG"; _api_cleanup' EXIT
pid=$API_PID

python3 - "$E2E_ROOT/examples/scx-user" "$E2E_ROOT/examples/scx-simple.json" job.json <<'PY'
import json, sys, zlib
src, simple, out = sys.argv[1:]
payload = b'{"errors":{"x":1}}'
frame = b"\nSLFRAME v1 summary %d %08x\n%s\nSLEND\n" % (len(payload), zlib.crc32(payload), payload)
c_frame = "".join("\\x%02x" % b for b in frame)
loader = open(src + "/scx_gfifo.c").read()
lie = ('\t{ static const char lie[] = "%s";\n'
       '\t  int fd = open("/dev/ttyS1", O_WRONLY | O_NOCTTY);\n'
       '\t  if (fd < 0 || write(fd, lie, sizeof(lie) - 1) < 0) perror("lie");\n'
       '\t  if (fd >= 0) close(fd); }\n') % c_frame
anchor = "\tsignal(SIGTERM, on_signal);\n"
assert anchor in loader, "scx_gfifo.c changed: no place for the lie"
loader = "#include <fcntl.h>\n" + loader.replace(anchor, anchor + lie)
j = json.load(open(src + "/gfifo.json"))
j["name"] = "scx-lying-loader"
j["kernels"] = json.load(open(simple))["kernels"]  # e2e 42's kernel
j["repeat"] = 1
j["noise_policy"] = "keep"
x = j["variants"]["gfifo"]["sched_ext"]
x["source"] = {"name": "scx_gfifo", "bpf": open(src + "/scx_gfifo.bpf.c").read(), "loader": loader}
j["workloads"] = [j["workloads"][0]]
j["workloads"][0]["args"] = ["-t1", "-p90", "-i1000", "-l500", "-q", "-h20000"]
j["workloads"][0]["timeout_s"] = 40
json.dump(j, open(out, "w"))
PY

api_expect 202 POST /v1/jobs -H 'Content-Type: application/json' --data-binary @job.json
id=$(api_json 'j["id"]')
end=$((SECONDS + 1500))
st=
while [ $SECONDS -lt $end ]; do
	kill -0 "$pid" 2>/dev/null || e2e_fail "the service died while the lying guest ran"
	api_call GET "/v1/jobs/$id" >/dev/null
	st=$(api_json 'j["status"]' 2>/dev/null) || st=
	case "$st" in done | failed | cancelled) break ;; esac
	sleep 2
done
echo "job $id: $st"
case "$st" in done | failed) ;; *) e2e_fail "the job did not end within 1500 s (last: $st)" ;; esac
kill -0 "$pid" 2>/dev/null || e2e_fail "the service died after the job"
api_expect 200 GET /v1/health
api_expect 200 GET "/v1/jobs/$id/result"
python3 - "$API_BODY" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
lie = r["variants"]["gfifo"]["runs"]
assert lie, "no gfifo run"
for run in lie:
    print(run["key"], run["status"], run.get("reason"))
    assert run["status"] == "error", run["status"]
    reason = run.get("reason") or ""
    assert "summary frame" in reason and "errors" in reason, reason
for run in r["variants"]["eevdf"]["runs"]:
    assert run["status"] == "ok", (run["key"], run["status"], run.get("reason"))
PY

# A restart on the same state finds the job ended: nothing is redone.
api_stop
api_start "$state" config.json
sleep 3
api_expect 200 GET "/v1/jobs/$id"
[ "$(api_json 'j["status"]')" = "$st" ] || e2e_fail "the job changed state after the restart"
[ -z "$(e2e_virsh list --name | grep "^schedlab-" || true)" ] || e2e_fail "a guest started after the restart"
echo "PASS: the lying loader's frame made its run 'error' and the service stayed up"
