#!/usr/bin/env bash
# tier: host
# The per-job report in a real browser: render the golden result
# (tests/data/report/result.json) with `schedlab report`, load it in headless
# Chromium (and a real result of the runner), and check that
#   - the screenshot is not blank and shows the charts' colours,
#   - the DOM holds exactly the expected number of <svg> charts (5: start
#     delay, inversions, cyclictest histogram, share, slice), the same as the file,
#   - under load, the loaded cyclictest's histograms beside the idle one's and
#     the load's throughput per variant,
#   - a hostile result (job named <script>alert(1)</script>, ...) yields no
#     script element and shows the names as text,
#   - the page names no external resource.
# Installs Debian's chromium through scripts/setup.sh when it is missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
e2e_need_schedlab
e2e_need python3

if ! command -v chromium >/dev/null 2>&1; then
	echo "installing chromium (large) through scripts/setup.sh" >&2
	"$E2E_ROOT/scripts/setup.sh" --packages-only --extra chromium >&2 ||
		e2e_skip "chromium is not installed and 'scripts/setup.sh --extra chromium' failed"
fi
command -v chromium >/dev/null 2>&1 || e2e_skip "chromium is not installed"

e2e_tmpdir
cd "$E2E_TMP"
expected_charts=5

"$SCHEDLAB" report "$E2E_ROOT/tests/data/report/result.json" -o report.html 2>report.err
# The golden result follows the schema: no warning.
grep -q warning report.err && e2e_fail "the golden result: $(cat report.err)"
"$SCHEDLAB" report "$E2E_ROOT/tests/data/report/hostile.json" -o hostile.html 2>hostile.err
grep -q "does not match result.schema.json" hostile.err ||
	e2e_fail "the hostile result was rendered without a schema warning"
printf '{"schema": ' >cut.json
set +e
"$SCHEDLAB" report cut.json -o cut.html 2>cut.err
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "is not valid JSON" cut.err || e2e_fail "a cut result: exit $rc, $(cat cut.err)"

# Self-contained: the only URL is the SVG namespace, nothing to fetch.
if grep -oE '(https?|ftp)://[^"<> ]+' report.html | grep -v '^http://www.w3.org/2000/svg$'; then
	e2e_fail "report.html names an external resource (above)"
fi
grep -qiE '<(script|link|img|iframe)[ >]|@import|url\(' report.html &&
	e2e_fail "report.html contains a script, link, image, frame or CSS url()"

file_svgs=$(grep -o '<svg ' report.html | wc -l)
[ "$file_svgs" -eq "$expected_charts" ] ||
	e2e_fail "report.html has $file_svgs <svg> charts, expected $expected_charts"

e2e_chromium --dump-dom "file://$PWD/report.html" >dom.html
dom_svgs=$(grep -o '<svg ' dom.html | wc -l)
echo "charts: file $file_svgs, DOM $dom_svgs, expected $expected_charts"
[ "$dom_svgs" -eq "$expected_charts" ] ||
	e2e_fail "Chromium's DOM has $dom_svgs <svg> elements, expected $expected_charts"
grep -q 'id="failed-runs"' dom.html || e2e_fail "the DOM lacks the failed-runs section"

e2e_chromium --screenshot="$PWD/report.png" --window-size=1280,4000 "file://$PWD/report.html" >/dev/null
[ -s report.png ] || e2e_fail "Chromium wrote no screenshot (see chromium.log)"

# Decode the PNG with the standard library only and measure it.
python3 - report.png <<'PY'
import struct, sys, zlib

def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit(f"unsupported PNG: depth {depth}, colour type {ctype}, interlace {interlace}")
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows

w, h, bpp, rows = decode(sys.argv[1])
total = nonwhite = blue = orange = 0
for line in rows[::2]:
    for x in range(0, w * bpp, bpp * 2):
        r, g, b = line[x], line[x + 1], line[x + 2]
        total += 1
        if r < 235 or g < 235 or b < 235:
            nonwhite += 1
        # The palette's blue (#0072B2) and orange (#E69F00), allowing for
        # anti-aliasing and opacity.
        if b > 120 and r < 90 and 80 < g < 150:
            blue += 1
        if r > 200 and 130 < g < 180 and b < 60:
            orange += 1
