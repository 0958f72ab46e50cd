#!/usr/bin/env bash
# Runs each libFuzzer target in build/fuzz/ for a while, from seeds built out
# of the repository's own test data (docs/fuzzing.md). Fails if a target
# finds a crash, a sanitizer report, a failed assertion, a leak or a timeout;
# the input is left in build/fuzz/artifacts/ and the target's log is printed.
# Committed reproducers in tests/fuzz/regress/<target>/ are replayed first.
# Usage: tests/fuzz/run.sh [SECONDS-PER-TARGET] [TARGET-REGEX]   (default 30)
set -uo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in -h|--help) sed -n '2,7p' "$0"; exit 0 ;; esac
secs=${1:-${FUZZ_SECONDS:-30}}
filter=${2:-}
[[ "$secs" =~ ^[0-9]+$ ]] || { echo "run.sh: SECONDS must be a number, not '$secs'" >&2; exit 2; }
BUILD=${BUILD:-build}
out=$BUILD/fuzz
export SCHEDLAB_DATA_DIR=$PWD
mkdir -p "$out/artifacts"

# Seeds: libFuzzer keeps what it learns in $out/corpus/<target>, so a second
# run on the same machine starts where the first stopped.
seed() { # target name < bytes
	mkdir -p "$out/corpus/$1"
	cat >"$out/corpus/$1/seed-$2"
}
python3 - "$out/corpus/fuzz_frame" <<'PY'
import os, sys, zlib
d = sys.argv[1]; os.makedirs(d, exist_ok=True)
def frame(kind, payload):
    return b"\nSLFRAME v1 %s %d %08x\n" % (kind, len(payload), zlib.crc32(payload)) + payload + b"\nSLEND\n"
seeds = {
    "one": frame(b"hello", b'{"agent":"schedlab"}'),
    "noise": b"[    1.000000] Linux version 6.1\r\n" + frame(b"workload", b'{"stdout":"x"}') + b"tail",
    "two": frame(b"a", b"") + frame(b"result-1", b"z" * 300),
    "badcrc": b"\nSLFRAME v1 x 3 00000000\nabc\nSLEND\n",
    "cut": frame(b"log", b"0123456789")[:30],
}
for name, data in seeds.items():
    # The first byte picks the feeding chunk size.
    open(os.path.join(d, "seed-" + name), "wb").write(b"\x07" + data)
