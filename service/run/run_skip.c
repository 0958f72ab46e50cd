/* Which runs still run: not-built variants and fail fast. See run_skip.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run_skip.h"
#include "compare/noise.h"
#include "util/json_get.h"

struct variant_state {
	bool not_built; /* its kernel did not build: it never runs */
	bool stopped;	/* no more runs: failed fast, or the job stopped */
	int skipped;	/* runs the job went on to without it */
	char reason[RUN_KEY_STRLEN + 96];
};

struct run_skip {
	const struct job *job;
	size_t base;		/* the baseline's index in job->variants */
	json_object *base_runs; /* the baseline's runs so far (for noise_runs_median_wait) */
	struct variant_state v[];
};

struct run_skip *run_skip_new(const struct job *job)
{
	struct run_skip *s = calloc(1, sizeof(*s) + job->n_variants * sizeof(s->v[0]));
	if (!s)
		return NULL;
	s->job = job;
	s->base_runs = json_object_new_array();
	for (size_t i = 0; i < job->n_variants; i++)
		if (&job->variants[i] == job->baseline)
			s->base = i;
	return s;
}

void run_skip_free(struct run_skip *s)
{
	if (s)
		json_object_put(s->base_runs);
	free(s);
}

static long variant_index(const struct run_skip *s, const char *name)
{
	for (size_t i = 0; i < s->job->n_variants; i++)
		if (strcmp(s->job->variants[i].name, name) == 0)
			return (long)i;
	return -1;
}

bool run_skip_stopped(const struct run_skip *s)
{
	bool any = false;
	for (size_t i = 0; i < s->job->n_variants; i++) {
		if (i == s->base)
			continue;
		any = true;
		if (!s->v[i].not_built && !s->v[i].stopped)
			return false;
	}
	return any;
}

/* When no candidate is left, the baseline stops too, saying why. */
static bool stop_job_if_done(struct run_skip *s, const char *why)
{
	struct variant_state *b = &s->v[s->base];
	if (b->stopped || !run_skip_stopped(s))
		return false;
	b->stopped = true;
	snprintf(b->reason, sizeof(b->reason), "%s", why);
	return true;
}

void run_skip_kernel_not_built(struct run_skip *s, const char *kernel)
{
	for (size_t i = 0; i < s->job->n_variants; i++)
		if (i != s->base && strcmp(s->job->variants[i].kernel->name, kernel) == 0)
			s->v[i].not_built = true;
	bool built_one = false;
	for (size_t i = 0; i < s->job->n_variants; i++)
		if (i != s->base && !s->v[i].not_built)
			built_one = true;
	if (!built_one)
		stop_job_if_done(s, "no non-baseline variant was built, so there is nothing to "
				    "compare with");
}

bool run_skip_not_built(const struct run_skip *s, const char *variant)
{
	long i = variant_index(s, variant);
	return i >= 0 && s->v[i].not_built;
}

bool run_skip_is_skipped(const struct run_skip *s, const struct run_key *key)
{
	long i = variant_index(s, key->variant);
	return i >= 0 && (s->v[i].not_built || s->v[i].stopped);
}

bool run_skip_take(struct run_skip *s, const struct run_key *key)
{
	long i = variant_index(s, key->variant);
	if (i < 0 || !(s->v[i].not_built || s->v[i].stopped))
		return false;
	if (!s->v[i].not_built)
		s->v[i].skipped++;
	return true;
}

/* The run status as the past tense a reason reads ("run x#0 hung"), or NULL
 * for a status that does not stop a variant. */
static const char *failed_word(const char *status)
{
	if (!status)
		return NULL;
	if (strcmp(status, "hung") == 0)
		return "hung";
	if (strcmp(status, "panic") == 0)
		return "panicked";
	if (strcmp(status, "crashed") == 0)
		return "crashed";
	/* a BPF scheduler that did not load or was ejected (docs/sched-ext.md) */
	if (strcmp(status, "sched_ext_failed") == 0)
		return "lost its sched_ext scheduler";
	return NULL;
}

bool run_skip_run_ended(struct run_skip *s, const struct run_key *key, json_object *run)
{
	long i = variant_index(s, key->variant);
	if (i >= 0 && (size_t)i == s->base && s->base_runs)
		json_object_array_add(s->base_runs, json_object_get(run));
	if (i < 0 || (size_t)i == s->base || s->v[i].stopped || s->v[i].not_built)
		return false;
	const char *word = failed_word(json_object_get_string(json_member(run, "status")));
	if (!word)
		return false;
	/* compare.c leaves a noisy hung run out (the starved host may have hung
	 * it), and reruns it: that is no reason to stop, unless the baseline ran
	 * on a quiet host, when the wait is the hung guest's own spinning
	 * (noise_hang_is_kernels). A panic or crash is the kernel's whatever
	 * the host did. */
	if (strcmp(word, "hung") == 0 && noise_run_is_noisy(run) &&
	    s->job->noise_policy == JOB_NOISE_EXCLUDE &&
	    !noise_hang_is_kernels(noise_runs_median_wait(s->base_runs),
				   noise_runs_median_others(s->base_runs), s->job->noise_limit_pct))
		return false;
	char k[RUN_KEY_STRLEN];
	run_key_format(key, k);
	s->v[i].stopped = true;
	snprintf(s->v[i].reason, sizeof(s->v[i].reason), "run %s %s", k, word);
	char why[sizeof(s->v[i].reason) + 64];
	snprintf(why, sizeof(why), "every non-baseline variant failed (the last: run %s %s)", k,
		 word);
	return stop_job_if_done(s, why);
}

void run_skip_describe(const struct run_skip *s, json_object *result)
{
	json_object *variants = json_member(result, "variants");
	for (size_t i = 0; i < s->job->n_variants; i++) {
		json_object *v = json_member(variants, s->job->variants[i].name);
		if (!v)
			continue;
		const struct variant_state *st = &s->v[i];
		if (st->not_built) {
			json_object_object_add(v, "not_built", json_object_new_boolean(1));
			json_object_object_add(v, "runs", json_object_new_array());
		}
		if (st->skipped > 0) {
			json_object_object_add(v, "skipped_runs", json_object_new_int(st->skipped));
			json_object_object_add(v, "skipped_reason",
					       json_object_new_string(st->reason));
		}
	}
}
