/* The sandbox's seccomp filter (docs/kernel-builds.md, "The sandbox"): a
 * deny-list of the calls a build has no use for and that reach kernel
 * surface an unprivileged process still has (namespaces, mounts, ptrace,
 * modules, BPF, perf, keyrings, userfaultfd, io_uring, the clock, sockets
 * other than AF_UNIX); each fails with EPERM (clone3 with ENOSYS, so that
 * glibc falls back to a clone() whose flags the filter sees). */
#pragma once

#include "util/error.h"

/* A new close-on-exec memfd holding the filter as a cBPF program, at offset
 * 0, for bwrap's --seccomp; the caller closes it. ERR_INTERNAL when
 * libseccomp cannot build or export it. */
int sandbox_filter_fd(struct sl_error *err);
