/* The sandboxed steps of a kernel build (kbuild-internal.h): the tree
 * handed to the sandbox's uid, what each step binds, and the step run in
 * util/sandbox.h's sandbox with what held it logged and kept for
 * meta.json. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kernel/kbuild.h"
#include "kernel/kbuild-internal.h"
#include "util/cmd.h"
#include "util/fs.h"
#include "util/sandbox.h"
#include "util/sandbox_filter.h"

static int own_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	if ((st->st_uid != SANDBOX_UID || st->st_gid != SANDBOX_UID) &&
	    lchown(path, SANDBOX_UID, SANDBOX_UID) < 0)
		return errno ? errno : EIO;
	return 0;
}

int kbuild_sandbox_own(const struct kbuild_sandbox *sb, const char *path, struct sl_error *err)
{
	if (!sb->on || !sb->as_root || !fs_exists(path))
		return 0;
	int r = nftw(path, own_one, 64, FTW_PHYS | FTW_MOUNT);
	if (r != 0)
		return error_set(err, ERR_INTERNAL, r > 0 ? r : errno,
				 "Cannot hand the kernel tree to the build sandbox's uid %d: %s.",
				 SANDBOX_UID, strerror(r > 0 ? r : errno));
	return 0;
}

const char *kbuild_obj_seen(const struct build_ctx *b)
{
	if (!b->sandbox.on)
		return b->tree.obj;
	return b->tree.obj_trusted_seen ? b->tree.obj_trusted_seen : b->tree.obj_trusted;
}

const char *kbuild_src_seen(const struct build_ctx *b)
{
	return b->sandbox.on && b->tree.src_seen ? b->tree.src_seen : b->tree.src;
}

/* The binds of a sandboxed step (enum kbuild_where). An untrusted build's
 * copy of the object directory is bound where the directory it copies
 * would be (kbuild_obj_seen()): that one is not in the sandbox at all. */
static size_t sandbox_binds(struct build_ctx *b, enum kbuild_where where, char *applied,
			    char *ccache, struct sandbox_bind *ret)
{
	size_t n = 0;
	if (where == KBUILD_SANDBOX_PATCH) {
		ret[n++] = (struct sandbox_bind){b->tree.src, true, kbuild_src_seen(b)};
		ret[n++] = (struct sandbox_bind){applied, false, NULL};
	} else {
		ret[n++] = (struct sandbox_bind){b->tree.src, false, kbuild_src_seen(b)};
		ret[n++] = (struct sandbox_bind){b->tree.obj, true, kbuild_obj_seen(b)};
		ret[n++] = (struct sandbox_bind){ccache, false, NULL};
	}
	return n;
}

int kbuild_run_sandboxed(struct build_ctx *b, enum kbuild_where where, char *const argv[],
			 const char *cwd, int timeout_s, const struct cmd_opts *opts, int *ret_exit,
			 char **ret_output, struct sl_error *err)
{
	_cleanup_free_ char *ccache_dir = fs_path_join(b->cache_dir, "ccache");
	struct cmd_opts co = *opts;
	_cleanup_free_ char *applied = fs_path_join(b->tree.dir, "applied");
	struct sandbox_bind binds[3];
	int jobs = b->o->jobs > 0 ? b->o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	struct sandbox_spec sp = {
	    .binds = binds,
	    .n_binds = sandbox_binds(b, where, applied, ccache_dir, binds),
	    .chdir = cwd,
	    .env = co.env_extra,
	    .as_root = b->sandbox.as_root,
	    .cpu_s = (unsigned long)timeout_s,
	    .as_bytes = KBUILD_SANDBOX_AS_BYTES,
	    .fsize_bytes = KBUILD_SANDBOX_FSIZE_BYTES,
	    .nproc = KBUILD_SANDBOX_NPROC,
	    .mem_bytes = KBUILD_SANDBOX_MEM_BYTES,
	    .cpus = jobs > 0 ? (unsigned long)jobs : 1,
	};
	/* the source is where the sandbox binds it */
	if (cwd && b->tree.src && strcmp(cwd, b->tree.src) == 0)
		sp.chdir = kbuild_src_seen(b);
	co.cwd = NULL;
	struct sandbox_report rep = {0};
	int r = sandbox_run(&sp, argv, &co, ret_exit, ret_output, &rep, err);
	if (r >= 0 && !b->sandbox.report.ran)
		kbuild_log(&b->log, "sandbox: uid %d in a user namespace, seccomp %s, cgroup %s",
			   b->sandbox.as_root ? SANDBOX_UID : (int)geteuid(),
			   rep.seccomp ? sandbox_filter_name() : "none", rep.cgroup);
	if (r >= 0)
		b->sandbox.report = rep;
	return r;
}
