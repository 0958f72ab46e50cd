# Shell helpers for podman on this kind of host, sourced by
# tests/e2e/80-container.sh and bench/container.sh. Nothing here goes into the
# image: these are settings of the container engine on the test host.

# container_podman_conf DIR: writes DIR/containers.conf and exports
# CONTAINERS_CONF, so that every podman call of the caller uses it:
#  - runc, because crun refuses a hybrid cgroup v1/v2 host layout;
#  - explicit nofile and nproc limits at or below what this process may set.
#    podman's defaults (nofile 1048576, nproc = host limit) fail with
#    "setrlimit ... Operation not permitted" when the host's hard limits are
#    lower; nproc is further capped at kernel.pid_max, the most the sandbox
#    kernel lets runc set (measured: 32768 works, 32769 fails).
container_podman_conf() {
	local dir=$1 nofile nproc pidmax
	nofile=$(awk '/^Max open files/ {print $5}' /proc/self/limits)
	nproc=$(awk '/^Max processes/ {print $4}' /proc/self/limits)
	pidmax=$(cat /proc/sys/kernel/pid_max)
	[ "$nofile" = unlimited ] && nofile=1048576
	[ "$nproc" = unlimited ] && nproc=$pidmax
	[ "$nproc" -gt "$pidmax" ] && nproc=$pidmax
	[ "$nofile" -gt 1048576 ] && nofile=1048576
	mkdir -p "$dir"
	cat >"$dir/containers.conf" <<-CONF
	[containers]
	default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
	[engine]
	runtime = "runc"
	CONF
	export CONTAINERS_CONF=$dir/containers.conf
	CONTAINER_ULIMITS=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")
}

# The privileges the schedlab container is run with: podman's defaults are
# enough (measured; the image's qemu.conf makes that possible, see
# docs/container.md). /dev/kvm is passed when the host has it, as on a real
# host; the service probes whether a guest really boots with it and falls
# back to TCG otherwise (here the host's kvm_pvm module cannot run them).
container_run_privileges() {
	CONTAINER_PRIVS=()
	[ -c /dev/kvm ] && CONTAINER_PRIVS+=(--device /dev/kvm)
	return 0
}

# container_image_build TAG CONTEXT [LOG]: podman build with layer caching,
# falling back to chroot isolation when the OCI runtime cannot run build steps.
container_image_build() {
	local tag=$1 ctx=$2 log=${3:-/dev/stderr}
	podman build --pull=never --layers --format docker "${CONTAINER_ULIMITS[@]}" \
		-t "$tag" "$ctx" >>"$log" 2>&1 && return 0
	echo "container: build with the OCI runtime failed; retrying with --isolation chroot" >>"$log"
	podman build --pull=never --layers --format docker --isolation chroot \
		-t "$tag" "$ctx" >>"$log" 2>&1
}

# container_wait_healthy URL SECONDS: 0 once GET URL answers 200.
container_wait_healthy() {
	local url=$1 secs=$2 i
	for ((i = 0; i < secs * 5; i++)); do
		curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# container_free_port: a free TCP port on 127.0.0.1.
container_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# podman, without the two log lines it prints for every container with a
# HEALTHCHECK on a host without systemd ("unable to get systemd connection to
# add/start healthchecks"); the test runs `podman healthcheck run` itself.
podman() {
	command podman "$@" 2> >(grep -v 'unable to get systemd connection to .* healthchecks' >&2)
}