PY
for f in tests/data/console/*.txt; do printf '\x1f' | cat - "$f" | seed fuzz_console "$(basename "$f" .txt)"; done
for f in tests/data/rt-tests/rtmigrate-*.stdout; do
	{ printf '\x00'; cat "$f"; printf '\x00'; cat "${f%.stdout}.json"; } | seed fuzz_metrics "$(basename "$f" .stdout)"
done
# cyclictest's captured stdout is 28-42 kB of per-loop lines; its first 4 kB
# hold every line shape, and small seeds keep the inputs per second high.
for f in tests/data/rt-tests/cyclictest-*.stdout; do
	{ printf '\x01'; head -c 4000 "$f"; printf '\x00'; cat "${f%.stdout}.json"; } | seed fuzz_metrics "$(basename "$f" .stdout)"
done
printf '\x02{"tool":"slice","metrics":{"slice_us.mean":4044.5,"slice_us.max":8461},"details":{}}\n' |
	seed fuzz_metrics own-tool
seed fuzz_metrics wakeup < <(printf '\x02'; cat tests/data/workloads/wakeup-m2-w2.stdout)
# the tools beyond the four suites', by the first byte (modulo 10): 3 hackbench, 4 pi_stress, 5 pip_stress,
# 6 cyclicdeadline, 7 stress-ng (stdout NUL file)
for f in tests/data/rt-tests/hackbench-*.stdout; do
	{ printf '\x03'; cat "$f"; } | seed fuzz_metrics "$(basename "$f" .stdout)"
done
for f in tests/data/rt-tests/pistress-*.stdout; do
	{ printf '\x04'; cat "$f"; printf '\x00'; cat "${f%.stdout}.json"; } | seed fuzz_metrics "$(basename "$f" .stdout)"
done
{ printf '\x05'; cat tests/data/rt-tests/pipstress.stdout; } | seed fuzz_metrics pipstress
for f in tests/data/rt-tests/cyclicdeadline-*.json; do
	{ printf '\x06\x00'; cat "$f"; } | seed fuzz_metrics "$(basename "$f" .json)"
done
{ printf '\x07\x00'; cat tests/data/workloads/stress-ng-switch-mutex-futex-yield.yaml; } | seed fuzz_metrics stress-ng
# 9 two /proc/schedstat snapshots (before NUL after)
for f in tests/data/workloads/schedstat-*.before; do
	[ -e "$f" ] || continue
	{ printf '\x09'; cat "$f"; printf '\x00'; cat "${f%.before}.after"; } | seed fuzz_metrics "$(basename "$f" .before)"
done
# 8 perf-bench-sched (stdout)
for f in tests/data/workloads/perf-bench-sched-*.stdout; do
	{ printf '\x08'; cat "$f"; } | seed fuzz_metrics "$(basename "$f" .stdout)"
done
for f in examples/*.json; do seed fuzz_job "$(basename "$f" .json)" <"$f"; done
for f in tests/data/patchset/*; do seed fuzz_patchset "$(basename "$f")" <"$f"; done
# fuzz_json: the first byte picks the limits (0: the defaults, 0x83: depth 3
# and 64 bytes).
for f in examples/*.json tests/data/rt-tests/*.json; do
	printf '\x00' | cat - "$f" | seed fuzz_json "$(basename "$f" .json)"
done
printf '\x83[[1],{"a":"\xc3\xa9"}]' | seed fuzz_json small-limits
# fuzz_schema: byte 0, then SCHEMA NUL DATA (each own conformance group's first
# case); byte 1, then a bare ECMA-262 pattern.
python3 - "$out/corpus/fuzz_schema" tests/data/jsonschema/*.json <<'PY'
import json, os, sys
d = sys.argv[1]; os.makedirs(d, exist_ok=True)
for path in sys.argv[2:]:
    for i, g in enumerate(json.load(open(path, encoding="utf-8"))):
        name = "%s-%d" % (os.path.basename(path)[:-5], i)
        body = json.dumps(g["schema"]).encode() + b"\0" + json.dumps(g["tests"][0]["data"]).encode()
        open(os.path.join(d, "seed-" + name), "wb").write(b"\x00" + body)
        if isinstance(g["schema"], dict) and isinstance(g["schema"].get("pattern"), str):
            open(os.path.join(d, "seed-" + name + "-re"), "wb").write(b"\x01" + g["schema"]["pattern"].encode())
PY

# fuzz_run_record: byte 0 picks the job (0 hackbench, 1 rt-migrate-test and
# cyclictest, 2 slice and pi_stress, 3 stress-ng); then NUL-separated
# payloads, each after a byte for its kind (s summary, w workload, h hello).
python3 - "$out/corpus/fuzz_run_record" <<'PY'
import json, os, sys
d = sys.argv[1]; os.makedirs(d, exist_ok=True)
def read(p): return open(p, encoding="utf-8").read()
summary = {"uname": "6.1.0", "nr_cpus": 2, "features": {"requested": [], "applied": ["HRTICK"], "errors": []},
           "tunables": {"applied": {}, "errors": []}, "cgroups": {"uid_weights": {}, "errors": []},
           "topology": {"cpus": 2, "sockets": 1, "cores": 2, "threads": 1, "sched_domains": ["MC"],
                        "numa": [{"node": 0, "cpus": "0-1", "memory_kb": 262144}], "errors": []},
           "workloads": 1, "errors": [], "agent_version": "1", "orphans_reaped": 0}
def wl(i, out, js=None, code=0, **kw):
    p = {"index": i, "exit_code": code, "signal": 0, "timed_out": False, "stdout": out, "stderr": "",
         "json_file": js, "error": None}
    p.update(kw); return p
def seed(name, job, frames):
    body = b"\0".join(k.encode() + json.dumps(p).encode() for k, p in frames)
    open(os.path.join(d, "seed-" + name), "wb").write(bytes([job]) + body)
hb = read("tests/data/rt-tests/hackbench-process-pipe-g4-f10-l50.stdout")
seed("hackbench", 0, [("h", {"agent": "schedlab-agent", "heartbeat_s": 1}), ("w", wl(0, hb)), ("s", summary)])
seed("crafted", 0, [("w", wl(0, hb)), ("s", {"errors": {"x": 1}})])
seed("failed", 0, [("w", wl(0, hb, code=1, stderr="boom")), ("s", dict(summary, errors=["feature 'X' is not known"]))])
rtm = read("tests/data/rt-tests/rtmigrate-p60-l5-t3.stdout"); rtj = read("tests/data/rt-tests/rtmigrate-p60-l5-t3.json")
ctj = read("tests/data/rt-tests/cyclictest-t1-h2000.json")
seed("rtm-ct", 1, [("w", wl(0, rtm, rtj)), ("w", wl(1, "", ctj)), ("s", summary)])
seed("slice", 2, [("w", wl(0, '{"tool":"slice","metrics":{"slice_us.mean":4044.5},"details":{"a":[1,2]}}')),
                  ("s", dict(summary, sched_ext={"scheduler": "simple", "state": "enabled", "ops": "simple", "enable_ms": 12}))])
seed("stress-ng", 3, [("w", wl(0, "", read("tests/data/workloads/stress-ng-switch-mutex-futex-yield.yaml"))), ("s", summary)])
PY
# fuzz_elfdeps: real ELF files of the host (a dynamic binary, a shared library)
for f in /usr/bin/true /lib/x86_64-linux-gnu/libdl.so.2 /lib/x86_64-linux-gnu/libpthread.so.0; do
	[ -f "$f" ] && seed fuzz_elfdeps "$(basename "$f")" <"$f"
done
# fuzz_kernel_config: byte 0 a fragment (strict), 1 a .config, 2 patch(1)'s output
for f in guest-kernel/*/*.config; do
	{ printf '\x00'; cat "$f"; } | seed fuzz_kernel_config "$(basename "$(dirname "$f")")-$(basename "$f")"
	{ printf '\x01'; cat "$f"; } | seed fuzz_kernel_config "dot-$(basename "$(dirname "$f")")-$(basename "$f")"
