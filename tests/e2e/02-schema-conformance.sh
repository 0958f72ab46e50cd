#!/usr/bin/env bash
# tier: host
# `schedlab validate --schema SCHEMA FILE` driven from outside, as a user
# checks a file against a schema of their own: the ECMA-262 pattern cases
# that once failed (\d is a digit class, 'é*' matches characters, not bytes),
# a percent-encoded $ref pointer (%25), exit codes (0 valid, 1 invalid,
# 2 unusable schema) and then every case of schedlab's own conformance files
# (tests/data/jsonschema/*.json, the JSON-Schema-Test-Suite format) one
# process per case. The draft-7 suite itself runs in the unit test
# test_jsonschema_conformance (faster in-process); docs/json-schema.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/e2e/lib.sh
e2e_need_schedlab
e2e_need python3
e2e_tmpdir
T=$E2E_TMP
cp "$SCHEDLAB" "$T/schedlab" # immune to a concurrent relink
SCHEDLAB=$T/schedlab

expect() { # expect RC SCHEMA-JSON DATA-JSON
	local want=$1
	printf '%s' "$2" >"$T/schema.json"
	printf '%s' "$3" >"$T/data.json"
	set +e
	out=$("$SCHEDLAB" validate --schema "$T/schema.json" "$T/data.json" 2>&1)
	rc=$?
	set -e
	echo "schema $2, data $3: rc=$rc: $out"
	[ "$rc" -eq "$want" ] || e2e_fail "schema $2 with $3 exited $rc, expected $want"
}

# \d is ECMA-262's digit class (POSIX ERE read it as a literal 'd').
expect 0 '{"pattern": "^\\d+$"}' '"42"'
expect 1 '{"pattern": "^\\d+$"}' '"ddd"'
echo "$out" | grep -qF "invalid: \$ must match the pattern '^\\d+\$' (it is 'ddd'). path: \$" ||
	e2e_fail "no sentence naming the pattern and the value"
# Characters, not bytes.
expect 0 '{"pattern": "^é*$"}' '"éé"'
expect 1 '{"pattern": "^é*$"}' '"e"'
# \t and \cC are ECMA-262 escapes.
expect 0 '{"pattern": "^\\t\\cC$"}' '"\t\u0003"'
expect 1 '{"pattern": "^\\t\\cC$"}' '"tcC"'
# %25 in a $ref fragment is '%' (percent-decoded, then ~1 and ~0).
expect 0 '{"$defs": {"percent%field": {"type": "integer"}}, "$ref": "#/$defs/percent%25field"}' '7'
expect 1 '{"$defs": {"percent%field": {"type": "integer"}}, "$ref": "#/$defs/percent%25field"}' '"x"'
expect 0 '{"$defs": {"a/b": {"type": "integer"}}, "$ref": "#/$defs/a%7E1b"}' '7'
# A schema the validator cannot use is an error at load, whatever the data.
expect 2 '{"pattern": "\\a"}' '"a"'
echo "$out" | grep -q "not a valid ECMA-262 regular expression" || e2e_fail "no reason for the bad pattern"
expect 2 '{"properties": {"a": {"$ref": "#/$defs/missing"}}}' '5'
expect 2 '{"allOf": 5}' '5'
# Not JSON is invalid data (1) but an unusable schema (2).
expect 1 '{}' 'not json'
expect 2 'not json' '1'
# The schema is checked before the data is read: a bad schema wins.
expect 2 '{"pattern": "(?i)x"}' 'not json'
# Usage.
set +e
"$SCHEDLAB" validate --schema "$T/schema.json" --job "$T/data.json" >/dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || e2e_fail "--schema with --job exited $rc, expected 2"
"$SCHEDLAB" validate --help | grep -q -- '--schema SCHEMA' || e2e_fail "--help does not mention --schema"

python3 - "$SCHEDLAB" "$T" tests/data/jsonschema <<'PYEOF'
import glob, json, os, subprocess, sys
schedlab, tmp, src = sys.argv[1:4]
total = failed = 0
for path in sorted(glob.glob(os.path.join(src, "*.json"))):
    kw = os.path.basename(path)[:-5]
    passed = bad = 0
    for gi, group in enumerate(json.load(open(path, encoding="utf-8"))):
        schema_file = os.path.join(tmp, "s.json")
        with open(schema_file, "w", encoding="utf-8") as f:
            json.dump(group["schema"], f, ensure_ascii=False)
        for ti, case in enumerate(group["tests"]):
            data_file = os.path.join(tmp, "d.json")
            with open(data_file, "w", encoding="utf-8") as f:
                json.dump(case["data"], f, ensure_ascii=False)
            p = subprocess.run([schedlab, "validate", "--schema", schema_file, data_file],
                               capture_output=True, text=True)
            want = 2 if group.get("schema_error") else (0 if case["valid"] else 1)
            if p.returncode == want:
                passed += 1
            else:
                bad += 1
                print(f"FAIL {kw}: '{group['description']}' / '{case['description']}': "
                      f"exit {p.returncode}, expected {want}: {p.stdout.strip()} {p.stderr.strip()}")
    print(f"{kw:20} {passed:3} passed, {bad} failed")
    total += passed
    failed += bad
print(f"{'total':20} {total:3} passed, {failed} failed")
sys.exit(1 if failed or total < 20 else 0)
PYEOF
echo "ok"
