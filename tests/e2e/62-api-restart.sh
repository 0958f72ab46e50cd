#!/usr/bin/env bash
# timeout: 2700
# Crash and restart: kill -9 the service while a job is between runs, start
# it again on the same state directory. The interrupted job is re-queued at
# the front (ahead of a job that was queued before it), goes on from its
# finished runs and finishes; no finished run is redone (each run key has
# exactly one "run" event) or lost; the killed service's guest domains are
# gone (libvirt autodestroy).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
e2e_need curl python3 virsh sqlite3 jq
api_need_runner
e2e_tmpdir
cd "$E2E_TMP"
api_config config.json
API_LOG=$E2E_TMP/serve.log
state=$E2E_TMP/state
db=$state/schedlab.db
api_start "$state" config.json
trap 'echo "--- serve log:"; tail -n 40 "$API_LOG"; _api_cleanup' EXIT
J=(-H 'Content-Type: application/json')
# The short seed job with its noisy runs kept: under the default policy a
# loaded host reruns noisy rounds, and the run counts below would not hold.
job=$E2E_TMP/job.json
jq '. + {noise_policy: "keep"}' "$E2E_ROOT/examples/seed-reproduction-short.json" >"$job"
nruns=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["repeat"]*len(j["variants"]))' "$job")
[ "$nruns" -ge 2 ] || e2e_skip "the short seed job has fewer than 2 runs"

api_expect 202 POST /v1/jobs "${J[@]}" --data-binary "@$job"
a=$(api_json 'j["id"]')
# A priority above 0 needs the admin role.
TOKEN=$API_TOKEN_ADMIN api_expect 202 'POST' '/v1/jobs?priority=5' "${J[@]}" --data-binary "@$job"
b=$(api_json 'j["id"]')
sql() { sqlite3 -cmd '.timeout 5000' "$db" "$1"; }

# Wait for a finished run, but not all of them.
end=$((SECONDS + 2400))
while :; do
	n=$(sql "SELECT COUNT(*) FROM runs WHERE job_id='$a';")
	[ "$n" -ge 1 ] && break
	[ $SECONDS -lt $end ] || e2e_fail "no run finished within 2400 s"
	[ "$(sql "SELECT status FROM jobs WHERE id='$a';")" = failed ] && e2e_fail "job failed: $(sql "SELECT error_json FROM jobs WHERE id='$a';")"
	sleep 0.5
done
[ "$n" -lt "$nruns" ] || e2e_fail "all $nruns runs finished before the kill; nothing to test"
doms=$(e2e_virsh list --name | grep '^schedlab-' || true)
ours=()
for d in "$state"/jobs/"$a"/runs/*/; do
	[ -d "$d" ] && ours+=("schedlab-$(basename "$d")")
done
api_kill9
n=$(sql "SELECT COUNT(*) FROM runs WHERE job_id='$a';")
echo "killed with $n of $nruns runs stored"
st=$(sql "SELECT status FROM jobs WHERE id='$a';")
case "$st" in building | booting | running | comparing) echo "job $a left $st" ;;
*) e2e_fail "job $a is $st after the kill" ;; esac
[ "$(sql "SELECT status FROM jobs WHERE id='$b';")" = queued ] || e2e_fail "job $b is not queued"
stored_before=$(sql "SELECT group_concat(run_key) FROM runs WHERE job_id='$a';")

# libvirt ends the killed service's domains (autodestroy) once it sees the
# connection close; on a loaded host that can take a few seconds.
for dom in "${ours[@]}"; do
	gone_by=$((SECONDS + 30))
	while e2e_virsh list --name | grep -qx "$dom"; do
		[ $SECONDS -lt $gone_by ] || e2e_fail "domain $dom outlived the killed service by 30 s"
		sleep 0.5
	done
done
echo "domains before kill: $(echo $doms); ours gone"

api_start "$state" config.json
grep -q "re-queued 1 interrupted job" "$API_LOG" || e2e_fail "no re-queue logged"
# The killed service's guests read their serial ports from sockets of its
# own, not libvirt console streams (docs/guests.md): its death left the
# daemon serving, and health says so with its bounded probe.
TOKEN= api_expect 200 GET /v1/health
[ "$(api_json 'j["libvirt"][0]["state"]')" = answers ] ||
	e2e_fail "health does not say libvirt answers: $(cat "$API_BODY")"
# a is ahead of b (priority 5) because it was interrupted.
api_wait_status "$a" building booting running comparing done 120
[ "$(sql "SELECT status FROM jobs WHERE id='$b';")" = queued ] || e2e_fail "job $b started before the interrupted job"
api_wait_status "$a" done 2400

total=$(sql "SELECT COUNT(*) FROM runs WHERE job_id='$a';")
[ "$total" -eq "$nruns" ] || e2e_fail "$total runs stored, expected $nruns"
dup=$(sql "SELECT json_extract(data_json,'\$.run_key') FROM events WHERE job_id='$a' AND type='run' GROUP BY 1 HAVING COUNT(*) > 1;")
[ -z "$dup" ] || e2e_fail "runs done twice: $dup"
[ "$(sql "SELECT COUNT(*) FROM events WHERE job_id='$a' AND type='run';")" -eq "$nruns" ] ||
	e2e_fail "run events do not match the runs"
echo "stored before the kill: $stored_before; all $nruns runs stored once"
reused=$(grep -c "job $a: run '.*' was finished before, reusing it" "$API_LOG")
[ "$reused" -eq "$n" ] || e2e_fail "$reused runs reused, expected $n"

api_expect 200 GET "/v1/jobs/$a/result"
cp "$API_BODY" result.json
"$SCHEDLAB" validate --result result.json || e2e_fail "the result does not validate"
python3 - result.json "$nruns" "$stored_before" <<'PY' || e2e_fail "the result lost runs"
import json, sys
r = json.load(open(sys.argv[1]))
keys = [run["key"] for v in r["variants"].values() for run in v["runs"]]
assert len(keys) == int(sys.argv[2]), keys
for k in sys.argv[3].split(","):
    assert k in keys, (k, keys)
print("result runs:", keys)
PY
# b was submitted with the admin token (priority 5): its owner cancels it.
st=$(TOKEN=$API_TOKEN_ADMIN api_call DELETE "/v1/jobs/$b")
case "$st" in 200 | 202) ;; *) e2e_fail "DELETE $b: HTTP $st" ;; esac
api_stop
trap _api_cleanup EXIT
echo "62-api-restart: ok"
