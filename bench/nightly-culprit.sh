#!/usr/bin/env bash
# Nightly tracking from schedule to culprit commit, for real, start to end
# (docs/service.md "Nightly performance tracking", docs/statistics.md "Change points across nights"):
# a service configured with ONE schedule ("* * * * *": a night a minute) on a
# local git kernel tree runs it unattended; after BEFORE nights a user
# commits two changes to the tree's main branch (a comment, then the planted
# RT placement regression, tests/planted/rt-placement.patch); after AFTER
# more nights the change-point detector finds the step in the tip's
# inversions, POSTs the alert to a webhook receiver, and the service bisects
# the nights' commit range by itself ("bisect_change_points"), naming the
# culprit commit; the trend page shows the change point with its marker and
# the answer (checked in headless Chromium when installed).
#
# Each night is a real job: the reference kernel (the built-in 6.1, cached)
# against the tree's main ("tip", built from git when it moves), rt-migrate-
# test -p 60 -l 60 3 (the rt suite's), one boot a side (a cheap sentinel; the
# bisection boots 5 to 8 a side per step). Not part of make check: about
# 21 to 25 minutes on a quiet 2-core host (1275 s and 1479 s, 2026-12-05).
#
# Usage: bench/nightly-culprit.sh [BEFORE (default 6)] [AFTER (default 6)]
# Prints each night (its commit and the tip's inversions), the change point,
# the alert, the bisection's steps and answer, the times and the host load.
# Starts virtlogd and libvirtd when they are not running (stopped after).
set -uo pipefail
case "${1:-}" in -h | --help) sed -n '2,23p' "$0"; exit 0 ;; esac
. "$(dirname "$0")/../tests/e2e/lib.sh"
. "$E2E_ROOT/tests/api/lib.sh"
. "$E2E_ROOT/tests/lib/libvirt-daemons.sh"
trap '_api_cleanup; libvirt_daemons_stop' EXIT
before=${1:-6}
after=${2:-6}
for v in "$before" "$after"; do
	if ! [[ "$v" =~ ^[0-9]+$ ]] || [ "$v" -lt 3 ] || [ "$v" -gt 30 ]; then
		echo "nightly-culprit.sh: BEFORE and AFTER must be 3 to 30 nights" >&2
		exit 2
	fi
done
e2e_need curl python3 git sqlite3
api_need_runner
libvirt_daemons_start
e2e_need_guest
e2e_tmpdir
cd "$E2E_TMP" || exit 2
t0=$SECONDS
say() { echo "[$(date -u +%H:%M:%S) +$((SECONDS - t0))s load $(cut -d' ' -f1 /proc/loadavg)] $*"; }

export GIT_AUTHOR_NAME="schedlab bench" GIT_AUTHOR_EMAIL="bench@schedlab.invalid"
export GIT_COMMITTER_NAME="schedlab bench" GIT_COMMITTER_EMAIL="bench@schedlab.invalid"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
say "writing the tree (schedlab kernel tree)"
mkdir -p allowed
"$SCHEDLAB" kernel tree --quiet allowed/tree >/dev/null || e2e_fail "schedlab kernel tree failed"
git -C allowed/tree checkout -q -B main
base=$(git -C allowed/tree rev-parse HEAD)
tree=$E2E_TMP/allowed/tree

cat >nightly.json <<EOF
{"name": "nightly-rt",
 "description": "The tree's main against the built-in 6.1 kernel, rt suite, one boot a side",
 "kernels": {
   "ref": {"source": "debian:linux-source-6.1", "patches": [{"series": "linux-6.1"}],
           "config": {"builtin": "linux-6.1"}},
   "tip": {"source": "git:$tree@main", "config": {"builtin": "linux-6.1"}}},
 "variants": {"ref": {"kernel": "ref"}, "tip": {"kernel": "tip"}},
 "baseline": "ref",
 "suite": "rt",
 "repeat": 1}
EOF
cat >config.json <<EOF
{"tokens": [{"token": "$API_TOKEN", "roles": ["submit", "read"]},
            {"token": "$API_TOKEN_RO", "roles": ["read"]},
            {"token": "$API_TOKEN_ADMIN", "roles": ["submit", "read", "admin"]}],
 "workers": 1,
 "schedules": [{"name": "nightly-rt", "job": "nightly.json", "at": "* * * * *", "source_ref": "main"}],
 "git_sources": ["$E2E_TMP/allowed"],
 "webhooks": [{"url": "HOOK"}],
 "bisect_change_points": true}
EOF
api_start_receiver "$E2E_TMP/hooks"
sed -i "s|HOOK|$API_HOOK_URL|" config.json
API_LOG=$E2E_TMP/serve.log
api_start "$E2E_TMP/state" config.json
say "service up at $API_URL, schedule nightly-rt every minute, tree at $(git -C "$tree" log --oneline -1)"

# nights_at COMMIT: prints how many nights built the tip at COMMIT and
# ended, after printing each new one once.
seen=" "
nights_at() {
	api_call GET "/v1/jobs?limit=500" >/dev/null
	python3 - "$API_BODY" "$1" "$E2E_TMP/state/schedlab.db" "$seen" <<'PY'
import json, sqlite3, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
commit, db, seen = sys.argv[2], sqlite3.connect(sys.argv[3]), sys.argv[4].split()
n = 0
for j in sorted(jobs, key=lambda j: j.get("created_at", "")):
    if j["name"] != "nightly-rt" or j["status"] not in ("done", "failed"):
        continue
    rows = db.execute("SELECT baseline_median, candidate_median, source_commit FROM comparisons"
                      " WHERE job_id = ? AND metric = 'inversions'", (j["id"],)).fetchall()
    c = rows[0][2] if rows else None
    if j["id"] not in seen:
        sys.stderr.write("  night %s %s: commit %s, inversions ref %s tip %s\n" % (
            j["id"][:8], j["status"], (c or "-")[:12], rows[0][0] if rows else "-",
            rows[0][1] if rows else "-"))
        print("SEEN", j["id"])
    if c == commit:
        n += 1
print(n)
PY
}
wait_nights() { # COMMIT N TIMEOUT_S
	local end=$((SECONDS + $3)) out n
	while [ $SECONDS -lt $end ]; do
		out=$(nights_at "$1")
		for id in $(sed -n 's/^SEEN //p' <<<"$out"); do seen="$seen$id "; done
		n=$(tail -n 1 <<<"$out")
		[ "$n" -ge "$2" ] && return 0
		sleep 5
	done
	e2e_fail "only $n of $2 nights at ${1:0:12} within $3 s (serve log: $API_LOG)"
}

