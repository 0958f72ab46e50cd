/* The runner: one job from expanded spec to result document. The one code
 * path behind `schedlab run` and the service's workers.
 *
 * Flow: for each kernel build or take from the cache -> base initramfs
 * (cached) -> for each repeat, variants interleaved (A B A B ...): plan ->
 * guest -> parse metrics -> compare -> verdict. */
#pragma once

#include <stdbool.h>
#include "util/error.h"

struct hostpool;

struct runner_config {
	const char *cache_dir; /* kernels, initramfs images, ccache; NULL: fs_default_cache_dir() */
	const char *data_dir;  /* repo/data root; NULL: fs_data_dir() */
	const char *libvirt_uri; /* NULL: "qemu:///system" */
	const char *accel;	 /* "auto" (probe), "kvm" or "tcg"; NULL: "auto" */
	int build_jobs;		 /* make -jN; <= 0: number of online CPUs */
	int build_slots;	 /* kernel builds at once in this process; <= 0: 1 */
	bool build_no_sandbox;	 /* patch and make unsandboxed (kbuild_opts.no_sandbox) */
	int build_timeout_s;	 /* a build step's time limit; <= 0: kbuild's defaults */
	int guest_slots;	 /* guests at once in this process; <= 0: max(1, cores / 2) */
	/* The hypervisor hosts (hostpool.h, docs/scale-out.md): a pool shared by
	 * the service's workers; or NULL to make one for the job from
	 * hypervisors (a "hypervisors" array, borrowed); or with both NULL, the
	 * one host libvirt_uri. guest_slots bounds the guests on local hosts. */
	struct hostpool *hostpool;
	json_object *hypervisors;
	/* Kernel builds: the cache bound (kbuild_opts.cache_max_bytes: 0 the
	 * default, KBUILD_CACHE_UNLIMITED none). */
	unsigned long long cache_max_bytes;
	/* The free-space floor (util/disk.h) on the cache's and job_dir's
	 * filesystems: below it a kernel build or a guest run waits, its
	 * progress saying why, re-checking every disk_poll_s (<= 0: 10 s), for
	 * at most disk_wait_max_s, then fails the job (ERR_INFRA "disk_full").
	 * 0: no floor. */
	unsigned long long min_free_bytes;
	int disk_wait_max_s;
	int disk_poll_s;
};

struct runner_progress {
	const char *phase; /* "building", "booting", "running", "comparing" */
	double percent;	   /* of the phase, 0..100, or -1 when unknown */
	int run_index;	   /* 1-based index of the run in progress, 0 outside runs */
	int run_total;
	const char *message; /* one human-readable line */
};

struct runner_hooks {
	void *userdata;
	/* Progress; may be NULL. Called from the runner's thread. */
	void (*progress)(void *userdata, const struct runner_progress *p);
	/* A run finished in an earlier attempt of this job, by run key
	 * ("<variant>#<repeat>", run/run_key.h parses it): a new reference to
	 * its run object, or NULL to run it. May be NULL. */
	json_object *(*lookup_run)(void *userdata, const char *run_key);
	/* A run just finished (any status); run is borrowed. May be NULL. */
	void (*run_done)(void *userdata, const char *run_key, json_object *run);
	/* Nonzero cancels: builds are stopped and domains destroyed. May be NULL. */
	int (*cancelled)(void *userdata);
};

/* Runs an expanded spec (borrowed; see job_expand_json), read once into the
 * typed job (job_from_expanded), with job_dir as its working directory
 * (materialized patches, build and console logs). On success *ret_result is
 * a new reference to the result document, whose "verdict" is pass, fail or
 * inconclusive; hung or panicked runs are results, not errors. Errors are a
 * spec not in the expanded form (ERR_INVALID), infrastructure failures or
 * cancellation. */
int runner_run_job(const struct runner_config *cfg, json_object *expanded_spec, const char *job_dir,
		   const struct runner_hooks *hooks, json_object **ret_result,
		   struct sl_error *err);

/* Builds (or takes from the cache) every kernel of an expanded spec
 * (borrowed), as runner_run_job would, in job_dir, and runs nothing: the
 * prefix walks build several prefixes at once with it
 * (run/prefix_prebuild.h). *ret_built is the number of kernels built (not
 * cache hits), or -1 when a candidate kernel did not build (a result, not
 * an error: its step says so when it runs). Errors as runner_run_job. */
int runner_build_job(const struct runner_config *cfg, json_object *expanded_spec,
		     const char *job_dir, const struct runner_hooks *hooks, int *ret_built,
		     struct sl_error *err);
