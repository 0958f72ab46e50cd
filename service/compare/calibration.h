/* A/A calibration (docs/statistics.md, "A/A calibration"): the spread of
 * each metric over N boots of one kernel on one host, stored under
 * <cache>/calibration/<key>.json (results-schema/calibration.schema.json),
 * one file per workload. The key covers what the spread depends on: the
 * host (hostname, CPU model, accelerator), the kernel (its build cache key),
 * the guest shape (vCPUs, memory) and the workload (tool, args, maxerr_us,
 * uid); not the workload's name, so `schedlab test` and a job that spell the
 * same workload alike share one calibration.
 *
 * A comparison without a gate threshold then uses
 *   thr = max(default threshold, CALIBRATION_MULTIPLE x spread)
 * so a default never sits inside this host's own A/A noise, and never drops
 * below today's defaults (compare.c's floors). */
#pragma once

#include "compare/run_view.h"
#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "job/job.h"
#include "util/error.h"

#define CALIBRATION_MULTIPLE   1.0
#define CALIBRATION_MIN_BOOTS  3
#define CALIBRATION_MAX_BOOTS  50
#define CALIBRATION_MAX_BYTES  (1024 * 1024)
#define CALIBRATION_MAX_FIELD  128
#define CALIBRATION_SCHEMA     "schedlab-calibration/1"
#define CALIBRATION_SPREAD_DEF "p90 of |x_i - x_j| over pairs of runs"

/* The noise limit from a calibration: this multiple of the calibration runs'
 * p90 vCPU wait, never below the floor nor above the job default. */
#define CALIBRATION_NOISE_MULTIPLE  2.0
#define CALIBRATION_NOISE_FLOOR_PCT 10.0

struct calibration_host {
	char hostname[CALIBRATION_MAX_FIELD];
	char cpu_model[CALIBRATION_MAX_FIELD];
	char accel[8];
};

/* This machine: uname's nodename, /proc/cpuinfo's first "model name" (or
 * "unknown"), and accel ("kvm" or "tcg"). */
void calibration_host_local(const char *accel, struct calibration_host *h);

/* The store key of workload w (borrowed) of job (its guest shape) with the
 * kernel kernel_key on host h: a SHA-256 in hex. */
void calibration_key(const struct calibration_host *h, const char *kernel_key,
		     const struct job *job, const struct job_workload *w, char out[65]);

/* The A/A spread of values v[0..n): the 90th percentile (type 7) of |v_i -
 * v_j| over all pairs i < j; NAN when n < 2. At most STATS_MAX_VALUES. */
double calibration_spread(const double *v, size_t n);

/* The calibration document of workload w from runs (a borrowed array of run
 * objects of one variant): per metric the values of ok, not-noisy runs
 * whose workload was ok, their median and spread (metrics with fewer than
 * CALIBRATION_MIN_BOOTS values are left out). boots: the boots asked for.
 * made_at: ISO 8601. A new object; NULL on OOM or when runs holds
 * something that is not a run record (run_view_read()). */
json_object *calibration_from_runs(const struct calibration_host *h, const char *kernel_key,
				   const struct job *job, const struct job_workload *w,
				   json_object *runs, int boots, const char *made_at);

/* The same from runs already read (borrowed): a caller that holds the
 * typed result reads its runs once for every workload. NULL on OOM. */
json_object *calibration_from_view(const struct calibration_host *h, const char *kernel_key,
				   const struct job *job, const struct job_workload *w,
				   const struct run_view *view, int boots, const char *made_at);

/* Checks a calibration document's shape (a file is untrusted input): the
 * fields, their types and bounds. ERR_INVALID names the field. */
int calibration_check(json_object *doc, struct sl_error *err);

/* Writes doc to <cache_dir>/calibration/<doc.key>.json atomically. */
int calibration_save(const char *cache_dir, json_object *doc, struct sl_error *err);

/* Reads and checks <cache_dir>/calibration/<key>.json into *ret (owned).
 * ERR_NOT_FOUND when there is none; ERR_INVALID when it is broken or its
 * key is not the one asked for. */
int calibration_load(const char *cache_dir, const char *key, json_object **ret,
		     struct sl_error *err);

/* The result's "calibration" array for a job about to run: one entry per
 * workload that has a stored calibration for host h and kernel_key, each
 * {workload, key, made_at, boots, host, kernel, multiple, spreads}. A broken
 * file is skipped (a warning on stderr). A new array, possibly empty. */
json_object *calibration_lookup(const char *cache_dir, const struct calibration_host *h,
				const char *kernel_key, const struct job *job);

/* The threshold a comparison uses: max(default_thr, CALIBRATION_MULTIPLE x
 * the spread of metric for workload in calibration (a result's
 * "calibration" array, borrowed, may be NULL)). *ret_spread gets the spread
 * used, or NAN when no calibration covers the metric (then default_thr). */
double calibration_threshold(json_object *calibration, const char *workload, const char *metric,
			     double default_thr, double *ret_spread);

/* The noise limit (%) of a job that names none (job->noise_limit_given
 * false), from its calibration entries (a result's "calibration" array,
 * borrowed, may be NULL):
 *   min(default_limit, max(CALIBRATION_NOISE_FLOOR_PCT,
 *                          CALIBRATION_NOISE_MULTIPLE x w))
 * where w is the largest vcpu_wait_pct_p90 among the entries: a run that
 * waited twice as long as nine in ten of this host's A/A boots did is not
 * a quiet run. *ret_wait gets w, or NAN when no entry has one (then
 * default_limit). */
double calibration_noise_limit(json_object *calibration, double default_limit, double *ret_wait);

/* Every file in <cache_dir>/calibration/, as a new array of {key, made_at,
 * boots, host, kernel, workload, age_s} (the newest first), for the
 * service's status; broken files are left out. At most max entries. */
json_object *calibration_list(const char *cache_dir, size_t max);
