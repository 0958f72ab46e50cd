#!/usr/bin/env bash
# false-failure rate: 0 from the statistics (the jobs' verdicts are printed and
# validated against the schema, never asserted).
# The container, for real: makes the local debian:bookworm base image with
# debootstrap, builds the project's Dockerfile with podman, checks the image
# (schedlab --help, libvirtd and a QEMU domain inside), runs the service with
# the image's defaults (uid 990 under tini, HEALTHCHECK, token; a cache volume
# seeded with the host's built kernels) and then with the host's own kernel
# cache mounted, submits the short seed-reproduction job over HTTP to each,
# validates the results, then restarts the second container on the same state
# volume and checks the job and its result are still there. Leaves no
# container or volume behind; images stay cached (a warm run takes about 2
# minutes, most of it the two jobs).
# Environment: SCHEDLAB_E2E_JOB_TIMEOUT (seconds, default 1200).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# shellcheck source=../../container/lib.sh
. container/lib.sh

[ "$(id -u)" = 0 ] || { echo "needs root for podman with libvirt inside"; exit 77; }
t0=$(date +%s)
step() { echo "== $(($(date +%s) - t0))s: $*"; }
fail() { echo "FAIL: $*"; exit 1; }

step "installing podman and friends if missing"
scripts/setup.sh --packages-only --extra podman buildah debootstrap runc uidmap \
	fuse-overlayfs slirp4netns >/dev/null

