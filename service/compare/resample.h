/* Replaying stored runs: pools of a stored result's runs, simulated jobs
 * drawn from them with replacement, and the exact binomial interval of a
 * rate measured that way. bench/verdict_peers.c uses them to replay
 * schedlab's rule and the peers' on the runs bench/verdict-accuracy.sh
 * stored (docs/statistics.md). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <gsl/gsl_rng.h>
#include <json-c/json.h>

struct resample_pool {
	json_object **runs; /* borrowed from the loaded results */
	size_t n, cap;
};

/* A metric a pool keeps: the others are dropped from the pooled runs. */
struct resample_keep {
	const char *workload, *metric;
};

/* Adds every run of the result's baseline variant (baseline true) or of its
 * other variants to p. The runs stay the result's (borrowed; the result must
 * outlive the pool); their workloads' details are dropped, and with keep
 * (n_keep > 0) every workload and metric not named in keep, since drawn
 * runs are copied many times and compared often. Returns 0, -EINVAL for a
 * result without job.baseline or variants, -ENOMEM. */
int resample_pool_add(struct resample_pool *p, json_object *result, bool baseline,
		      const struct resample_keep *keep, size_t n_keep);

/* Frees the pool's array (not the runs). */
void resample_pool_free(struct resample_pool *p);

/* A deep copy of a run drawn uniformly from p (p->n > 0), its key and
 * repeat renamed as round r of variant vname. New reference, or NULL. */
json_object *resample_draw(const struct resample_pool *p, gsl_rng *rng, const char *vname, int r);

/* Loads DIR/KIND*-hogHOGS.result.json (bench/verdict-accuracy.sh's names)
 * into out[0..cap): new references, the caller puts them. A file that does
 * not parse, or is not a result document (model_result_parse()), is named
 * on stderr and left out. Returns the count or -errno
 * when dir cannot be read. */
int resample_load_results(const char *dir, const char *kind, int hogs, json_object **out, int cap);

/* The stored expanded job (borrowed) as a new one to replay: cut to
 * workload (NULL: all) and its gates, the gates the suite added by default
 * ("default": true) rebuilt from today's table (suite_add_default_gates),
 * so a change of the defaults shows in a replay of old runs, and repeat
 * min..max. New reference, or NULL without memory. */
json_object *resample_job_json(json_object *stored, const char *workload, int min, int max);

/* The two-sided 95 % Clopper-Pearson interval of a rate of x in n, in
 * percent ([0, 100] when n is 0). */
void resample_cp95(int x, int n, double ret[2]);
