#!/usr/bin/env bash
# The container, for real: makes the local debian:bookworm base image with
# debootstrap, builds the project's Dockerfile with podman, checks the image
# (schedlab --help, tini as PID 1, libvirtd and a QEMU domain inside, the
# HEALTHCHECK), runs the service in it with the host's kernel cache mounted,
# submits the short seed-reproduction job over HTTP, validates its result, then
# restarts the container on the same state volume and checks the job and its
# result are still there. Leaves no container or volume behind; images stay
# cached (a warm run takes well under a minute plus the job).
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
image=localhost/schedlab:e2e
cleanup() {
	podman rm -f -i -v -t 5 "$name" "$smoke" >/dev/null 2>&1 || true
	podman volume rm -f "$volume" >/dev/null 2>&1 || true
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
	virsh() { setpriv --reuid=schedlab --regid=schedlab --init-groups virsh -q -c qemu:///system "$@"; }
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

step "service as the unprivileged user on a fresh state volume"
port=$(container_free_port)
podman run -d --name "$smoke" "${CONTAINER_PRIVS[@]}" -p "127.0.0.1:$port:8080" \
	-e SCHEDLAB_TOKEN="$token" "$image" >/dev/null
container_wait_healthy "http://127.0.0.1:$port/v1/health" 60 ||
	{ podman logs "$smoke" | tail -30; fail "the service did not become healthy within 60 s"; }
[ "$(podman exec "$smoke" cat /proc/1/comm)" = tini ] || fail "PID 1 is not tini"
serve_uid=$(podman exec "$smoke" sh -c 'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = schedlab ] && stat -c %u $p && break; done')
[ "$serve_uid" = 990 ] || fail "schedlab serve runs as uid '$serve_uid', not 990 (schedlab)"
podman healthcheck run "$smoke" >/dev/null || fail "the image's HEALTHCHECK failed on a healthy service"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-H "Authorization: Bearer wrong-$token" --data '{}' "http://127.0.0.1:$port/v1/jobs")
[ "$code" = 401 ] || fail "a wrong token got HTTP $code, not 401"
podman rm -f -v -t 10 "$smoke" >/dev/null

# The host's kernel cache (fs_default_cache_dir()), so the kernel built by the
# kernel e2e test is reused; it is root-owned, hence SCHEDLAB_USER=root.
cache=${SCHEDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab}
mkdir -p "$cache"
podman volume create "$volume" >/dev/null
start_service() {
	container_wait_healthy "http://127.0.0.1:$port/v1/health" 120 ||
		{ podman logs "$name" | tail -40; fail "the service did not become healthy within 120 s"; }
}
step "service with the host's kernel cache '$cache'"
podman run -d --name "$name" "${CONTAINER_PRIVS[@]}" -p "127.0.0.1:$port:8080" \
	-e SCHEDLAB_TOKEN="$token" -e SCHEDLAB_USER=root \
	-v "$volume:/var/lib/schedlab" -v "$cache:/var/cache/schedlab" "$image" >/dev/null
start_service

job=examples/seed-reproduction-short.json
[ -f "$job" ] || fail "'$job' is missing"
step "submitting '$job'"
curl -fsS "${auth[@]}" -H 'Content-Type: application/json' --data-binary "@$job" \
	"http://127.0.0.1:$port/v1/jobs" >"$work/submit.json" ||
	fail "POST /v1/jobs failed: $(cat "$work/submit.json" 2>/dev/null)"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$work/submit.json")
[[ "$id" =~ ^[0-9a-f]{32}$ ]] || fail "job id '$id' is not 32 hex digits"

job_status() {
	curl -fsS "${auth[@]}" "http://127.0.0.1:$port/v1/jobs/$id" >"$work/job.json" || return 1
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$work/job.json"
}
deadline=$(($(date +%s) + ${SCHEDLAB_E2E_JOB_TIMEOUT:-1200}))
last=
while :; do
	st=$(job_status) || st=unreachable
	[ "$st" != "$last" ] && step "job $id: $st" && last=$st
	case "$st" in
	done) break ;;
	failed|cancelled) podman logs "$name" | tail -40; cat "$work/job.json"; fail "job ended '$st'" ;;
	esac
	[ "$(date +%s)" -lt "$deadline" ] || { podman logs "$name" | tail -40; fail "job not done in time (last status '$st')"; }
	sleep 3
done
curl -fsS "${auth[@]}" "http://127.0.0.1:$port/v1/jobs/$id/result" >"$work/result.json" ||
	fail "GET /v1/jobs/$id/result failed"
build/schedlab validate --result "$work/result.json" || fail "the result does not validate"
python3 - "$work/result.json" <<'PY' || fail "the result's runs are not as expected"
import json, sys
r = json.load(open(sys.argv[1]))
runs = [run for v in r["variants"].values() for run in v["runs"]]
assert runs, "no runs"
accel = {run["accelerator"] for run in runs}
print("runs:", len(runs), "statuses:", sorted({run["status"] for run in runs}), "accelerator:", accel, "verdict:", r["verdict"])
PY

step "restart on the same state volume"
s0=$(date +%s)
podman stop -t 20 "$name" >/dev/null
# tini passes SIGTERM on to the service, which stops at once; a stop that
# takes the whole grace period means the signal went nowhere and podman
# had to SIGKILL.
[ $(($(date +%s) - s0)) -lt 15 ] || fail "the container took $(($(date +%s) - s0)) s to stop on SIGTERM"
podman start "$name" >/dev/null
start_service
st=$(job_status) || fail "GET /v1/jobs/$id failed after the restart"
[ "$st" = done ] || fail "after the restart job $id is '$st', not 'done'"
curl -fsS "${auth[@]}" "http://127.0.0.1:$port/v1/jobs/$id/result" >"$work/result2.json" ||
	fail "GET /v1/jobs/$id/result failed after the restart"
cmp -s "$work/result.json" "$work/result2.json" || fail "the result changed across the restart"
step "ok"
