/* The runner's kernels: each kernel of the job built or taken from the
 * cache (with its variants' own sched_ext schedulers), and the free-space
 * floor every build and run waits for. See runner-internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/runner.h"
#include "run/runner-internal.h"
#include "job/job.h"
#include "job/sched_ext.h"
#include "kernel/kbuild.h"
#include "kernel/scx_user_build.h"
#include "kernel/sched_names.h"
#include "run/materialize.h"
#include "run/placement.h"
#include "run/result.h"
#include "run/run_skip.h"
#include "util/disk.h"
#include "util/fs.h"

void runner_progress(struct runner *r, const char *phase, double pct, const char *fmt, ...)
{
	if (!r->hooks || !r->hooks->progress)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct runner_progress p = {
	    .phase = phase,
	    .percent = pct,
	    .run_index = r->run_index,
	    .run_total = r->run_total,
	    .message = msg,
	};
	r->hooks->progress(r->hooks->userdata, &p);
}

int runner_cancelled(void *userdata)
{
	struct runner *r = userdata;
	return r->hooks && r->hooks->cancelled && r->hooks->cancelled(r->hooks->userdata);
}

static void disk_waiting_cb(void *userdata, const char *why)
{
	struct runner *r = userdata;
	runner_progress(r, r->run_index ? "booting" : "building", -1, "waiting for disk space: %s",
			why);
}

/* The free-space floor before a build or a run (runner_config). */
int runner_wait_for_room(struct runner *r, struct sl_error *err)
{
	const struct disk_fs fs[] = {{"cache", r->cache_dir}, {"state", r->job_dir}};
	const struct disk_wait w = {.fs = fs,
				    .n = ELEMENTSOF(fs),
				    .floor = r->cfg->min_free_bytes,
				    .max_s = r->cfg->disk_wait_max_s,
				    .poll_s = r->cfg->disk_poll_s,
				    .waiting = disk_waiting_cb,
				    .cancelled = runner_cancelled,
				    .ud = r};
	return disk_floor_wait(&w, NULL, err);
}

static void build_progress_cb(void *userdata, double pct, const char *line)
{
	struct runner *r = userdata;
	runner_progress(r, "building", pct, "%s", line);
}

/* Builds (or takes from the cache) the own sched_ext scheduler of every
 * variant of kernel bk (kernel/scx_user_build.h); a program that does not
 * build fails the job before any boot, naming the variant's source field. */