work=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-e2e-container.XXXXXX")
name=schedlab-e2e-$$
smoke=schedlab-e2e-smoke-$$
volume=schedlab-e2e-state-$$
cvolume=schedlab-e2e-cache-$$
image=localhost/schedlab:e2e
cleanup() {
	podman rm -f -i -v -t 5 "$name" "$smoke" >/dev/null 2>&1 || true
	podman volume rm -f "$volume" >/dev/null 2>&1 || true
	podman volume rm -f "$cvolume" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
container_podman_conf "$work"
container_run_privileges

step "base image"
container/base-image.sh >"$work/base.log" 2>&1 || { tail -20 "$work/base.log"; fail "base image"; }

step "podman build"
b0=$(date +%s)
container_image_build "$image" . "$work/build.log" || { tail -40 "$work/build.log"; fail "podman build"; }
step "built in $(($(date +%s) - b0))s, $(podman image inspect -f '{{.Size}}' "$image") bytes"
# Superseded builds' untagged images; the layers of the current one stay cached.
podman image prune -f >/dev/null 2>&1 || true
[ "$(podman image inspect -f '{{.Config.Healthcheck.Test}}' "$image")" != "[]" ] ||
	fail "the image has no HEALTHCHECK (was it built with --format docker?)"

step "schedlab --help inside"
out=$(podman run --rm --entrypoint schedlab "$image" --help)
grep -q '^Usage: schedlab COMMAND' <<<"$out" || fail "schedlab --help printed: $out"
podman run --rm --entrypoint sh "$image" -c \
	'test -d "$SCHEDLAB_DATA_DIR/guest-kernel" && test -d "$SCHEDLAB_DATA_DIR/results-schema" && test -x "$SCHEDLAB_DATA_DIR/build/agent"' ||
	fail "the data dir \$SCHEDLAB_DATA_DIR lacks guest-kernel/, results-schema/ or build/agent"

step "libvirtd and a QEMU domain inside, run with: ${CONTAINER_PRIVS[*]:-podman defaults}"
# A diskless TCG domain: SeaBIOS runs, which is enough to prove that the
# service user can have libvirt create, start and destroy a QEMU guest (run as
# that user too) under these privileges.
cat >"$work/domain.xml" <<'XML'
<domain type='qemu'>
  <name>schedlab-e2e-probe</name>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <features><acpi/></features>
  <devices><serial type='pty'/><console type='pty'/></devices>
</domain>
XML
podman run --rm "${CONTAINER_PRIVS[@]}" -v "$work/domain.xml:/tmp/domain.xml:ro" \
	"$image" bash -c '
	set -e
	# As the service user: libvirtd socket access through group libvirt.
	# Bounded: a wedged daemon must fail the test, not hang it (docs/guests.md).
	virsh() { timeout -k 5 30 setpriv --reuid=schedlab --regid=schedlab --init-groups virsh -q -c qemu:///system "$@"; }
	virsh version
	s=$(date +%s.%N)
	virsh create /tmp/domain.xml
	e=$(date +%s.%N)
	virsh domstate schedlab-e2e-probe | grep -qx running
	# No procps in the image: find QEMU (comm is cut at 15 characters) in /proc.
	owner=$(for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = qemu-system-x86 ] && stat -c %U $p; done; true)
	[ "$owner" = schedlab ] || { echo "QEMU runs as \"$owner\", not schedlab"; exit 1; }
	virsh destroy schedlab-e2e-probe
	echo "domain start: $(echo "$e - $s" | bc) s (QEMU as user schedlab)"' >"$work/libvirt.log" 2>&1 ||
	{ cat "$work/libvirt.log"; fail "libvirt could not run a QEMU domain in the container"; }
cat "$work/libvirt.log"

serve_ok=1
podman run --rm --entrypoint schedlab "$image" serve --help >/dev/null 2>&1 || serve_ok=0
if [ "$serve_ok" = 0 ]; then
	echo "skip: 'schedlab serve' is not in this build yet; checked the image, --help and libvirt only"
	exit 77
fi

token=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
auth=(-H "Authorization: Bearer $token")
[ -f examples/seed-reproduction-short.json ] || fail "'examples/seed-reproduction-short.json' is missing"
# One round (2 boots) instead of the example's two: what this test checks of
# a job (accepted, done, valid, every run ok, the same after a restart) does
# not need a second, and each round is about 35 s inside the container.
job=$work/seed-reproduction-short-1.json
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["repeat"]=1; json.dump(j, open(sys.argv[2], "w"))' \
	examples/seed-reproduction-short.json "$job"
# The host's kernel cache (fs_default_cache_dir()): the kernel built by the
# kernel e2e test is reused (same Debian gcc, so the same cache key).
cache=${SCHEDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab}
mkdir -p "$cache"

# wait_healthy CONTAINER PORT
wait_healthy() {
	container_wait_healthy "http://127.0.0.1:$2/v1/health" 120 ||
		{ podman logs "$1" 2>&1 | tail -40; fail "the service in '$1' did not become healthy within 120 s"; }
}
# job_status PORT ID: prints the job's status
job_status() {
	curl -fsS "${auth[@]}" "http://127.0.0.1:$1/v1/jobs/$2" >"$work/job.json" || return 1
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$work/job.json"
}
# run_job CONTAINER PORT RESULT: submits $job, waits for done, fetches and
# checks the result; sets $id.
run_job() {
	local ctr=$1 p=$2 out=$3 st last= deadline
	step "$ctr: submitting '$job'"
	curl -sS "${auth[@]}" -H 'Content-Type: application/json' --data-binary "@$job" \
		-o "$work/submit.json" -w '%{http_code}' "http://127.0.0.1:$p/v1/jobs" >"$work/code" || true
	[ "$(cat "$work/code")" = 202 ] ||
		fail "POST /v1/jobs answered HTTP $(cat "$work/code"): $(cat "$work/submit.json" 2>/dev/null)"
	id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$work/submit.json")
	[[ "$id" =~ ^[0-9a-f]{32}$ ]] || fail "job id '$id' is not 32 hex digits"
	deadline=$(($(date +%s) + ${SCHEDLAB_E2E_JOB_TIMEOUT:-1200}))
	while :; do
		st=$(job_status "$p" "$id") || st=unreachable
		[ "$st" != "$last" ] && step "$ctr: job $id: $st" && last=$st
		case "$st" in
		done) break ;;
		failed|cancelled) podman logs "$ctr" 2>&1 | tail -40; cat "$work/job.json"; fail "job ended '$st'" ;;
		esac
		[ "$(date +%s)" -lt "$deadline" ] ||
			{ podman logs "$ctr" 2>&1 | tail -40; fail "job not done in time (last status '$st')"; }
		sleep 3
	done
	curl -fsS "${auth[@]}" "http://127.0.0.1:$p/v1/jobs/$id/result" >"$out" ||
		fail "GET /v1/jobs/$id/result failed"
	build/schedlab validate --result "$out" || fail "the result of job $id does not validate"
	python3 - "$out" <<'PY' || fail "the runs of job $id are not all 'ok'"
