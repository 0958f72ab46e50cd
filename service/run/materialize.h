/* A job's kernel on disk: the typed kernel (job.h), whose patches and config
 * are built-in names or inline content, turned into a kernel_spec of
 * absolute paths for the kernel stage to build. */
#pragma once

#include "job/job.h"
#include "kernel/kernel_spec.h"
#include "util/error.h"

/* Turns k (borrowed) into a kernel_spec through the kernel stage's builder
 * (the same series parser as `schedlab kernel`): inline files are written
 * under <job_dir>/kernels/<name>/ as NNNN-<file name> (0000 is the config,
 * 0001 on the patches in order), built-in series and fragments come from
 * <data_dir>/guest-kernel/, and every path is absolute, so the build does
 * not depend on the current directory. A kernel with an inline patch or
 * config is marked untrusted (kernel_spec.h), with a trusted base: its
 * built-in series and built-in config (an inline config: the built-in one a
 * kernel without "config" gets). On success *ret is owned by the
 * caller (kernel_spec_free); errors name the patch's JSON path. */
int materialize_kernel(const struct job_kernel *k, const char *job_dir, const char *data_dir,
		       struct kernel_spec **ret, struct sl_error *err);
