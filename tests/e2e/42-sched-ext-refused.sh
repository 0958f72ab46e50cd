#!/usr/bin/env bash
# A sched_ext variant on a kernel without SCHED_CLASS_EXT (the 6.1 base, warm
# from the other tests) is refused before any guest boots, with an error
# naming the field and the option (docs/sched-ext.md). Under a second.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_job.sh"
e2e_need_guest
e2e_tmpdir

# A sched_ext variant on a kernel without SCHED_CLASS_EXT (the 6.1 base, warm
# from the other tests): an error naming the field before any guest boots.
python3 - "$E2E_ROOT/examples/seed-reproduction-short.json" "$E2E_TMP/scx61.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["name"] = "scx-on-61"
j["variants"]["patched"]["sched_ext"] = {"scheduler": "scx_simple"}
json.dump(j, open(sys.argv[2], "w"))
PY
set +e
"$SCHEDLAB" run "$E2E_TMP/scx61.json" -o "$E2E_TMP/scx61-result.json" --job-dir "$E2E_TMP/scx61" \
	>"$E2E_TMP/scx61.out" 2>&1
rc=$?
set -e
cat "$E2E_TMP/scx61.out"
[ "$rc" -eq 2 ] || e2e_fail "sched_ext on a kernel without it should be an error (exit 2), got $rc"
grep -q '\$\.variants\.patched\.sched_ext: .*CONFIG_SCHED_CLASS_EXT' "$E2E_TMP/scx61.out" ||
	e2e_fail "the error does not name the field and the option"
if grep -q "run 1/" "$E2E_TMP/scx61.out"; then e2e_fail "a guest booted"; fi
