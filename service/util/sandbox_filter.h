/* The sandbox's seccomp filter (docs/kernel-builds.md, "The sandbox"): an
 * allow-list of the calls a build was measured to make; any other call fails
 * with ENOSYS, and those that reach kernel surface an unprivileged process
 * still has (namespaces, mounts, ptrace, modules, BPF, perf, keyrings,
 * userfaultfd, io_uring, the clock, sockets other than AF_UNIX, clone() with
 * a namespace flag) with EPERM. clone3 gets ENOSYS, so that glibc falls back
 * to a clone() whose flags the filter sees. */
#pragma once

#include "util/error.h"

/* A new close-on-exec memfd holding the filter as a cBPF program, at offset
 * 0, for bwrap's --seccomp; the caller closes it. ERR_INTERNAL when
 * libseccomp cannot build or export it. */
int sandbox_filter_fd(struct sl_error *err);
/* What the filter is, for logs and results: "allow-list", or "allow-list,
 * others logged" when SCHEDLAB_SECCOMP_LOG=1 makes unlisted calls allowed
 * and logged by the kernel's audit log instead of refused. */
const char *sandbox_filter_name(void);
