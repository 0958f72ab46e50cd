/* Which kernel sources a service job may name besides Debian's packages
 * (a moving source, for nightly schedules): `git:/tree@REF` when the tree lies under a
 * directory of the config's "git_sources" (job_limits.git_sources). The
 * Debian half of the check stays at its spot in job.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define JOB_SOURCE_REF_MAX 200

/* 1 when ref is a git ref a service job may name: 1-JOB_SOURCE_REF_MAX of
 * [A-Za-z0-9._/^~-], not starting with '-' (never an option) and without
 * "..". Also what a schedule's "source_ref" must be (config_nightly.c). */
bool job_source_ref_valid(const char *ref);

/* Checks a service job's non-Debian kernel source (source, borrowed).
 * Accepted: "git:PATH@REF" with an absolute PATH whose realpath is
 * one of git_sources[0..n_git_sources) (the config's
 * "git_sources", job_limits) or below one (symlinks and ".." resolved first, so
 * neither escapes), and a REF that job_source_ref_valid() accepts.
 * On success *ret_source is the malloc'd source with PATH replaced by its
 * realpath (what is built is what was checked). Anything else is
 * ERR_INVALID at `path` (the kernel's "source" field), naming the field and
 * the reason but no configured directory. */
int job_source_policy_check(const char *source, char *const *git_sources, size_t n_git_sources,
			    const char *path, char **ret_source, struct sl_error *err);
