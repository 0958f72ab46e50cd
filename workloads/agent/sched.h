/* What the agent sets in the kernel before the workloads run: sched features
 * and tunables (debugfs) and per-uid CPU groups (cgroup v2). Paths are under
 * root: "" in the guest, a fake root directory in host mode. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <json-c/json.h>

#define SCHED_FEATURES_PATH "/sys/kernel/debug/sched/features"
#define SCHED_DEBUG_DIR	    "/sys/kernel/debug/sched"
#define SCHED_CGROUP_ROOT   "/sys/fs/cgroup"
#define SCHED_CGROUP_DIR    "/sys/fs/cgroup/schedlab"

/* The article's per-user cpu_share (default 1024) as a cgroup v2 cpu.weight
 * (default 100): clamp(round(share * 100 / 1024), 1, 10000). */
unsigned agent_sched_share_to_weight(long long share);

/* true when the features file text lists feature as a whole word; "HRTICK"
 * does not match "NO_HRTICK" and vice versa. */
bool agent_sched_features_has(const char *text, const char *feature);

/* Writes feature to the features file and reads it back. Returns 0, or a
 * negative errno with a whole sentence in msg: -EINVAL when the kernel does
 * not know the feature, -ENODATA when it did not read back. */
int agent_sched_apply_feature(const char *root, const char *feature, char *msg, size_t msglen);

/* Writes value to SCHED_DEBUG_DIR/<name> and checks it reads back. The name
 * must pass agent_plan_tunable_name_valid(). 0 or -errno with a sentence in msg. */
int agent_sched_apply_tunable(const char *root, const char *name, long long value, char *msg,
			      size_t msglen);

/* Enables the cpu controller down to SCHED_CGROUP_DIR. 0 or -errno with a
 * sentence in msg. */
int agent_sched_cgroup_prepare(const char *root, char *msg, size_t msglen);

/* Creates SCHED_CGROUP_DIR/user-<uid>.slice with cpu.weight = weight and
 * checks it reads back. 0 or -errno with a sentence in msg. */
int agent_sched_cgroup_add_uid(const char *root, uid_t uid, unsigned weight, char *msg,
			       size_t msglen);

/* malloc'd path of the cgroup.procs file of uid's group. */
char *agent_sched_cgroup_procs_path(const char *root, uid_t uid);
