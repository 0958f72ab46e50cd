# schedlab: the service with libvirt and QEMU inside. Build and run notes, the
# privileges it needs and why: docs/container.md.
#   podman build --format docker -t schedlab .
#   podman run -d --privileged -p 127.0.0.1:8080:8080 -e SCHEDLAB_TOKEN=... \
#     -v schedlab-state:/var/lib/schedlab -v schedlab-cache:/var/cache/schedlab schedlab
FROM debian:bookworm

# Packages: the same script and list as a host install (scripts/packages.txt),
# in its own layer so that a source change does not reinstall them. tini is
# the container's PID 1. policy-rc.d stops the libvirt packages from starting
# daemons during the build.
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /opt/schedlab
COPY scripts/setup.sh scripts/packages.txt scripts/
RUN printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d \
 && scripts/setup.sh --packages-only --extra tini curl \
 && apt-get clean && rm -rf /var/lib/apt/lists/*

# The service user: in group libvirt for the libvirtd socket and kvm for
# /dev/kvm. Fixed ids so that volumes keep their owner across image rebuilds.
RUN groupadd --system --gid 990 schedlab \
 && useradd --system --uid 990 --gid schedlab --groups libvirt,kvm \
      --home-dir /var/lib/schedlab --no-create-home --shell /usr/sbin/nologin schedlab

COPY container/libvirt/qemu.conf container/libvirt/libvirtd.conf /etc/libvirt/

# The build: the data dir (guest-kernel/, results-schema/, build/agent,
# build/workloads/) is the source tree itself.
COPY . .
RUN make -j"$(nproc)" all && rm -rf build/obj build/tobj build/*.a \
 && ln -s /opt/schedlab/build/schedlab /usr/local/bin/schedlab

# Owned by the service user, so that new named volumes start out that way.
RUN mkdir -p /var/lib/schedlab /var/cache/schedlab \
 && chown schedlab:schedlab /var/lib/schedlab /var/cache/schedlab
ENV SCHEDLAB_DATA_DIR=/opt/schedlab \
    SCHEDLAB_CACHE=/var/cache/schedlab
VOLUME ["/var/lib/schedlab", "/var/cache/schedlab"]
EXPOSE 8080

# /v1/health needs no token. Needs --format docker with podman (OCI images
# have no HEALTHCHECK).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD curl -fsS -o /dev/null http://127.0.0.1:8080/v1/health || exit 1

# The entrypoint runs as root (it starts libvirtd, which must be root to run
# system guests) and drops to the user schedlab for the service itself.
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/schedlab/container/entrypoint.sh"]
