#!/usr/bin/env bash
# tier: host
# The CI client against the real service (`schedlab serve` on a free loopback
# port, a temporary state directory):
#  - a listener that accepts and never answers: `submit status`, `submit JOB`
#    and `submit wait` exit 2 within their --stall-timeout (and --retry-for);
#  - SCHEDLAB_SERVER and SCHEDLAB_TOKEN as defaults, flags over them;
#  - a job whose base kernel does not build (no guest boots): `submit --gate`
#    exits 2 and says why; status, wait, result (409) and cancel (409) of it;
#  - Ctrl-C (SIGINT) to `submit --wait` while its job builds or boots: the
#    client cancels that job (the service says cancelled) and exits 2;
#  - `submit --mbox FILE --suite rt` without a job file queues the CI
#    shorthand over the default base with the mbox's patches and the suite's
#    workloads and gates; `submit cancel` cancels it at once;
#  - a multipart upload with --patch and --mbox: the stored job has the
#    patch, then the mbox's patches in order, the cover letter dropped.
# Nothing is left running: the EXIT trap kills the service and the listener.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
e2e_need curl python3
api_need_runner
e2e_tmpdir
cd "$E2E_TMP"
api_config config.json
API_LOG=$E2E_TMP/serve.log
api_start "$E2E_TMP/state" config.json
STALL_PID=
CLIENT_PID=
cleanup() {
	echo "--- serve log:"
	tail -n 30 "$API_LOG"
	[ -n "$CLIENT_PID" ] && kill -9 "$CLIENT_PID" 2>/dev/null
	[ -n "$STALL_PID" ] && kill "$STALL_PID" 2>/dev/null && wait "$STALL_PID" 2>/dev/null
	_api_cleanup
}
trap cleanup EXIT
NOJOB=0123456789abcdef0123456789abcdef

for form in "" status wait cancel result; do
	# shellcheck disable=SC2086
	"$SCHEDLAB" submit $form --help | grep -q '^Usage: schedlab submit' ||
		e2e_fail "submit $form --help has no usage"
done

# --- the CI examples parse (YAML), and their shell steps do too ---------------
python3 - "$E2E_ROOT/examples/ci" <<'PY' || e2e_fail "a CI example is broken"
import os, subprocess, sys, yaml
d = sys.argv[1]
gh = yaml.safe_load(open(os.path.join(d, "github-actions.yml")))
gl = yaml.safe_load(open(os.path.join(d, "gitlab-ci.yml")))
steps = gh["jobs"]["schedlab"]["steps"]
scripts = [s["run"] for s in steps if "run" in s]
job = gl["schedlab"]
scripts.append("\n".join(job["before_script"] + job["script"]))
assert job["allow_failure"] == {"exit_codes": [3]}, job["allow_failure"]
assert job["artifacts"]["reports"]["junit"] == "schedlab-junit.xml"
for s in scripts:
    # GitHub expressions are not shell: stand in a word for each
    s = s.replace("${{", "X").replace("}}", "X")
    subprocess.run(["bash", "-n"], input=s.encode(), check=True)
    assert "submit" not in s or ("--gate" in s and "--mbox" in s), s
print(f"CI examples: {len(scripts)} shell steps parse")
PY

# --- a stalled service -------------------------------------------------------
python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
time.sleep(600)
' >stall.port &
STALL_PID=$!
for _ in $(seq 1 100); do [ -s stall.port ] && break; sleep 0.1; done
[ -s stall.port ] || e2e_fail "the stalled listener did not start"
STALL=http://127.0.0.1:$(cat stall.port)
# The three clients wait out their stalls side by side (each only sleeps);
# each is held to its own bound, and each writes stall-NAME.{out,err,took}.
timed() { # timed NAME MAX_SECONDS CMD...: runs CMD, records its exit code and time
	local name=$1 max=$2 t0=$SECONDS rc
	shift 2
	timeout $((max + 30)) "$@" >"stall-$name.out" 2>"stall-$name.err"
	rc=$?
	echo "$rc $((SECONDS - t0))" >"stall-$name.took"
}
check_timed() { # check_timed NAME MAX_SECONDS: fails unless NAME exited 2 within MAX_SECONDS
	local rc took
	read -r rc took <"stall-$1.took" || e2e_fail "the stalled client '$1' left no exit code"
	echo "stalled: $1 exited $rc after ${took}s: $(tail -n 1 "stall-$1.err")"
	[ "$rc" = 2 ] || e2e_fail "against a stalled service '$1' exited $rc, not 2"
	[ "$took" -le "$2" ] || e2e_fail "'$1' took ${took}s against a stalled service (max ${2}s)"
}
printf '%s\n' '{"name": "x"}' >x.json
timed status 8 "$SCHEDLAB" submit status $NOJOB --server "$STALL" --stall-timeout 2 &
s1=$!
# libcurl averages the speed over up to 5 s, so the bytes a POST sent count
# for a few seconds before the stall does.
timed post 15 "$SCHEDLAB" submit x.json --server "$STALL" --stall-timeout 2 --gate &
s2=$!
# The event stream allows 20 s (the service's keepalive is 15 s), then one
# status request (2 s), then the retry budget is spent.
timed wait 40 "$SCHEDLAB" submit wait $NOJOB --server "$STALL" --stall-timeout 2 --retry-for 1 &
s3=$!
wait $s1 $s2 $s3
check_timed status 8
grep -q 'stall timeout 2 s' stall-status.err || e2e_fail "the stall message does not name the timeout"
check_timed post 15
check_timed wait 40
kill "$STALL_PID"
wait "$STALL_PID" 2>/dev/null
STALL_PID=

