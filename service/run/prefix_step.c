/* One step over a series' prefixes (see prefix_step.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "run/prefix_step.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/macro.h"
#include "util/json_get.h"

static void pool_add(struct prefix_pool *pool, json_object *result)
{
	json_object *runs =
	    json_member(json_member(json_member(result, "variants"), pool->baseline), "runs");
	for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
		json_object *run = json_object_array_get_idx(runs, i);
		const char *key = json_object_get_string(json_member(run, "key"));
		if (key && !json_member(pool->runs, key))
			json_object_object_add(pool->runs, key, json_object_get(run));
	}
}

void prefix_pool_init(struct prefix_pool *pool, json_object *result)
{
	const char *baseline =
	    json_object_get_string(json_member(json_member(result, "job"), "baseline"));
	*pool = (struct prefix_pool){.runs = json_object_new_object(),
				     .baseline = baseline ? baseline : "baseline"};
	pool_add(pool, result);
}

void prefix_pool_free(struct prefix_pool *pool)
{
	json_object_put(pool->runs);
	pool->runs = NULL;
}

static json_object *pool_lookup(void *userdata, const char *run_key)
{
	struct prefix_pool *pool = userdata;
	json_object *run = json_member(pool->runs, run_key);
	if (!run)
		return NULL;
	pool->reused++;
	return json_object_get(run);
}

int prefix_count_runs(json_object *result)
{
	int n = 0;
	json_object_object_foreach(json_member(result, "variants"), name, v)
	{
		(void)name;
		json_object *runs = json_member(v, "runs");
		n += runs ? (int)json_object_array_length(runs) : 0;
	}
	return n;
}

enum bisect_verdict prefix_verdict(json_object *result)
{
	const char *v = json_object_get_string(json_member(result, "verdict"));
	if (v && strcmp(v, "pass") == 0)
		return BISECT_GOOD;
	if (v && strcmp(v, "fail") == 0)
		return BISECT_BAD;
	if (v && strcmp(v, "inconclusive") == 0)
		return BISECT_INCONCLUSIVE;
	return BISECT_ERROR;
}

static const char *verdict_word(enum bisect_verdict v)
{
	static const char *const words[] = {"pass", "fail", "inconclusive", "error"};
	return words[v];
}

void prefix_say(const struct series_input *in, const char *fmt, ...)
{
	if (!in->say)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	in->say(in->step_userdata, line);
}

json_object *prefix_gated_comparisons(json_object *cmps)
{
	json_object *out = json_object_new_array();
	for (size_t i = 0; cmps && i < json_object_array_length(cmps); i++) {
		json_object *c = json_object_array_get_idx(cmps, i), *g = json_member(c, "gated");
		if (!g || !json_object_get_boolean(g))
			continue;
		json_object *s = json_object_new_object();
		static const char *const keys[] = {"variant", "workload", "metric", "verdict",
						   "change",  "ci95",	  "p_value"};
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (json_member(c, keys[k]))
				json_object_object_add(s, keys[k],
						       json_object_get(json_member(c, keys[k])));
		json_object_array_add(out, s);
	}
	return out;
}

json_object *prefix_step_job(const struct series_input *in, json_object *patches, size_t k,
			     const char *tag)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *spec = NULL;
	json_object *expanded = NULL;
	char name[96];

	if (json_object_deep_copy(in->spec, &spec, NULL) < 0)
		return NULL;
	snprintf(name, sizeof(name), "%.50s-first-%zu",
		 json_object_get_string(json_member(spec, "name")), k);
	json_object_object_add(spec, "name", json_object_new_string(name));
	if (in->expanded) {
		/* the candidate kernel's patches: the base's own, then the first k */
		json_object *pp =
		    json_member(json_member(json_member(spec, "kernels"), "patched"), "patches");
		size_t keep = json_object_array_length(pp) - json_object_array_length(patches) + k;
		json_object_array_del_idx(pp, keep, json_object_array_length(pp) - keep);
		return TAKE_PTR(spec);
	}
	json_object *prefix = json_object_new_array();
	for (size_t i = 0; i < k; i++)
		json_object_array_add(prefix,
				      json_object_get(json_object_array_get_idx(patches, i)));
	json_object_object_add(spec, "patches", prefix);
	if (job_expand_json(spec, in->origin, in->cwd, in->limits, &expanded, &err) < 0) {
		prefix_say(in, "[%s] the job of the first %zu patches: %s", tag, k, err.message);
		return NULL;
	}
	return expanded;
}

