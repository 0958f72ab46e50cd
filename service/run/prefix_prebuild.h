/* Building the kernels of many prefixes at once: before
 * a per-patch attribution measures its prefixes one after another, their
 * kernels are built up to in->build_slots at once, each in its own work
 * area of the source tree (kernel/kbuild_area.c), so the steps then find
 * them in the cache. Builds run before any guest: compiling beside a guest
 * that measures scheduling would make its runs noisy. A bisection does not
 * build ahead: which prefix it measures next depends on the verdict of the
 * one before (docs/kernel-builds.md "Builds at once"). */
#pragma once

#include <stddef.h>

#include "run/prefix_step.h"
#include "util/json.h"

/* Builds the kernels of the first n prefixes of patches (prefix k: its
 * first k; its job in in->job_dir/DIR-k, where its step runs later), at
 * most in->build_slots at once through in->step_build, saying "[TAG] ..."
 * as each starts and ends. built[k - 1]: 1 built, 0 a cache hit, -1 did
 * not build or could not be built (its step builds it again and says
 * why). Nothing (every built[] 0) when in->build_slots <= 1 or there is
 * no step_build. Returns the number of prefixes built. */
int prefix_prebuild(const struct series_input *in, json_object *patches, size_t n, const char *tag,
		    const char *dir, int *built);
