/* The sched feature and tunable names a kernel offers, read from its
 * (patched) tree when it is built and kept in the cached kernel's meta.json
 * ("sched_features", "sched_tunables"), and the check of a variant's
 * "features" and "sched_tunables" against them: Linux 6.1 (CFS) and 6.12
 * (EEVDF) name them differently, so a fixed list cannot serve both
 * (docs/kernel-builds.md, "Two bases"). */
#pragma once

#include <json-c/json.h>

#include "job/job.h"
#include "util/error.h"

/* At most this many names of each kind are kept (6.12 has 34 features). */
#define SCHED_NAMES_MAX 256

/* Appends to arr the name of every SCHED_FEAT(NAME, default) line of
 * kernel/sched/features.h's text (also those under an #ifdef: the list is a
 * superset, the guest refuses a feature its config left out). Returns how
 * many it appended. */
int sched_names_parse_features(const char *features_h, json_object *arr);

/* Appends to arr the name of every writable numeric debugfs file that
 * kernel/sched/debug.c's text creates directly under /sys/kernel/debug/sched
 * (debugfs_create_u32("base_slice_ns", 0644, debugfs_sched, ...) and the
 * other debugfs_create_<number type> calls): the files a variant's
 * sched_tunables may write. Returns how many it appended. */
int sched_names_parse_tunables(const char *debug_c, json_object *arr);

/* Reads kernel/sched/features.h and kernel/sched/debug.c under src_dir and
 * adds "sched_features" and "sched_tunables" arrays to meta; a file that is
 * missing or names nothing adds no array (the check is then skipped for
 * that kind). Fails only on a read error other than a missing file. */
int sched_names_from_tree(const char *src_dir, json_object *meta, struct sl_error *err);

/* Checks v's features (with or without NO_) and sched_tunables against the
 * lists in meta (a cached kernel's meta.json); a list meta lacks (a kernel
 * cached before schedlab kept them) is not checked. An unknown name is
 * ERR_INVALID naming the field ($.variants.<v>.features[i] or
 * $.variants.<v>.sched_tunables.<name>), the name, the kernel (its name,
 * source and version) and the names it does offer. */
int sched_names_check(json_object *meta, const struct job_variant *v, const char *kernel_name,
		      struct sl_error *err);