print(f"screenshot {w}x{h}: {100 * nonwhite / total:.1f}% non-white, "
      f"{blue} blue and {orange} orange samples")
if (w, h) != (1280, 4000):
    sys.exit(f"the screenshot is {w}x{h}, not 1280x4000")
if nonwhite < total * 0.05:
    sys.exit("the screenshot is (almost) blank")
if blue < 200 or orange < 200:
    sys.exit("the screenshot lacks the charts' blue or orange: did the SVG render?")
PY

# The hostile result: names are text, nothing runs.
e2e_chromium --dump-dom "file://$PWD/hostile.html" >hostile-dom.html
if grep -qi '<script' hostile-dom.html; then
	e2e_fail "the hostile report has a <script> element in the DOM"
fi
grep -q '<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>' hostile-dom.html ||
	e2e_fail "the hostile job name is not shown as text in the DOM"
grep -q '<title>schedlab: &lt;script&gt;' hostile-dom.html ||
	e2e_fail "the hostile job name is not text in the title"
# A real result of the runner (tests/data/report/real-rtmigrate.json): two charts.
"$SCHEDLAB" report "$E2E_ROOT/tests/data/report/real-rtmigrate.json" -o real.html
e2e_chromium --dump-dom "file://$PWD/real.html" >real-dom.html
real_svgs=$(grep -o '<svg ' real-dom.html | wc -l)
[ "$real_svgs" -eq 2 ] || e2e_fail "the real result's report has $real_svgs charts in the DOM, expected 2"

# Host interference (docs/statistics.md): the golden result with each run's
# vCPU wait, one run noisy, and a calibration: the strip plot is a sixth
# chart, its points per variant, and the calibration table names the file.
python3 - "$E2E_ROOT/tests/data/report/result.json" >interference.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
waits = iter([3.5, 41.2, 6.0, 4.1, 5.2, 7.9, 8.0, 9.0])
for v in r["variants"].values():
    for run in v.get("runs", []):
        w = next(waits)
        run["host_interference"] = {"vcpu_wait_pct": w}
        run["noisy"] = w > 25
r["repeats"] = {"noise_policy": "exclude", "noise_limit_pct": 25}
r["calibration"] = [{"workload": "rtm", "key": "ab" * 32, "made_at": "2026-12-04T19:00:00Z",
                     "boots": 6, "host": {"hostname": "e2e-host", "cpu_model": "cpu", "accel": "tcg"},
                     "kernel": "cd" * 32, "multiple": 1, "spreads": {"inversions": 2}}]
json.dump(r, sys.stdout)
PY
"$SCHEDLAB" report interference.json -o interference.html
e2e_chromium --dump-dom "file://$PWD/interference.html" >interference-dom.html
int_svgs=$(grep -o '<svg ' interference-dom.html | wc -l)
[ "$int_svgs" -eq $((expected_charts + 1)) ] ||
	e2e_fail "the report with host interference has $int_svgs charts in the DOM, expected $((expected_charts + 1))"
python3 - interference-dom.html <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
m = re.search(r'<figure id="interference-strip" data-runs="(\d+)" data-noisy="(\d+)">\s*<svg ', dom)
assert m, "no strip plot of the vCPU wait in the DOM"
runs, noisy = int(m.group(1)), int(m.group(2))
assert noisy == 1 and runs >= 6, (runs, noisy)
fig = dom[m.start():dom.index("</figure>", m.start())]
assert "noisy runs (left out)" in fig and "noise limit 25 %" in fig, "legend or limit missing"
assert fig.count("<circle") >= runs, f"{fig.count('<circle')} points for {runs} runs"
assert '<h3 id="calibration">A/A calibration used</h3>' in dom, "no calibration table"
assert "<code>abababababab</code>" in dom and "e2e-host" in dom, "calibration not named"
print(f"interference strip: {runs} runs, {noisy} noisy, calibration named")
PY

