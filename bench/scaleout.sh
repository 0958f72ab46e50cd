#!/usr/bin/env bash
# Scale-out overhead on this machine: the same spread job (the short seed
# reproduction, ROUNDS rounds of both variants) on one host (the local
# libvirtd) and on two (local + a second libvirtd in a network namespace over
# qemu+tcp, tests/lib/remote-libvirtd.sh). Both hosts share this machine's
# cores and the runner runs a job's guests one at a time, so the figure shows
# the overhead of the remote protocol and the uploads, not a speed-up. Also
# reports, from the runs' "volumes" records, the upload time of the kernel and
# of each run's initramfs, and the time saved when the kernel is already on
# the host. Needs root. Usage: bench/scaleout.sh [ROUNDS]   (default 3)
case "${1:-}" in -h | --help) sed -n '2,10p' "$0"; exit 0 ;; esac
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCHEDLAB=${SCHEDLAB:-$ROOT/build/schedlab}
ROUNDS=${1:-3}
. "$ROOT/tests/lib/remote-libvirtd.sh"
[ "$(id -u)" = 0 ] || { echo "bench/scaleout.sh: needs root" >&2; exit 2; }
[ -x "$SCHEDLAB" ] || { echo "bench/scaleout.sh: build schedlab first (make)" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-bench-scaleout.XXXXXX")
trap 'remote_libvirtd_stop; rm -rf "$T"' EXIT

t0=$(date +%s.%N)
remote_libvirtd_start "$T/remote"
t1=$(date +%s.%N)
# The start waits for a first connect, which probes QEMU's capabilities
# into the fresh daemon's empty cache; this is a later connect.
virsh_bounded "$REMOTE_URI" version >/dev/null
t2=$(date +%s.%N)

python3 - "$ROOT/examples/seed-reproduction-short.json" "$T/job.json" "$ROUNDS" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["name"] = "bench-scaleout"
j["repeat"] = int(sys.argv[3])
j["placement"] = "spread"
j["accelerator"] = "tcg"
for w in j["workloads"]:
    w["args"] = ["-p", "60", "-l", "10", "3"]
json.dump(j, open(sys.argv[2], "w"))
PY
echo "[{\"uri\": \"qemu:///system\", \"slots\": 1}]" >"$T/one.json"
echo "[{\"uri\": \"qemu:///system\", \"slots\": 1}, {\"uri\": \"$REMOTE_URI\", \"slots\": 1}]" >"$T/two.json"

run() { # NAME HYPERVISORS
	local s e
	s=$(date +%s.%N)
	"$SCHEDLAB" run "$T/job.json" -q -o "$T/$1.json" --job-dir "$T/$1" --hypervisors "$2" \
		>/dev/null || true
	e=$(date +%s.%N)
	echo "$s $e" >"$T/$1.time"
}
run one "$T/one.json"
run two "$T/two.json"

python3 - "$T" "$REMOTE_URI" "$t0" "$t1" "$t2" <<'PY'
import json, sys
T, remote = sys.argv[1], sys.argv[2]
t0, t1, t2 = map(float, sys.argv[3:6])
print(f"remote libvirtd started and first connect (QEMU probe) in {t1 - t0:.1f} s; "
      f"a later connect {t2 - t1:.2f} s")
for name in ("one", "two"):
    r = json.load(open(f"{T}/{name}.json"))
    s, e = map(float, open(f"{T}/{name}.time").read().split())
    runs = [x for v in r["variants"].values() for x in v["runs"]]
    ok = sum(1 for x in runs if x["status"] == "ok")
    hosts = {}
    for x in runs:
        hosts[x["host"]] = hosts.get(x["host"], 0) + 1
    guest = sum(x["duration_seconds"] for x in runs)
    print(f"{name} host(s): {len(runs)} runs ({ok} ok) in {e - s:.1f} s wall = "
          f"{60 * len(runs) / (e - s):.2f} runs/min; guest time {guest:.1f} s; per host {hosts}")
r = json.load(open(f"{T}/two.json"))
up, skip, ini = [], [], []
for v in r["variants"].values():
    for x in v["runs"]:
        vol = x.get("volumes")
        if not vol:
            continue
        (up if vol["kernel"]["uploaded"] else skip).append(vol["kernel"])
        ini.append(vol["initrd"])
for label, lst in (("kernel uploaded", up), ("kernel skipped (already there)", skip),
                   ("run initramfs uploaded", ini)):
    if lst:
        avg = sum(x["seconds"] for x in lst) / len(lst)
        print(f"{label}: {len(lst)}x, {lst[0]['bytes'] / 1e6:.2f} MB, avg {avg * 1000:.0f} ms "
              "(hash + pool check + upload)")
if up and skip:
    saved = up[0]["seconds"] - sum(x["seconds"] for x in skip) / len(skip)
    print(f"time saved per run by the skip: {saved * 1000:.0f} ms")
PY