done
printf '\x02checking file kernel/sched/rt.c\nHunk #2 FAILED at 1234.\n1 out of 2 hunks FAILED\n' |
	seed fuzz_kernel_config patch-hunk
printf '\x02can'"'"'t find file to patch at input line 5\n|--- a/kernel/sched/nope.c\n|+++ b/kernel/sched/nope.c\nNo file to patch.  Skipping patch.\n' |
	seed fuzz_kernel_config patch-missing
printf '\x02checking file kernel/sched/core.c\nReversed (or previously applied) patch detected!  Assume -R? [n]\n' |
	seed fuzz_kernel_config patch-reversed
printf '\x02patch: **** malformed patch at line 7: @@ -1 +1 @@\n' | seed fuzz_kernel_config patch-malformed
# fuzz_sched_names: odd byte 0 features.h, even debug.c
for f in tests/data/sched-names/*features.h.txt; do { printf '\x01'; cat "$f"; } | seed fuzz_sched_names "$(basename "$f" .txt)"; done
for f in tests/data/sched-names/*debug.c.txt; do { printf '\x00'; head -c 60000 "$f"; } | seed fuzz_sched_names "$(basename "$f" .txt)"; done
# fuzz_multipart: form bodies with the boundary XyZ
python3 - "$out/corpus/fuzz_multipart" <<'PY'
import glob, os, sys
d = sys.argv[1]; os.makedirs(d, exist_ok=True)
job = open("examples/seed-reproduction.json", "rb").read()
patch = open(sorted(glob.glob("tests/data/seed-patches/*.patch"))[0], "rb").read()[:8000]
def part(name, data, filename=None, ctype=None):
    h = b'--XyZ\r\nContent-Disposition: form-data; name="%s"' % name.encode()
    if filename: h += b'; filename="%s"' % filename.encode()
    h += b"\r\n"
    if ctype: h += b"Content-Type: %s\r\n" % ctype.encode()
    return h + b"\r\n" + data + b"\r\n"
seeds = {
    "job": part("job", job) + b"--XyZ--\r\n",
    "job-patch": part("job", job) + part("patch", patch, "rt.patch", "text/x-diff") + b"--XyZ--\r\n",
    "mbox": part("job", job) + part("mbox:k", patch, "series.mbox") + b"--XyZ--\r\n",
    "no-job": part("patch", b"x", "a.patch") + b"--XyZ--\r\n",
    "urlenc-key": part("patch:k", patch, "../evil.patch") + b"--XyZ--",
}
for n, b in seeds.items():
    open(os.path.join(d, "seed-" + n), "wb").write(b)
PY

# One target: replay its reproducers, then fuzz it. Prints one "ok"/"FAIL"
# block; returns non-zero on a failure.
fuzz_one() { # binary
	local bin=$1 t log rc runs cov
	t=$(basename "$bin")
	log=$out/$t.log
	local regress=()
	[ -d "tests/fuzz/regress/$t" ] && regress=("tests/fuzz/regress/$t"/*)
	if [ ${#regress[@]} -gt 0 ] && ! "$bin" "${regress[@]}" >"$log.regress" 2>&1; then
		echo "FAIL $t: a committed reproducer fails again; see $log.regress"
		tail -n 40 "$log.regress" | sed 's/^/    /'
		return 1
	fi
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$out/artifacts/$t-" "$out/corpus/$t" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1)
	if [ $rc -eq 0 ]; then
		echo "ok   $t: ${runs:-?} inputs in ${secs}s, ${cov:-cov: ?}, corpus $(ls "$out/corpus/$t" | wc -l)"
		return 0
	fi
	echo "FAIL $t (exit $rc); input in $out/artifacts/; last lines of $log:"
	grep -vE '^#[0-9]+' "$log" | tail -n 40 | sed 's/^/    /'
	return 1
}

# The targets run side by side, one per CPU (FUZZ_JOBS to change it): each
# still gets its SECONDS of fuzzing, and the wall time drops by the CPU count.
jobs=${FUZZ_JOBS:-$(nproc)}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: FUZZ_JOBS must be a positive number" >&2; exit 2; }
status=$(mktemp -d)
trap 'rm -rf "$status"' EXIT
for bin in "$out"/fuzz_*; do
	[ -x "$bin" ] && [ -f "$bin" ] || continue
	t=$(basename "$bin")
	[ -n "$filter" ] && ! [[ "$t" =~ $filter ]] && continue
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
	(fuzz_one "$bin" >"$status/$t.out" 2>&1; echo $? >"$status/$t.rc") &
done
wait
passed=0 failed=0
for rcf in "$status"/*.rc; do
	[ -e "$rcf" ] || continue
	cat "${rcf%.rc}.out"
	if [ "$(cat "$rcf")" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
