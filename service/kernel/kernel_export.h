/* The tree a user's patches must apply to, as a git repository they can
 * work in: the kernel spec's source extracted (one commit naming the source
 * and, for Debian's package, its version), then one commit per patch of the
 * spec (`git am`, so the built-in series keeps its authors and messages; a
 * patch git cannot apply but patch(1) can is applied with `patch -p1` as the
 * kernel build does and committed under its subject), and a tag
 * "schedlab-base" on the last commit, every object packed (so the user's
 * first commit starts no background gc). `schedlab kernel tree` writes it;
 * docs/testing-your-patch.md is the user's side. */
#pragma once

#include "kernel/kernel_spec.h"
#include "util/error.h"

/* The tag on the commit patches apply to. */
#define KERNEL_EXPORT_TAG "schedlab-base"

struct kernel_export_opts {
	/* One line per step ("extracting ...", "patch 2/4 ..."); may be NULL. */
	void (*progress)(void *userdata, const char *line);
	void *userdata;
};

/* Writes s's source plus s's patches as a git repository in dir (absolute;
 * created when missing; an existing dir must be empty: ERR_CONFLICT). The
 * config fragment is not part of the tree. Every step is a cmd_run()
 * command (tar, git, dpkg-query, patch). A patch that applies neither with
 * git am nor with patch -p1 is ERR_BUILD naming it; the partial tree stays
 * for inspection. */
int kernel_export_git(const struct kernel_spec *s, const char *dir,
		      const struct kernel_export_opts *o, struct sl_error *err);
