/* What the runner's files share (runner.c: the job, its runs and its
 * result; runner_one.c: one run on one host; runner_build.c: its kernels
 * and the free-space floor). Not a
 * public interface; runner.h is. Like store-internal.h, it does not include
 * runner.h, so the include graph stays acyclic. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "util/error.h"
#include "util/macro.h"

struct job;
struct run_skip;
struct hostpool;
struct runner_config;
struct runner_hooks;
struct kbuild_artifact;
struct run_key;
struct guest_host;
struct guest_spec;
struct guest_outcome;

struct runner {
	const struct runner_config *cfg;
	const struct runner_hooks *hooks;
	struct job *job; /* run_job's; choose_noise_limit() sets its noise limit */
	const char *job_dir;
	const char *cache_dir;
	const char *data_dir;
	int run_index, run_total;
	struct hostpool *pool; /* the job's hypervisor hosts, while measuring */
	struct run_skip *skip; /* which runs still run: not-built variants, fail fast */
	double noise_aa_wait;  /* the calibration's p90 vCPU wait the limit came from, or NAN */
};

/* A progress line to the hooks (r->hooks->progress), if any. */
_printf_(4, 5) void runner_progress(struct runner *r, const char *phase, double pct,
				    const char *fmt, ...);
/* The job's cancel hook; userdata is the runner. */
int runner_cancelled(void *userdata);

struct built_kernel {
	char *name;
	struct kbuild_artifact *art;
	bool scx; /* art's config enables SCHED_CLASS_EXT (read once) */
	/* per variant (job->n_variants entries; NULL without one): the host path
	 * of the loader of a variant's own sched_ext scheduler built against art */
	char **user_loaders;
};

/* Builds (or takes from the cache) every kernel of r's job: *ret holds
 * *ret_n of them (a candidate's kernel that did not build is recorded in
 * result and left out); the caller frees them with runner_built_free(). */
int runner_build_kernels(struct runner *r, json_object *result, struct built_kernel **ret,
			 size_t *ret_n, struct sl_error *err);
void runner_built_free(struct built_kernel *b, size_t n, size_t n_variants);
/* The built kernel named name, or NULL. */
const struct built_kernel *runner_built_find(const struct built_kernel *b, size_t n,
					     const char *name);
/* Waits while the cache's or the job directory's filesystem is below
 * r->cfg->min_free_bytes (util/disk.h), the reason in the job's progress;
 * ERR_INFRA "disk_full" past disk_wait_max_s, ERR_CANCELLED on a cancel. */
int runner_wait_for_room(struct runner *r, struct sl_error *err);

/* Boots one run of key on host hidx of r's pool: its plan in an initrd,
 * the guest, and the run record from what came back. NULL with err set on
 * an infrastructure failure; *ret_dropped says the host dropped. */
json_object *runner_run_one(struct runner *r, size_t hidx, const struct run_key *k,
			    const char *base_initrd, struct kbuild_artifact *art, const char *accel,
			    bool *ret_dropped, struct sl_error *err);

/* The guest a run boots, in place of guest_run() (guest/guest.h), with the
 * same contract plus the run's key. For unit tests only
 * (tests/unit/helpers/fake_guest.h): they script outcomes without libvirt.
 * Production never sets it, and with none set runner_run_one() calls
 * guest_run() exactly as before. */
typedef int (*runner_guest_run_fn)(void *userdata, const struct run_key *k, struct guest_host *h,
				   const struct guest_spec *spec, struct guest_outcome **ret,
				   struct sl_error *err);
/* Sets (fn NULL: clears) the hook for every runner of the process. */
void runner_set_guest_hook(runner_guest_run_fn fn, void *userdata);

/* The kernels a job gets, in place of materialize_kernel() and
 * kbuild_build(): *ret a new artifact (kbuild.h; freed with
 * kbuild_artifact_free) for the kernel named name. For unit tests only, so
 * that runner_run_job() runs without a kernel tree or a build; with none
 * set runner_build_kernels() builds as before. */
typedef int (*runner_kernel_fn)(void *userdata, const char *name, struct kbuild_artifact **ret,
				struct sl_error *err);
void runner_set_kernel_hook(runner_kernel_fn fn, void *userdata);