int prefix_step_run(const struct series_input *in, struct prefix_pool *pool, json_object *patches,
		    size_t k, const char *tag, const char *dir, json_object **ret_step,
		    enum bisect_verdict *ret_verdict, json_object **ret_result)
{
	_cleanup_json_ json_object *expanded = prefix_step_job(in, patches, k, tag), *result = NULL;
	const char *last = json_object_get_string(
	    json_member(json_object_array_get_idx(patches, (size_t)k - 1), "name"));

	if (!expanded)
		return -EINVAL;
	_cleanup_free_ char *step_dir = prefix_step_dir(in, dir, k);
	if (!step_dir)
		return -ENOMEM;
	json_object *commit = in->commits ? json_object_array_get_idx(in->commits, k - 1) : NULL;
	if (commit)
		prefix_say(in, "[%s] the first %zu of %zu commits (up to %.12s %s)", tag, k,
			   json_object_array_length(patches),
			   json_object_get_string(json_member(commit, "commit")),
			   json_object_get_string(json_member(commit, "subject")));
	else
		prefix_say(in, "[%s] the first %zu of %zu patches (up to %s)", tag, k,
			   json_object_array_length(patches), last ? last : "?");
	pool->reused = 0;
	if (in->step_run(in->step_userdata, expanded, step_dir, pool_lookup, pool, &result) < 0)
		return -EIO;
	pool_add(pool, result);

	enum bisect_verdict v = prefix_verdict(result);
	json_object *step = json_object_new_object();
	json_object_object_add(step, "patches", json_object_new_int((int)k));
	json_object_object_add(step, "last_patch", json_object_new_string(last ? last : ""));
	if (commit) {
		json_object_object_add(step, "commit",
				       json_object_get(json_member(commit, "commit")));
		json_object_object_add(step, "subject",
				       json_object_get(json_member(commit, "subject")));
	}
	json_object_object_add(step, "verdict", json_object_new_string(verdict_word(v)));
	json_object_object_add(step, "uncertain",
			       json_object_new_boolean(v != BISECT_GOOD && v != BISECT_BAD));
	json_object *reasons = json_member(result, "verdict_reasons");
	json_object_object_add(step, "decided_by",
			       reasons ? json_object_get(reasons) : json_object_new_array());
	json_object_object_add(step, "comparisons",
			       prefix_gated_comparisons(json_member(result, "comparisons")));
	json_object *build =
	    json_member(json_member(json_member(result, "kernels"), "patched"), "build");
	if (build)
		json_object_object_add(step, "build", json_object_get(build));
	json_object *cached =
	    json_member(json_member(json_member(result, "kernels"), "patched"), "cached");
	json_object_object_add(
	    step, "built", json_object_new_boolean(!cached || !json_object_get_boolean(cached)));
	json_object_object_add(step, "boots",
			       json_object_new_int(prefix_count_runs(result) - pool->reused));
	json_object_object_add(step, "reused_runs", json_object_new_int(pool->reused));
	json_object_object_add(step, "job_dir", json_object_new_string(step_dir));
	*ret_step = step;
	*ret_verdict = v;
	if (ret_result)
		*ret_result = TAKE_PTR(result);
	return 0;
}

char *prefix_step_dir(const struct series_input *in, const char *dir, size_t k)
{
	char leaf[48];
	snprintf(leaf, sizeof(leaf), "%s-%zu", dir, k);
	return fs_path_join(in->job_dir, leaf);
}

json_object *prefix_series_patches(const struct series_input *in)
{
	if (!in->expanded)
		return json_object_get(json_member(in->spec, "patches"));
	json_object *kernels = json_member(in->spec, "kernels");
	json_object *bp = json_member(json_member(kernels, "base"), "patches");
	json_object *pp = json_member(json_member(kernels, "patched"), "patches");
	size_t nb = bp ? json_object_array_length(bp) : 0;
	size_t np = pp ? json_object_array_length(pp) : 0;
	if (!pp || np < nb || json_object_object_length(kernels) != 2)
		return NULL;
	json_object *out = json_object_new_array();
	for (size_t i = nb; i < np; i++)
		json_object_array_add(out, json_object_get(json_object_array_get_idx(pp, i)));
	return out;
}
