#!/usr/bin/env bash
# Container figures: image size, build time cold (no layer cache) and warm
# (all layers cached), rebuild after a source change, and the time from
# `podman run` to a healthy service (3 starts). Needs root and podman (the
# e2e test tests/e2e/80-container.sh installs them).
# Usage: bench/container.sh [--with-base]   (--with-base: also time the
#        debootstrap of the base image from scratch)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. container/lib.sh
with_base=0
case "${1:-}" in --with-base) with_base=1 ;; "") ;; -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
*) echo "container.sh: unknown option '$1'" >&2; exit 2 ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-bench-container.XXXXXX")
name=schedlab-bench-$$
image=localhost/schedlab:bench
cleanup() { podman rm -f -i -v -t 5 "$name" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
container_podman_conf "$work"
container_run_privileges
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc | sed 's/^\./0./'; }

if [ "$with_base" = 1 ]; then
	t=$(now); container/base-image.sh --force >"$work/base.log" 2>&1; echo "base_image_debootstrap_s: $(secs "$t" "$(now)")"
else
	container/base-image.sh >"$work/base.log" 2>&1
fi

build() { # build LOG [EXTRA...]
	local log=$1; shift
	podman build --pull=never --layers --format docker "${CONTAINER_ULIMITS[@]}" "$@" >"$log" 2>&1 ||
		{ tail -20 "$log" >&2; echo "container.sh: podman build failed" >&2; exit 1; }
}
# A snapshot of the working tree as the build context, so that edits made
# meanwhile do not turn the cached build into a partial rebuild.
mkdir "$work/ctx"
git ls-files -z --cached --others --exclude-standard | grep -zv '^build/' |
	xargs -0 cp --parents -t "$work/ctx" 2>/dev/null || true
t=$(now); build "$work/cold.log" --no-cache -t "$image" "$work/ctx"; echo "build_cold_s: $(secs "$t" "$(now)")"
# Layers made by a --no-cache build are not reused by the next build (measured:
# it redoes COPY and make), so prime the cache once before timing it.
build "$work/prime.log" -t "$image" "$work/ctx"
t=$(now); build "$work/warm.log" -t "$image" "$work/ctx"; echo "build_cached_s: $(secs "$t" "$(now)")"
# A source change: one more line in a C file, so only the COPY and make
# layers run again.
echo "/* bench $(date +%s) */" >>"$work/ctx/service/main.c"
t=$(now); build "$work/src.log" -t "$image-src" "$work/ctx"; echo "build_after_source_change_s: $(secs "$t" "$(now)")"
podman rmi "$image-src" >/dev/null 2>&1 || true
echo "image_size_bytes: $(podman image inspect -f '{{.Size}}' "$image")"

token=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
for i in 1 2 3; do
	port=$(container_free_port)
	t=$(now)
	podman run -d --name "$name" "${CONTAINER_PRIVS[@]}" -p "127.0.0.1:$port:8080" \
		-e SCHEDLAB_TOKEN="$token" "$image" >/dev/null
	if container_wait_healthy "http://127.0.0.1:$port/v1/health" 60; then
		echo "start_to_healthy_s[$i]: $(secs "$t" "$(now)")"
	else
		podman logs "$name" 2>&1 | tail -10 >&2
		echo "start_to_healthy_s[$i]: not healthy within 60 s"
	fi
	podman rm -f -v -t 5 "$name" >/dev/null
done