say "waiting for $before nights at the base $(git -C "$tree" rev-parse --short HEAD)"
wait_nights "$base" "$before" $((900 + before * 300))
say "$before nights at the base: committing a comment and the regression to main"
git -C "$tree" apply "$E2E_ROOT/tests/planted/comment-only.patch"
git -C "$tree" commit -q -a -m "sched/rt: document find_lowest_rq()"
git -C "$tree" apply "$E2E_ROOT/tests/planted/rt-placement.patch"
git -C "$tree" commit -q -a -m "sched/rt: prefer the task's own CPU in find_lowest_rq()"
culprit=$(git -C "$tree" rev-parse HEAD)
say "culprit $culprit"
wait_nights "$culprit" "$after" $((600 + after * 300))
say "$after nights at the culprit"

# The change point on the tip's inversions, alerted, with its bisection.
key=
for _ in $(seq 1 120); do
	key=$(python3 - "$E2E_TMP/hooks" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    h = json.load(open(f))
    if h.get("metric") == "inversions" and h.get("variant") == "tip":
        print(h["key"])
        break
PY
)
	[ -n "$key" ] && break
	sleep 5
done
[ -n "$key" ] || e2e_fail "no change point on the tip's inversions was POSTed ($(ls hooks))"
say "alert received: $(ls hooks/*.json | wc -l) POST(s); the inversions change point $key:"
python3 - "$E2E_TMP/hooks" "$key" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    h = json.load(open(f))
    print("  %s %s %s/%s: %s -> %s, nights %s..%s, commits %s..%s, bisection %s" % (
        "*" if h["key"] == sys.argv[2] else " ", h.get("variant"), h.get("workload"), h.get("metric"),
        h["magnitude"]["before"], h["magnitude"]["after"],
        h["last_night_before"]["job_id"][:8], h["first_night_after"]["job_id"][:8],
        (h.get("commit_range") or {}).get("from", "-")[:12], (h.get("commit_range") or {}).get("to", "-")[:12],
        h["links"].get("bisection")))
PY

# Let the bisection run next: cancel the nights still queued (the schedule
# goes on adding one a minute) until it ends.
bisection_state() {
	api_call GET "/v1/change-points?since=3650d&series=nightly-rt" >/dev/null
	python3 - "$API_BODY" "$key" <<'PY'
import json, sys
for cp in json.load(open(sys.argv[1]))["change_points"]:
    if cp["key"] == sys.argv[2]:
        b = cp["bisection"] or {}
        print(b.get("job_id") or "-", b.get("state") or "-", b.get("first_bad_commit") or "-")
PY
}
end=$((SECONDS + 3600))
while [ $SECONDS -lt $end ]; do
	api_call GET "/v1/jobs?status=queued&limit=500" >/dev/null
	for id in $(api_json '" ".join(x["id"] for x in j["jobs"] if x["name"] == "nightly-rt")'); do
		TOKEN=$API_TOKEN_ADMIN api_call DELETE "/v1/jobs/$id" >/dev/null # the schedule's
	done
	read -r bid bstate bad <<<"$(bisection_state)"
	case $bstate in found | no_regression | inconclusive | error | failed | cancelled) break ;; esac
	sleep 10
done
say "bisection job $bid: $bstate, first bad commit $bad"
api_call GET "/v1/jobs/$bid/result" >/dev/null
cp "$API_BODY" bisection-result.json
python3 - bisection-result.json <<'PY'
import json, sys
b = json.load(open(sys.argv[1])).get("bisection") or {}
print("  %s builds, %s boots, certain %s" % (b.get("builds"), b.get("boots"), b.get("certain")))
for s in b.get("steps", []):
    print("  step %s (%s %s): %s, %s boots" % (s.get("patches"), (s.get("commit") or "")[:12],
          s.get("subject"), s.get("verdict"), s.get("boots")))
PY
[ "$bad" = "$culprit" ] || e2e_fail "the bisection named '$bad', not the culprit $culprit"

api_expect 200 GET "/v1/trend?since=3650d"
cp "$API_BODY" trend.html
grep -q "href=\"/v1/jobs/$bid/report\"" trend.html || e2e_fail "the trend page does not link the bisection"
if command -v chromium >/dev/null 2>&1; then
	e2e_chromium --dump-dom "file://$PWD/trend.html" >dom.html ||
		e2e_fail "Chromium failed: $(tail -3 chromium.log)"
	grep -q "dashed vertical line" dom.html || e2e_fail "no change point marker in Chromium's DOM"
	grep -q "${culprit:0:12}" dom.html || e2e_fail "the culprit is not on the page in Chromium's DOM"
	say "trend page in headless Chromium: marker and culprit shown"
fi
api_call GET /metrics >/dev/null
grep '^schedlab_change_points_total' "$API_BODY"
api_stop
say "done: culprit ${culprit:0:12} named by the service's own bisection"
