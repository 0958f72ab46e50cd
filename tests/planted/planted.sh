#!/usr/bin/env bash
# The planted-regression suite's driver, sourced by tests/e2e/45-planted-*.sh
# after tests/e2e/lib.sh (docs/planted-regressions.md).
#
#   planted_test NAME SUITE REPEAT
#
# (SUITE "default": no --suite at all, as a user who gives none runs it)
# submits tests/planted/NAME.patch the way a user would: from a fresh
# directory outside the repository, `schedlab test --suite SUITE --repeat
# REPEAT PATCH -o result.json --junit junit.xml`, with the default job
# directory (so every path the job uses must be made absolute by schedlab
# itself). It checks the result against the schema and leaves
#   PLANTED_RC      schedlab test's exit status
#   PLANTED_DIR     the directory it ran in (result.json, junit.xml)
#   PLANTED_SECS    how long it took (seconds)
# Then
#   planted_expect_fail METRIC_OR_STATUS...   exit 1, verdict fail, and each
#       argument named by verdict_reasons: a metric (e.g. inversions,
#       latency_us.*) must have a gated comparison of variant 'patched'
#       that regressed and a reason that names it; "hung" (or "panic",
#       "crashed") must be the status of a run of variant 'patched', named
#       in a reason.
#   planted_expect_no_change   the A/A check (comment-only): exit 0 or 3,
#       verdict pass or inconclusive, no gated comparison of 'patched'
#       improved, regressed or changed, every run of it ok, no JUnit failure.
#   planted_expect_not_regressed   exit 0 or 3, no gated metric of
#       'patched' regressed, every run of it ok.
# false-failure rate: per caller (each 45-planted-*.sh states its own). The
# checks after the verdict are deterministic given it; planted_expect_fail
# fails on a missed detection, planted_expect_no_change and
# planted_expect_not_regressed only on a false change of a gated metric
# (never on "inconclusive"), and planted_expect_regressed_in also on a
# false regression of an idle latency gate.
# shellcheck shell=bash

planted_test() {
	local name=$1 suite=$2 repeat=$3 start
	local patch="$E2E_ROOT/tests/planted/$name.patch"
	[ -f "$patch" ] || e2e_fail "no planted patch '$patch'"
	e2e_need_guest
	e2e_tmpdir
	PLANTED_DIR=$E2E_TMP
	cd "$PLANTED_DIR"
	start=$(date +%s)
	set +e
	local suite_opt=(--suite "$suite")
	[ "$suite" = default ] && suite_opt=()
	"$SCHEDLAB" test "${suite_opt[@]}" --repeat "$repeat" "$patch" -o result.json --junit junit.xml
	PLANTED_RC=$?
	set -e
	PLANTED_SECS=$(($(date +%s) - start))
	echo "planted $name: schedlab test ${suite_opt[*]} --repeat $repeat exited $PLANTED_RC after ${PLANTED_SECS}s"
	[ -f result.json ] || e2e_fail "schedlab test wrote no result.json (exit $PLANTED_RC)"
	[ -f junit.xml ] || e2e_fail "schedlab test wrote no junit.xml (exit $PLANTED_RC)"
	"$SCHEDLAB" validate --result result.json
	"$E2E_ROOT/tests/tools/check-schema.py" result result.json
	# The job ran where it was asked to: the default job dir under the cwd.
	[ -d build/jobs ] || e2e_fail "the default job directory was not created under the working directory"
}

# Prints the medians and the per-run values of every gated comparison and the
# status of every run: the numbers docs/planted-regressions.md quotes.
planted_summary() {
	python3 - "$PLANTED_DIR/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v, var in r["variants"].items():
    print(f"{v}: runs", [f"{run['key']}={run['status']}" for run in var.get("runs", [])],
          "skipped", var.get("skipped_runs", 0))
for c in r.get("comparisons", []):
    if c.get("gated"):
        b, k = c["baseline"], c["candidate"]
        print(f"{c['variant']} {c['workload']} {c['metric']}: median {b['median']} -> "
              f"{k['median']} (values {b['values']} -> {k['values']}), ci95 {c.get('ci95')}, "
              f"p {c.get('p_value')}, threshold {c.get('threshold')}: {c['verdict']}")
print("verdict:", r["verdict"])
for line in r.get("verdict_reasons", []):
    print("  -", line)
PY
}

planted_expect_fail() {
	planted_summary
	[ "$PLANTED_RC" -eq 1 ] || e2e_fail "schedlab test exited $PLANTED_RC, expected 1 (fail)"
	python3 - "$PLANTED_DIR/result.json" "$@" <<'PY'
import fnmatch, json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "fail", f"verdict {r['verdict']}, expected fail"
reasons = r.get("verdict_reasons", [])
for want in sys.argv[2:]:
    if want in ("hung", "panic", "crashed"):
        runs = [run for run in r["variants"]["patched"]["runs"] if run["status"] == want]
        assert runs, f"no run of variant 'patched' ended {want}: " + \
            str([run["status"] for run in r["variants"]["patched"]["runs"]])
        keys = [run["key"] for run in runs]
        assert any(want in x and any(k in x for k in keys) for x in reasons), \
            f"no verdict reason names a {want} run {keys}: {reasons}"
        print(f"ok: {keys} {want}, named in the reasons")
        continue
    comps = [c for c in r["comparisons"]
             if c["variant"] == "patched" and c.get("gated") and c["verdict"] == "regressed"
             and fnmatch.fnmatchcase(c["metric"], want)]
    assert comps, f"no gated comparison matching '{want}' regressed: " + str(
        [(c["metric"], c["verdict"]) for c in r["comparisons"] if c.get("gated")])
    for c in comps:
        assert any(f"'{c['metric']}'" in x for x in reasons), \
            f"the verdict reasons do not name {c['metric']}: {reasons}"
        print(f"ok: {c['metric']} regressed, named in the reasons")
PY
	grep -q '<failure' "$PLANTED_DIR/junit.xml" || e2e_fail "junit.xml has no failure for a failed verdict"
}

