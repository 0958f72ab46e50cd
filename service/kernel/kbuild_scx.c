/* The sched_ext example schedulers of a kernel tree, built with the kernel;
 * see kbuild-internal.h and docs/sched-ext.md. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/sched_ext.h"
#include "kernel/kbuild-internal.h"
#include "kernel/kbuild.h"
#include "util/fs.h"

int kbuild_scx_build(struct build_ctx *b, const char *out_dir, struct sl_error *err)
{
	/* the build's .config: from a directory the sandbox wrote */
	_cleanup_free_ char *cfg = NULL;
	struct fs_untrusted u =
	    kbuild_untrusted(&b->sandbox, "kernel .config", KBUILD_MAX_DOTCONFIG_BYTES);
	int r = fs_read_untrusted(b->tree.obj, ".config", &u, &cfg, NULL, err);
	if (r < 0)
		return r;
	if (!kbuild_config_text_has(cfg, "CONFIG_SCHED_CLASS_EXT=y"))
		return 0;
	_cleanup_free_ char *tools = fs_path_join(kbuild_src_seen(b), "tools/sched_ext");
	_cleanup_free_ char *build = fs_path_join(b->tree.obj, "sched_ext");
	_cleanup_free_ char *oarg = NULL, *varg = NULL, *jarg = NULL;
	int jobs = b->o->jobs > 0 ? b->o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	/* paths as make sees them (kbuild_obj_seen) */
	if (asprintf(&oarg, "O=%s/sched_ext", kbuild_obj_seen(b)) < 0 ||
	    asprintf(&varg, "VMLINUX_BTF=%s/vmlinux", kbuild_obj_seen(b)) < 0 ||
	    asprintf(&jarg, "-j%d", jobs < 1 ? 1 : jobs) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	r = fs_mkdir_p(build, err);
	if (r < 0 || (r = kbuild_sandbox_own(&b->sandbox, build, err)) < 0)
		return r;
	kbuild_log(&b->log, "building the sched_ext schedulers (tools/sched_ext) with %s",
		   KBUILD_SCX_CLANG);
	char *const argv[] = {"make", "-C", tools, oarg, varg, jarg, "CLANG=" KBUILD_SCX_CLANG,
			      NULL};
	_cleanup_free_ char *dest = fs_path_join(out_dir, KBUILD_SCX_DIR);
	r = fs_mkdir_p(dest, err);
	if (r < 0)
		return r;
	/* libbpf (bpf_object__probe_loading) loads a trivial socket filter, or
	 * else a tracepoint program, before anything else: a kernel with neither
	 * program type refuses every loader with "Couldn't load trivial BPF
	 * program" (seen in a 6.12 guest built from tinyconfig). */
	if (!kbuild_config_text_has(cfg, "CONFIG_NET=y") &&
	    !kbuild_config_text_has(cfg, "CONFIG_BPF_EVENTS=y")) {
		static const char why[] =
		    "The kernel's config has neither CONFIG_NET nor CONFIG_BPF_EVENTS, so "
		    "libbpf cannot load its probe program (a socket filter or a tracepoint "
		    "program) and every sched_ext loader would fail with \"Couldn't load "
		    "trivial BPF program\"; add CONFIG_NET=y to the kernel's config.\n";
		kbuild_log(&b->log, "%s", why);
		_cleanup_free_ char *failed = fs_path_join(dest, KBUILD_SCX_FAILED);
		return fs_write_file_atomic(failed, why, strlen(why), err);
	}
	int ex = 0;
	struct sl_error step_err = {0};
	r = kbuild_run_step(b, KBUILD_SANDBOX_MAKE, argv, b->tree.src, KBUILD_SCX_TIMEOUT_S, &ex,
			    NULL, &step_err);
	if (r < 0 && step_err.kind != ERR_BUILD) {
		*err = step_err;
		return r;
	}
	if (r < 0 || ex != 0) {
		/* The kernel itself is fine and other jobs use it: the failure is
		 * kept beside it for the variants that want a scheduler. */
		char why[1024];
		if (r < 0)
			snprintf(why, sizeof(why), "%.900s\n", step_err.message);
		else
			snprintf(why, sizeof(why),
				 "The sched_ext schedulers (tools/sched_ext) did not build (make "
				 "exit %d): %.700s\n",
				 ex,
				 b->log.last_error[0] ? b->log.last_error : "see the build log");
		kbuild_log(&b->log, "%s", why);
		_cleanup_free_ char *failed = fs_path_join(dest, KBUILD_SCX_FAILED);
		return fs_write_file_atomic(failed, why, strlen(why), err);
	}
	for (const char *const *s = sched_ext_schedulers(); *s; s++) {
		_cleanup_free_ char *from = fs_path_join("build/bin", *s);
		_cleanup_free_ char *to = fs_path_join(dest, *s);
		r = kbuild_copy_output(&b->sandbox, build, from, "sched_ext loader",
				       KBUILD_MAX_LOADER_BYTES, to, 0755, err);
		if (r < 0)
			return r;
	}
	kbuild_log(&b->log, "built the sched_ext schedulers into '%s'", dest);
	return 0;
}