# --- environment defaults ----------------------------------------------------
"$SCHEDLAB" submit status $NOJOB 2>err.txt && e2e_fail "status without a server succeeded"
grep -q 'SCHEDLAB_SERVER' err.txt || e2e_fail "no hint at SCHEDLAB_SERVER: $(cat err.txt)"
export SCHEDLAB_SERVER=$API_URL SCHEDLAB_TOKEN=$API_TOKEN
"$SCHEDLAB" submit status $NOJOB 2>err.txt && e2e_fail "an unknown job has a status"
grep -q 'HTTP 404' err.txt || e2e_fail "unknown job: $(cat err.txt)"
SCHEDLAB_TOKEN=not-a-valid-token-at-all-000000 "$SCHEDLAB" submit status $NOJOB 2>err.txt &&
	e2e_fail "a wrong token was accepted"
grep -q 'HTTP 401' err.txt || e2e_fail "wrong token: $(cat err.txt)"
SCHEDLAB_TOKEN=not-a-valid-token-at-all-000000 "$SCHEDLAB" submit status $NOJOB \
	--token "$API_TOKEN" 2>err.txt
grep -q 'HTTP 404' err.txt || e2e_fail "--token does not override SCHEDLAB_TOKEN: $(cat err.txt)"
SCHEDLAB_SERVER=http://127.0.0.1:1 "$SCHEDLAB" submit status $NOJOB --server "$API_URL" 2>err.txt
grep -q 'HTTP 404' err.txt || e2e_fail "--server does not override SCHEDLAB_SERVER: $(cat err.txt)"

# --- a job whose base does not build: it fails fast, no guest boots ----------
api_nobuild_job base-does-not-build >nobuild.json
"$SCHEDLAB" submit nobuild.json --gate -o never.json >id.txt 2>gate.err
rc=$?
cat gate.err
id=$(cat id.txt)
[[ "$id" =~ ^[0-9a-f]{32}$ ]] || e2e_fail "submit printed no job id: '$id'"
[ "$rc" = 2 ] || e2e_fail "a job whose base does not build: --gate exited $rc, not 2"
grep -q "ended failed" gate.err || e2e_fail "the client does not say the job failed"
grep -q "0001-does-not-apply.patch" gate.err || e2e_fail "the client does not name the patch"
[ -e never.json ] && e2e_fail "a failed job wrote a result"
"$SCHEDLAB" submit status "$id" >status.txt || e2e_fail "status of $id failed"
cat status.txt
grep -q "^$id base-does-not-build failed" status.txt || e2e_fail "status line: $(cat status.txt)"
"$SCHEDLAB" submit status "$id" --json >status.json
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' status.json)" = failed ] ||
	e2e_fail "status --json is not the job document"
"$SCHEDLAB" submit wait "$id" 2>err.txt
[ $? = 2 ] || e2e_fail "wait on a failed job did not exit 2"
"$SCHEDLAB" submit result "$id" 2>err.txt && e2e_fail "a failed job has a result"
grep -q 'HTTP 409' err.txt || e2e_fail "result of a failed job: $(cat err.txt)"
"$SCHEDLAB" submit cancel "$id" 2>err.txt && e2e_fail "a failed job was cancelled"
grep -q 'already ended' err.txt || e2e_fail "cancel of a failed job: $(cat err.txt)"

# --- the patches the uploads below carry --------------------------------------
cat >extra.patch <<'EOF'
--- a/kernel/sched/rt.c
+++ b/kernel/sched/rt.c
@@ -1,1 +1,1 @@
-/* extra */
+/* extra, changed */
EOF
cat >series.mbox <<'EOF'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A Developer <dev@example.org>
Date: Fri, 4 Dec 2026 12:00:00 +0000
Subject: [PATCH 0/2] sched: two small things

A cover letter: no diff here.

From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001
From: A Developer <dev@example.org>
Date: Fri, 4 Dec 2026 12:00:01 +0000
Subject: [PATCH 1/2] sched/rt: first change

First.
---
 kernel/sched/rt.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/kernel/sched/rt.c b/kernel/sched/rt.c