# Not "exit 0, verdict pass": an unchanged kernel passes only when every gate
# is shown within its threshold, and at 5 to 8 runs a side a gate can stay
# inconclusive (954 of 12000 replayed 5:8 A/A jobs of the quiet inversions
# pool did: tests/e2e/45-planted-comment-only.sh's header). What must never
# happen to identical kernels is a change: a gated comparison improved,
# regressed or changed, or a failed verdict. That still fails a product that
# calls identical kernels different, or whose patch path breaks the kernel.
planted_expect_no_change() {
	planted_expect_none_of improved regressed changed
}

# planted_expect_none_of WORD...: exit 0 or 3, verdict pass or inconclusive
# (an inconclusive gate named in the reasons), the default gates there, no
# gated comparison of variant 'patched' with one of WORDs, every run of it
# ok, and no failure in JUnit.
planted_expect_none_of() {
	planted_summary
	case "$PLANTED_RC" in
	0 | 3) ;;
	*) e2e_fail "schedlab test exited $PLANTED_RC, expected 0 (pass) or 3 (inconclusive)" ;;
	esac
	python3 - "$PLANTED_DIR/result.json" "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
words = sys.argv[2:]
assert r["verdict"] in ("pass", "inconclusive"), (r["verdict"], r.get("verdict_reasons"))
assert r["job"].get("gates"), "the suite's default gates must be there"
gated = [c for c in r["comparisons"] if c["variant"] == "patched" and c.get("gated")]
assert gated, "no gated comparison of variant 'patched'"
bad = [(c["workload"], c["metric"], c["verdict"]) for c in gated if c["verdict"] in words]
assert not bad, f"a gated comparison the patch must not show ({' or '.join(words)}): {bad}"
runs = r["variants"]["patched"]["runs"]
assert runs and all(run["status"] == "ok" for run in runs), [run["status"] for run in runs]
if r["verdict"] == "inconclusive":
    open_gates = [c for c in gated if c["verdict"] == "inconclusive"]
    assert open_gates and all(any(f"'{c['metric']}'" in x for x in r["verdict_reasons"])
                              for c in open_gates), r["verdict_reasons"]
print("none of", words, ": verdict", r["verdict"], [(c["metric"], c["verdict"]) for c in gated])
PY
	if grep -q '<failure' "$PLANTED_DIR/junit.xml"; then
		e2e_fail "junit.xml has a failure although the verdict did not fail"
	fi
}

# planted_expect_regressed_in WORKLOAD_GLOB METRIC_GLOB [IDLE_GLOB]: some
# gated comparison of variant 'patched' on METRIC_GLOB of a workload matching
# WORKLOAD_GLOB (the under-load workloads: *-loaded, *-load) regressed, and
# none on IDLE_GLOB (default METRIC_GLOB) of any other workload did, so the
# idle measurement did not see it. IDLE_GLOB narrows that second check to the
# metrics whose A/A false regressions are rare enough (the caller says why).
# planted_expect_not_regressed: the suite did not see the patch: no gated
# comparison of variant 'patched' regressed, no run of it failed, and the
# verdict is pass or inconclusive (exit 0 or 3). For a patch whose effect is
# outside the suite's reach, where "pass" would need every gate proven
# unchanged: at 5 to 8 runs a side under TCG cyclictest's p99 interval is
# wider than its 15 % threshold (docs/statistics.md), so an unchanged kernel
# can come out inconclusive, and that is not a detection.
planted_expect_not_regressed() {
	planted_expect_none_of regressed
}

planted_expect_regressed_in() {
	python3 - "$PLANTED_DIR/result.json" "$1" "$2" "${3:-$2}" <<'PY'
import fnmatch, json, sys
r = json.load(open(sys.argv[1]))
wl, metric, idle_metric = sys.argv[2], sys.argv[3], sys.argv[4]
comps = [c for c in r["comparisons"]
         if c["variant"] == "patched" and c.get("gated") and c["verdict"] == "regressed"
         and fnmatch.fnmatchcase(c["metric"], metric)]
inside = [c for c in comps if fnmatch.fnmatchcase(c["workload"], wl)]
assert inside, f"no gated '{metric}' comparison of a '{wl}' workload regressed: " + str(
    [(c["workload"], c["metric"]) for c in comps])
bad = [(c["workload"], c["metric"]) for c in comps
       if not fnmatch.fnmatchcase(c["workload"], wl) and fnmatch.fnmatchcase(c["metric"], idle_metric)]
assert not bad, f"regressed outside '{wl}': {bad}"
other = [(c["workload"], c["metric"]) for c in comps if not fnmatch.fnmatchcase(c["workload"], wl)]
if other:
    print(f"note: regressed outside '{wl}' but not '{idle_metric}', not asserted:", other)
print("ok: regressed under load:", sorted({(c["workload"], c["metric"]) for c in inside}))
PY
}
