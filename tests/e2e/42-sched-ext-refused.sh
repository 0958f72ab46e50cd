#!/usr/bin/env bash
# A sched_ext variant on a kernel without SCHED_CLASS_EXT (the 6.1 base, warm
# from the other tests) is refused before any guest boots, with an error
# naming the field and the option (docs/sched-ext.md). Under a second.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_job.sh"
e2e_need_guest
e2e_tmpdir

python3 - "$E2E_ROOT/examples/seed-reproduction-short.json" "$E2E_TMP/scx61.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["name"] = "scx-on-61"
j["variants"]["patched"]["sched_ext"] = {"scheduler": "scx_simple"}
json.dump(j, open(sys.argv[2], "w"))
PY
e2e_run_refused "$E2E_TMP/scx61.json" scx61
grep -q '\$\.variants\.patched\.sched_ext: .*CONFIG_SCHED_CLASS_EXT' "$E2E_TMP/scx61.out" ||
	e2e_fail "the error does not name the field and the option"
if grep -q '\$\.variants\.patched\.sched_ext: \$' "$E2E_TMP/scx61.out"; then
	e2e_fail "the error names the field twice"
fi
if grep -q "run 1/" "$E2E_TMP/scx61.out"; then e2e_fail "a guest booted"; fi