static int build_user_schedulers(struct runner *r, const struct kbuild_opts *o,
				 const struct kernel_spec *spec, struct built_kernel *bk,
				 struct sl_error *err)
{
	for (size_t v = 0; v < r->job->n_variants; v++) {
		const struct job_variant *var = &r->job->variants[v];
		if (!var->scx_bpf || strcmp(var->kernel->name, bk->name) != 0 || !bk->scx)
			continue;
		if (!bk->user_loaders &&
		    !(bk->user_loaders = calloc(r->job->n_variants, sizeof(char *))))
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		runner_progress(r, "building", -1,
				"variant '%s': building the sched_ext scheduler '%s'", var->name,
				var->scx_scheduler);
		struct scx_user_source src = {var->scx_scheduler, var->scx_bpf, var->scx_loader};
		enum sched_ext_source_file file = SCHED_EXT_FILE_NONE;
		int rc = scx_user_build(o, spec, bk->art, &src, &bk->user_loaders[v], &file, err);
		/* the compiler's first error in one of the user's files is the
		 * job's error; any other failure (clang missing, the tree
		 * busy, the time limit, the skeleton) stays the build's */
		if (rc < 0 && file != SCHED_EXT_FILE_NONE) {
			snprintf(err->path, sizeof(err->path), "$.variants.%s.sched_ext.source.%s",
				 var->name, file == SCHED_EXT_FILE_BPF ? "bpf" : "loader");
			err->kind = ERR_INVALID;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The unit tests' kernels (runner-internal.h); NULL in production. */
static pthread_mutex_t kernel_hook_lock = PTHREAD_MUTEX_INITIALIZER;
static runner_kernel_fn kernel_hook;
static void *kernel_hook_userdata;

void runner_set_kernel_hook(runner_kernel_fn fn, void *userdata)
{
	pthread_mutex_lock(&kernel_hook_lock);
	kernel_hook = fn;
	kernel_hook_userdata = userdata;
	pthread_mutex_unlock(&kernel_hook_lock);
}

/* Kernel i of r's job from the hook fn into *b, checked and recorded as a
 * built one is (sched_names_check, result_add_kernel). */
static int hooked_kernel(struct runner *r, runner_kernel_fn fn, void *userdata, size_t i,
			 json_object *result, struct built_kernel *b, struct sl_error *err)
{
	const char *kname = r->job->kernels[i].name;
	struct kbuild_artifact *art = NULL;
	int rc = fn(userdata, kname, &art, err);
	if (rc < 0)
		return error_prefix(err, "Kernel '%s' was not built", kname);
	b->name = strdup(kname);
	b->art = art;
	if (!b->name)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	b->scx = kbuild_config_has_scx(art->config);
	for (size_t v = 0; v < r->job->n_variants; v++)
		if (strcmp(r->job->variants[v].kernel->name, kname) == 0 &&
		    (rc = sched_names_check(art->meta, &r->job->variants[v], kname, err)) < 0)
			return rc;
	result_add_kernel(result, kname, art);
	runner_progress(r, "building", 100, "kernel '%s' ready (from the kernel hook)", kname);
	return 0;
}

int runner_build_kernels(struct runner *r, json_object *result, struct built_kernel **ret,
			 size_t *ret_n, struct sl_error *err)
{
	size_t n = r->job->n_kernels;
	struct built_kernel *built = calloc(n ? n : 1, sizeof(*built));
	if (!built)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	*ret = built;
	*ret_n = 0;
	pthread_mutex_lock(&kernel_hook_lock);
	runner_kernel_fn hook = kernel_hook;
	void *hook_userdata = kernel_hook_userdata;
	pthread_mutex_unlock(&kernel_hook_lock);
	for (size_t i = 0; i < n; i++) {
		const char *kname = r->job->kernels[i].name;
		if (hook) {
			/* counted before the checks, so runner_built_free() frees it */
			int rc = hooked_kernel(r, hook, hook_userdata, i, result,
					       &built[(*ret_n)++], err);
			if (rc < 0)
				return rc;
			continue;
		}
		struct kernel_spec *spec = NULL;
		int rc =
		    materialize_kernel(&r->job->kernels[i], r->job_dir, r->data_dir, &spec, err);
		if (rc < 0)
			return rc;
		_cleanup_free_ char *logname = NULL;
		if (asprintf(&logname, "build-%s.log", kname) < 0) {
			kernel_spec_free(spec);
			return error_set(err, ERR_INTERNAL, ENOMEM,
					 "Out of memory naming the build log of kernel '%s'.",
					 kname);
		}
		_cleanup_free_ char *logpath = fs_path_join(r->job_dir, logname);
		_cleanup_close_ int log_fd =
		    open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		struct kbuild_opts o = {
		    .cache_dir = r->cache_dir,
		    .cache_max_bytes = r->cfg->cache_max_bytes,
		    .jobs = r->cfg->build_jobs,
		    .no_sandbox = r->cfg->build_no_sandbox,
		    .timeout_s = r->cfg->build_timeout_s,
		    .tree_slots = r->cfg->build_slots,
		    .log_fd = log_fd,
		    .progress = build_progress_cb,
		    .cancelled = runner_cancelled,
		    .userdata = r,
		};
		struct kbuild_failure failure = {0};
		o.failure = &failure;
		runner_progress(r, "building", 0, "kernel '%s': building or taking from the cache",
				kname);
		if ((rc = runner_wait_for_room(r, err)) < 0) {
			kernel_spec_free(spec);
			return rc;
		}
		placement_slot_acquire(PLACEMENT_SLOT_BUILD, r->cfg->build_slots);
		struct kbuild_artifact *art = NULL;
		rc = kbuild_build(&o, spec, &art, err);
		placement_slot_release(PLACEMENT_SLOT_BUILD);
		/* A candidate's kernel that does not build is the job's answer
		 * (contract A): its variants do not run and the verdict fails.
		 * The baseline's is an error: there is nothing to compare with. */
		bool baseline_kernel = strcmp(r->job->baseline->kernel->name, kname) == 0;
		if (rc < 0 && err && err->kind == ERR_BUILD && !baseline_kernel) {
			result_add_kernel_failed(result, kname, r->job->kernels[i].source, err,
						 &failure);
			run_skip_kernel_not_built(r->skip, kname);
			runner_progress(
			    r, "building", 100,
			    "kernel '%s' did not build (%s): %s Its variants will not run.", kname,
			    err->code, err->message);
			kbuild_failure_clear(&failure);
			kernel_spec_free(spec);
			continue;
		}
		kbuild_failure_clear(&failure);
		if (rc < 0) {
			kernel_spec_free(spec);
			return error_prefix(err, "Kernel '%s' was not built", kname);
		}
		built[*ret_n].name = strdup(kname);
		built[*ret_n].art = art;
		built[*ret_n].scx = kbuild_config_has_scx(art->config);
		(*ret_n)++;
		rc = build_user_schedulers(r, &o, spec, &built[*ret_n - 1], err);
		kernel_spec_free(spec);
		if (rc < 0)
			return rc;
		/* names that kernel does not have would fail every boot: say which */
		for (size_t v = 0; v < r->job->n_variants; v++)
			if (strcmp(r->job->variants[v].kernel->name, kname) == 0 &&
			    (rc = sched_names_check(art->meta, &r->job->variants[v], kname, err)) <
				0)
				return rc;
		result_add_kernel(result, kname, art);
		runner_progress(r, "building", 100, "kernel '%s' ready (%s, key %.12s)", kname,
				art->cached ? "cache hit" : "built", art->key);
	}
	return 0;
}

void runner_built_free(struct built_kernel *b, size_t n, size_t n_variants)
{
	for (size_t i = 0; i < n; i++) {
		free(b[i].name);
		kbuild_artifact_free(b[i].art);
		for (size_t v = 0; b[i].user_loaders && v < n_variants; v++)
			free(b[i].user_loaders[v]);
		free(b[i].user_loaders);
	}
	free(b);
}

const struct built_kernel *runner_built_find(const struct built_kernel *b, size_t n,
					     const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(b[i].name, name) == 0)
			return &b[i];
	return NULL;
}
