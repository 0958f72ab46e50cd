/* Runs the host got in the way of. A run whose vCPU threads waited longer
 * than a limit for a host CPU (guest/interference.h) measured the host as
 * much as the scheduler: it is marked "noisy", and the job's noise policy
 * decides what a noisy run does to the verdict (docs/statistics.md, "Host
 * interference"):
 *   exclude  (default) left out of the comparisons and rerun, a bounded
 *            number of times; too few clean runs leave a gated metric
 *            inconclusive with the interference named;
 *   keep     counted like any other run (the result still marks it);
 *   fail     a noisy candidate run fails the job. */
#pragma once

#include <stdbool.h>

#include <json-c/json.h>

#include "compare/result_model.h"
#include "job/job.h"

/* The job's policy (job->noise_policy) by its name in the spec: "exclude",
 * "keep" or "fail". */
const char *noise_policy_name(enum job_noise_policy p);
/* The run's host_interference.vcpu_wait_pct, or NAN when not measured.
 * run is borrowed. */
double noise_run_wait_pct(json_object *run);
/* Whether a run object was marked noisy. */
bool noise_run_is_noisy(json_object *run);
/* Other processes may take up to this share (%) of the host's CPU time
 * during a run before its vCPU wait counts against the host: below it the
 * wait is the guest's own (its vCPUs and QEMU's threads outnumber the host's
 * CPUs, as a loaded 2-vCPU guest on a 2-CPU host does), the same for every
 * variant. A quiet host's daemons, the service and libvirt take 1 to 3 %. */
#define NOISE_OTHERS_LIMIT_PCT 10.0
/* Over this share (%) of the host's CPU time taken by other processes, a run
 * is noisy whatever its vCPUs' wait. CPU work on the host beside a
 * cyclictest guest grew its latencies sevenfold while its vCPUs waited 5 to
 * 6 %: an idle vCPU sleeps in the host, and under TCG the guest's timers
 * fire from QEMU's main loop, so neither's delay counts as vCPU wait.
 * Measured here (docs/statistics.md, "Host interference"): quiet runs 0 to
 * 25 %; beside four busy loops 66 to 83 %, where a third (one pool) to
 * nine in ten (another) of the runs waited under 25 % and counted as clean. */
#define NOISE_OTHERS_BUSY_PCT 40.0
/* The run's host_interference.others_busy_pct, or NAN when not measured. */
double noise_run_others_pct(json_object *run);
/* Whether a run with this vCPU wait and others' share (%, NAN when not
 * measured) is noisy at limit_pct, the job's noise_limit_pct: the share of
 * a run's wall time, summed over its vCPUs, that they may wait for a host
 * CPU. A wait above it is noise when other processes took over
 * NOISE_OTHERS_LIMIT_PCT of the host's CPU time, or when that was not
 * measured; others over NOISE_OTHERS_BUSY_PCT are noise whatever the wait. */
bool noise_is_noisy(double wait_pct, double others_pct, double limit_pct);
/* Marks run (borrowed) "noisy": true or false by noise_is_noisy() from its
 * host_interference. Returns the mark. */
bool noise_mark_run(json_object *run, double limit_pct);
/* A guest that deadlocks spins its vCPUs, and on a small host spinning vCPUs
 * wait for each other and for the emulator: a hung run is "noisy" by its own
 * doing. Its wait is evidence against the host only when the host starved
 * the baseline too. The median vCPU wait (%) of runs (a borrowed array of
 * run objects: the baseline's runs in the job so far) that ended ok, or NAN
 * when none was measured. */
double noise_runs_median_wait(json_object *runs);
/* The same runs' p-quantile (type 7, 0 <= p <= 1) of the vCPU wait (%), or
 * NAN when none was measured. */
double noise_runs_wait_quantile(json_object *runs, double p);
/* The same two for runs read through the result model (run_view.h): one
 * run's vCPU wait, and the p-quantile of the waits of those of runs (n of
 * them, borrowed) that ended ok. */
double noise_model_wait_pct(const struct model_run *run);
double noise_model_wait_quantile(const struct model_run *runs, size_t n, double p);
/* The same for host_interference.others_busy_pct. */
double noise_model_others_pct(const struct model_run *run);
double noise_model_others_quantile(const struct model_run *runs, size_t n, double p);
double noise_runs_median_others(json_object *runs);
/* Whether a noisy hung run counts as the kernel's hang: the baseline's median
 * wait (noise_runs_median_wait) was measured and within limit_pct, and its
 * median others' share (noise_runs_median_others) not over
 * NOISE_OTHERS_BUSY_PCT, so the host was quiet for the same job. */
bool noise_hang_is_kernels(double baseline_median_wait, double baseline_median_others,
			   double limit_pct);
