#!/usr/bin/env bash
# tier: host
# false-failure rate: 0 (deterministic: schema checks of fixed documents; the
# word "verdict" here is a field the schemas must refuse, no job runs).
# The C validator (schedlab validate) against Debian's python3-jsonschema
# (Draft202012Validator) on the examples, the example result, hand-written
# invalid documents and a few hundred seeded random mutations of the examples:
# both must agree on valid/invalid every time.
set -euo pipefail
cd "$(dirname "$0")/../.."
SCHEDLAB=${SCHEDLAB:-build/schedlab}
PY=/usr/bin/python3
[ -x "$SCHEDLAB" ] || { echo "skip: $SCHEDLAB is not built (run make)"; exit 77; }
"$PY" -c 'import jsonschema; jsonschema.Draft202012Validator' 2>/dev/null ||
	{ echo "skip: Debian's python3-jsonschema is not installed"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A private copy: a concurrent 'make' relinking build/schedlab must not make
# one of the hundreds of runs below fail to exec.
cp "$SCHEDLAB" "$tmp/schedlab"
SCHEDLAB=$tmp/schedlab

export SCHEDLAB_DATA_DIR=$PWD
"$PY" - "$SCHEDLAB" "$tmp" <<'PYEOF'
import copy, glob, json, os, random, subprocess, sys
import jsonschema

schedlab, tmp = sys.argv[1], sys.argv[2]
schemas = {k: json.load(open(f"results-schema/{k}.schema.json")) for k in ("job", "result")}
for s in schemas.values():
    jsonschema.Draft202012Validator.check_schema(s)
validators = {k: jsonschema.Draft202012Validator(s) for k, s in schemas.items()}

def c_validate(kind, doc, name):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    p = subprocess.run([schedlab, "validate", "--" + kind, "--schema-only", path],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"schedlab validate crashed or failed on {name}: rc={p.returncode} {p.stderr}")
    return p.returncode == 0, p.stdout.strip()

checked = 0
def check(kind, doc, name, expect=None):
    global checked
    py_ok = validators[kind].is_valid(doc)
    c_ok, msg = c_validate(kind, doc, name)
    checked += 1
    if py_ok != c_ok:
        errs = [e.message for e in validators[kind].iter_errors(doc)][:3]
        sys.exit(f"DISAGREE on {name}: python {'valid' if py_ok else 'invalid'} {errs}, "
                 f"schedlab: {msg}\n{json.dumps(doc)[:2000]}")
    if expect is not None and c_ok != expect:
        sys.exit(f"{name}: expected {'valid' if expect else 'invalid'}, both say otherwise: {msg}")
    return msg

examples = sorted(glob.glob("examples/*.json"))
assert examples, "no examples/*.json"
for ex in examples:
    check("job", json.load(open(ex)), os.path.basename(ex), True)
result = json.load(open("tests/data/result-example.json"))
check("result", result, "result-example", True)
check("job", result["job"], "result-example-job", True)
print(f"ok: {len(examples)} examples and the example result are valid in both")

# Hand-written invalid documents, with the path the C validator must name.
base = json.load(open("examples/seed-reproduction.json"))
def mutated(f):
    d = copy.deepcopy(base); f(d); return d
cases = [
    ("vcpus-65", lambda d: d.setdefault("guest", {}).update(vcpus=65), "$.guest.vcpus"),
    ("memory-64", lambda d: d.setdefault("guest", {}).update(memory_mb=64), "$.guest.memory_mb"),
    ("repeat-0", lambda d: d.update(repeat=0), "$.repeat"),
    ("unknown-top", lambda d: d.update(colour="red"), "$.colour"),
    ("bad-tool", lambda d: d["workloads"][0].update(tool="schbench"), "$.workloads[0].tool"),
    ("long-arg", lambda d: d["workloads"][0].update(args=["x" * 257]), "$.workloads[0].args[0]"),
    ("bad-feature", lambda d: next(iter(d["variants"].values())).update(features=["rt_push"]), None),
    ("bad-name", lambda d: d.update(name="-x"), "$.name"),
    ("timeout-big", lambda d: d["workloads"][0].update(timeout_s=3601), "$.workloads[0].timeout_s"),
    ("uid-key", lambda d: next(iter(d["variants"].values())).update(uid_shares={"65536": 1024}), None),
    ("share-0", lambda d: next(iter(d["variants"].values())).update(uid_shares={"1000": 0}), None),
    ("tunable", lambda d: next(iter(d["variants"].values())).update(sched_tunables={"base/slice_ns": 1}), None),
    ("no-workloads", lambda d: d.pop("workloads"), "$.workloads"),
]
for name, f, path in cases:
    msg = check("job", mutated(f), name, False)
    if path and f"path: {path}" not in msg:
        sys.exit(f"{name}: expected path {path} in: {msg}")
bad_results = [
    ("schema-v2", lambda r: r.update(schema="schedlab.result/v2")),
    ("verdict", lambda r: r.update(verdict="maybe")),
    ("status", lambda r: r["variants"]["baseline"]["runs"][0].update(status="weird")),
    ("metric-name", lambda r: r["variants"]["baseline"]["runs"][0]["workloads"][0]["metrics"].update({"Bad Name": 1})),
    ("metric-str", lambda r: r["variants"]["baseline"]["runs"][0]["workloads"][0]["metrics"].update({"x": "1"})),
    ("pvalue", lambda r: r["comparisons"][0].update(p_value=1.5)),
    ("ci-3", lambda r: r["comparisons"][0].update(ci95=[1, 2, 3])),
]
for name, f in bad_results:
    r = copy.deepcopy(result); f(r); check("result", r, "result-" + name, False)
print(f"ok: {len(cases) + len(bad_results)} invalid documents are invalid in both")

# Seeded random mutations: replace, delete or add values anywhere.
rng = random.Random(20261203)
values = [None, True, False, 0, -1, 1, 65, 1.5, 3.0, 1e20, "", "x", "rt_push", "RT_PUSH",
          "NO_HRTICK", "a" * 65, "cyclictest", "0", "65535", "é" * 64, "é" * 65, [], [1, 1],
          ["RT_PUSH", "RT_PUSH"], {}, {"series": "linux-6.1"}, {"name": "a.patch"},
          {"name": "a.patch", "content": "x"}, {"path": "p", "series": "s"}]
def paths(o, p=()):
    yield p
    if isinstance(o, dict):
        for k, v in o.items(): yield from paths(v, p + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o): yield from paths(v, p + (i,))
def mutate(doc):
    d = copy.deepcopy(doc)
    ps = [p for p in paths(d) if p]
    p = rng.choice(ps)
    parent = d
    for k in p[:-1]: parent = parent[k]
    op = rng.random()
    if op < 0.6:
        parent[p[-1]] = copy.deepcopy(rng.choice(values))
    elif op < 0.8:
        del parent[p[-1]]
    elif isinstance(parent, dict):
        parent[rng.choice(["extra", "1000", "latency_ns", "hrtick", "relative"])] = copy.deepcopy(rng.choice(values))
    else:
        parent.append(copy.deepcopy(rng.choice(values)))
    return d
docs = [(k, json.load(open(e))) for k, e in [("job", e) for e in examples]]
n_valid = n_invalid = 0
for i in range(300):
    kind, doc = docs[i % len(docs)]
    m = mutate(doc)
    if rng.random() < 0.3:
        m = mutate(m)
    ok = validators[kind].is_valid(m)
    n_valid += ok; n_invalid += not ok
    check(kind, m, f"mut{i}")
for i in range(60):
    m = mutate(result)
    check("result", m, f"rmut{i}")
print(f"ok: 360 random mutations agree ({n_valid} valid, {n_invalid} invalid job mutations)")
print(f"ok: {checked} documents checked")
PYEOF