--- a/kernel/sched/rt.c
+++ b/kernel/sched/rt.c
@@ -1,1 +1,1 @@
-/* first */
+/* first, changed */
-- 
2.39.5

From 2222222222222222222222222222222222222222 Mon Sep 17 00:00:00 2001
From: A Developer <dev@example.org>
Date: Fri, 4 Dec 2026 12:00:02 +0000
Subject: [PATCH 2/2] sched/fair: second change

Second.
---
 kernel/sched/fair.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/kernel/sched/fair.c b/kernel/sched/fair.c
--- a/kernel/sched/fair.c
+++ b/kernel/sched/fair.c
@@ -1,1 +1,1 @@
-/* second */
+/* second, changed */
-- 
2.39.5

EOF
# --- Ctrl-C cancels the job the client submitted ------------------------------
"$SCHEDLAB" submit "$E2E_ROOT/examples/seed-reproduction-short.json" --wait >ctrlc.id 2>ctrlc.err &
CLIENT_PID=$!
for _ in $(seq 1 300); do [ -s ctrlc.id ] && break; sleep 0.1; done
cid=$(cat ctrlc.id)
[[ "$cid" =~ ^[0-9a-f]{32}$ ]] || e2e_fail "the waiting client printed no job id"
api_wait_status "$cid" building booting running 600
# A queued job behind it (one worker): with no job file, --mbox and --suite
# make the CI shorthand over the default base. It is cancelled at once.
"$SCHEDLAB" submit --mbox series.mbox --suite rt >queued.id 2>err.txt ||
	e2e_fail "submit --mbox --suite failed: $(cat err.txt)"
qid=$(cat queued.id)
python3 - "$E2E_TMP/state/schedlab.db" "$qid" <<'PY' || e2e_fail "the generated shorthand is wrong"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
name, spec = db.execute("select name, expanded_json from jobs where id = ?", (sys.argv[2],)).fetchone()
j = json.loads(spec)
patched = j["kernels"]["patched"]["patches"]
print("generated job:", name, [p.get("name", p.get("series")) for p in patched],
      [w["tool"] for w in j["workloads"]], [g["metric"] for g in j["gates"]])
assert name == "series.mbox", name
assert patched[0] == {"series": "linux-6.1"} and len(patched) == 3, patched
assert j["workloads"] and j["gates"], "the rt suite gave no workloads or gates"
PY
"$SCHEDLAB" submit cancel "$qid" 2>err.txt || e2e_fail "cancel of a queued job failed: $(cat err.txt)"
grep -q 'is cancelled' err.txt || e2e_fail "cancel of a queued job: $(cat err.txt)"
api_expect 200 GET "/v1/jobs/$qid"
[ "$(api_json 'j["status"]')" = cancelled ] || e2e_fail "the queued job is not cancelled"
kill -INT "$CLIENT_PID"
t0=$SECONDS
wait "$CLIENT_PID"
rc=$?
CLIENT_PID=
tail -n 5 ctrlc.err
echo "the client exited $rc $((SECONDS - t0))s after SIGINT"
[ "$rc" = 2 ] || e2e_fail "the interrupted client exited $rc, not 2"
grep -q "interrupted; cancelling job $cid" ctrlc.err || e2e_fail "the client does not say it cancels"
api_wait_status "$cid" cancelled 300

# --- multipart: --patch and --mbox ------------------------------------------
# The base does not build either, so this job also ends without a guest.
"$SCHEDLAB" submit nobuild.json --patch extra.patch --mbox series.mbox >mbox.id 2>err.txt ||
	e2e_fail "the multipart submit failed: $(cat err.txt)"
mid=$(cat mbox.id)
python3 - "$E2E_TMP/state/schedlab.db" "$mid" <<'PY' || e2e_fail "the uploaded patches are not the job's"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
spec, = db.execute("select expanded_json from jobs where id = ?", (sys.argv[2],)).fetchone()
patched = json.loads(spec)["kernels"]["patched"]["patches"]
# inline texts are stored once, by hash, in blobs (docs/service.md)
for p in patched:
    if "content_sha256" in p:
        p["content"], = db.execute("select content from blobs where sha256 = ?",
                                   (p.pop("content_sha256"),)).fetchone()
names = [p.get("name", p.get("series")) for p in patched]
print("patched kernel's patches:", names)
# the base's two, then the --patch file, then the mbox's two without the cover letter
assert len(patched) == 5, names
assert names[2] == "extra.patch", names
assert "first, changed" in patched[3]["content"] and "second, changed" in patched[4]["content"], names
assert names[3].startswith("0001-") and names[4].startswith("0002-"), names
assert not any("cover letter" in p.get("content", "") for p in patched), "the cover letter was kept"
PY
api_wait_status "$mid" failed 600

api_stop
trap _api_cleanup EXIT
echo "63-submit-client: ok"
