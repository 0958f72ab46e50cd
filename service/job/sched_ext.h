/* sched_ext variants (docs/sched-ext.md): a variant may run one of the BPF
 * example schedulers of its kernel's tree (tools/sched_ext/) instead of the
 * kernel's own fair class. This file is the allow-list of those schedulers
 * and the bounded set of options each accepts: the loader is a program that
 * runs as root in the guest, so like a workload's arguments
 * (workload_args.h) only known options with bounded values pass, and none
 * that changes what is measured behind schedlab's back (-p, switch only
 * SCHED_EXT tasks: the workloads would stay on the fair class) or floods the
 * console (-v, -P). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* The schedulers a variant may name, NULL-terminated: those the 6.12 tree
 * builds and that load here (scx_simple, scx_central, scx_qmap, scx_flatcg). */
const char *const *sched_ext_schedulers(void);

/* Whether name is one of sched_ext_schedulers(). */
bool sched_ext_scheduler_known(const char *name);

/* Where a scheduler's loader lands in the guest:
 * SCHED_EXT_GUEST_DIR/<kernel name>/<scheduler>, built against that kernel. */
#define SCHED_EXT_GUEST_DIR "/usr/lib/schedlab/sched_ext"

/* Checks a variant's "sched_ext" object (borrowed; the schema has bounded
 * it): a known scheduler and its args, or a user's own "source" and its args
 * (sched_ext_source_check()). path is "$.variants.<name>.sched_ext";
 * an error names "<path>.scheduler" or "<path>.args[i]" and the reason.
 * vcpus bounds a CPU number (scx_central's -c). Returns 0 or -EINVAL with
 * err filled (ERR_INVALID). */
int sched_ext_check(json_object *scx, const char *path, int vcpus, struct sl_error *err);