# Under load (docs/workloads.md "Loads"): the golden result with a load and
# a cyclictest run beside it. The loaded cyclictest's histograms are drawn
# beside the idle one's in one section, and the load's throughput and CPU
# use per variant: expected_charts + 2 + 2 charts.
python3 - "$E2E_ROOT/tests/data/report/result.json" >underload.json <<'PY'
import copy, json, sys
r = json.load(open(sys.argv[1]))
r["job"]["workloads"] += [
    {"name": "hackbench-load", "tool": "hackbench", "load": True, "args": ["-p"], "timeout_s": 30, "uid": 0},
    {"name": "cyclictest-loaded", "tool": "cyclictest", "args": ["-t", "-a", "-h20000"], "timeout_s": 60, "uid": 0}]
for vi, v in enumerate(r["variants"].values()):
    for k, run in enumerate(v.get("runs", [])):
        ct = next((w for w in run["workloads"] if w["name"] == "cyclictest"), None)
        if ct is None:
            continue
        loaded = copy.deepcopy(ct)
        loaded["name"] = "cyclictest-loaded"
        loaded["details"]["histogram"] = [[b * 8 + 40, n] for b, n in ct["details"]["histogram"]]
        run["workloads"].append(loaded)
        run["workloads"].append({"name": "hackbench-load", "tool": "hackbench", "status": "ok",
            "exit_code": 0, "metrics": {"loops_per_s": 90.0 - 20 * vi + k, "time_s": 1.1,
            "load.cpu_fraction": 0.42 + 0.01 * k, "load.iterations": 9, "load.restarts": 9,
            "load.failures": 0}, "details": {}})
json.dump(r, sys.stdout)
PY
"$SCHEDLAB" report underload.json -o underload.html 2>underload.err
e2e_chromium --dump-dom "file://$PWD/underload.html" >underload-dom.html
python3 - underload-dom.html "$expected_charts" <<'PY'
import re, sys
dom, base = open(sys.argv[1]).read(), int(sys.argv[2])
n = dom.count("<svg ")
assert n == base + 4, f"{n} charts in the DOM under load, expected {base + 4}"
sec = re.search(r'<section class="workload" data-tool="cyclictest">\s*<h2>cyclictest-loaded \(cyclictest\)'
                r': wakeup latency under load, beside idle</h2>(.*?)</section>', dom, re.S)
assert sec, "no section of cyclictest-loaded beside idle"
body = sec.group(1)
assert '<div class="pair">' in body and body.count("<svg ") == 2, "not two charts side by side"
assert "cyclictest-loaded: under load" in body and "cyclictest: idle (the same job)" in body, \
    "the charts do not say which is under load and which idle"
load = re.search(r'<h2>hackbench-load \(hackbench\): load throughput</h2>(.*?)</section>', dom, re.S)
assert load and load.group(1).count("<svg ") == 2, "no throughput and CPU charts of the load"
assert "load throughput per run" in load.group(1) and "load CPU use per run" in load.group(1)
print(f"under load: {n} charts; cyclictest-loaded beside cyclictest idle; the load's throughput")
PY
e2e_chromium --screenshot="$PWD/underload.png" --window-size=1280,6000 "file://$PWD/underload.html" >/dev/null
[ -s underload.png ] || e2e_fail "Chromium wrote no screenshot of the under-load report"

# A real result, when `make demo` has left one: it must render with charts.
demo="$E2E_ROOT/build/demo-result.json"
if [ -s "$demo" ]; then
	"$SCHEDLAB" report "$demo" -o demo.html
	e2e_chromium --dump-dom "file://$PWD/demo.html" >demo-dom.html
	demo_svgs=$(grep -o '<svg ' demo-dom.html | wc -l)
	echo "build/demo-result.json: $demo_svgs charts in the DOM"
	[ "$demo_svgs" -ge 1 ] || e2e_fail "the report of build/demo-result.json has no chart"
fi
echo "report rendered in Chromium: $dom_svgs charts, hostile names shown as text"
