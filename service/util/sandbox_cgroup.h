/* A cgroup v2 of its own for each sandboxed command (docs/kernel-builds.md,
 * "The sandbox"), with memory.max, pids.max and cpu.max, where the host
 * delegates a cgroup v2 directory the service may write: the one named by
 * SCHEDLAB_BUILD_CGROUP, else the service's own (from /proc/self/cgroup).
 * Where there is none, the reason, never a limit that was not written. */
#pragma once

#include <stddef.h>

#include "util/error.h"

struct sandbox_cgroup_limits {
	unsigned long long mem_bytes; /* memory.max; 0: "max" */
	unsigned long pids;	      /* pids.max; 0: "max" */
	unsigned long cpus;	      /* cpu.max: cpus × 100000 per 100000 µs; 0: "max" */
};

/* The delegated directory new cgroups go under: 0 and its path in ret_base;
 * or -1 and why not in ret_reason (e.g. "/sys/fs/cgroup is not a cgroup v2
 * hierarchy (tmpfs: a cgroup v1 or hybrid host)"). Enables the memory, pids
 * and cpu controllers in its cgroup.subtree_control when they are not. */
int sandbox_cgroup_base(char *ret_base, size_t base_len, char *ret_reason, size_t reason_len);

/* Makes base/name with lim written into it: 0 and the directory in
 * ret_dir; else ERR_INTERNAL naming the file, and nothing is left. base is
 * not checked (sandbox_cgroup_base() does), so a test may use any dir. */
int sandbox_cgroup_make(const char *base, const char *name, const struct sandbox_cgroup_limits *lim,
			char *ret_dir, size_t dir_len, struct sl_error *err);

/* Removes the cgroup dir once its processes are gone (they die with bwrap's
 * pid namespace, a moment after bwrap): retries for up to 2 s. Files a test
 * wrote in a plain directory are removed first. */
void sandbox_cgroup_remove(const char *dir);