import json, sys
r = json.load(open(sys.argv[1]))
runs = [run for v in r["variants"].values() for run in v["runs"]]
print("runs:", len(runs), "statuses:", sorted({run["status"] for run in runs}),
      "accelerator:", sorted({run["accelerator"] for run in runs}), "verdict:", r["verdict"])
assert runs and all(run["status"] == "ok" for run in runs)
PY
}

# 1. The image's defaults: the service as uid 990, anonymous state volume, and
# a cache volume seeded with the host's finished kernels (owned by 990).
step "service as the unprivileged user"
podman volume create "$cvolume" >/dev/null
cdir=$(podman volume inspect -f '{{.Mountpoint}}' "$cvolume")
seeded=0
for k in "$cache"/kernels/*/; do
	[ -f "$k/meta.json" ] || continue
	mkdir -p "$cdir/kernels" && cp -a "$k" "$cdir/kernels/" && seeded=$((seeded + 1))
done
[ -f "$cache/accel.json" ] && cp "$cache/accel.json" "$cdir/"
chown -R 990:990 "$cdir"
port=$(container_free_port)
podman run -d --name "$smoke" "${CONTAINER_PRIVS[@]}" -p "127.0.0.1:$port:8080" \
	-e SCHEDLAB_TOKEN="$token" -v "$cvolume:/var/cache/schedlab" "$image" >/dev/null
wait_healthy "$smoke" "$port"
[ "$(podman exec "$smoke" cat /proc/1/comm)" = tini ] || fail "PID 1 is not tini"
serve_uid=$(podman exec "$smoke" sh -c 'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = schedlab ] && stat -c %u $p && break; done')
[ "$serve_uid" = 990 ] || fail "schedlab serve runs as uid '$serve_uid', not 990 (schedlab)"
podman healthcheck run "$smoke" >/dev/null || fail "the image's HEALTHCHECK failed on a healthy service"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-H "Authorization: Bearer wrong-$token" --data '{}' "http://127.0.0.1:$port/v1/jobs")
[ "$code" = 401 ] || fail "a wrong token got HTTP $code, not 401"
if [ "$seeded" -gt 0 ]; then
	run_job "$smoke" "$port" "$work/result-user.json"
else
	step "no finished kernel in '$cache' to seed: no job as the unprivileged user (it would build one for 5+ minutes)"
fi
podman rm -f -v -t 10 "$smoke" >/dev/null
podman volume rm -f "$cvolume" >/dev/null

# 2. The host's own kernel cache mounted: it is root-owned, hence SCHEDLAB_USER=root.
step "service with the host's kernel cache '$cache'"
podman volume create "$volume" >/dev/null
port=$(container_free_port)
podman run -d --name "$name" "${CONTAINER_PRIVS[@]}" -p "127.0.0.1:$port:8080" \
	-e SCHEDLAB_TOKEN="$token" -e SCHEDLAB_USER=root \
	-v "$volume:/var/lib/schedlab" -v "$cache:/var/cache/schedlab" "$image" >/dev/null
wait_healthy "$name" "$port"
run_job "$name" "$port" "$work/result.json"

step "restart on the same state volume"
s0=$(date +%s)
podman stop -t 20 "$name" >/dev/null
# tini passes SIGTERM on to the service, which stops at once; a stop that
# takes the whole grace period means the signal went nowhere and podman
# had to SIGKILL.
[ $(($(date +%s) - s0)) -lt 15 ] || fail "the container took $(($(date +%s) - s0)) s to stop on SIGTERM"
podman start "$name" >/dev/null
wait_healthy "$name" "$port"
st=$(job_status "$port" "$id") || fail "GET /v1/jobs/$id failed after the restart"
[ "$st" = done ] || fail "after the restart job $id is '$st', not 'done'"
curl -fsS "${auth[@]}" "http://127.0.0.1:$port/v1/jobs/$id/result" >"$work/result2.json" ||
	fail "GET /v1/jobs/$id/result failed after the restart"
cmp -s "$work/result.json" "$work/result2.json" || fail "the result changed across the restart"
step "ok"
