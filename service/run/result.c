#include <errno.h>

#include "run/result.h"
#include "compare/compare.h"
#include "run/environment.h"

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

json_object *result_new(const struct job *job)
{
	json_object *result = json_object_new_object();
	json_object_object_add(result, "schema", json_object_new_string("schedlab.result/v1"));
	json_object_object_add(result, "job", json_object_get(job->spec));
	json_object_object_add(result, "kernels", json_object_new_object());
	return result;
}

void result_add_kernel(json_object *result, const char *name, const struct kbuild_artifact *art)
{
	json_object *meta = art->meta ? json_object_get(art->meta) : json_object_new_object();
	json_object_object_add(meta, "cached", json_object_new_boolean(art->cached));
	json_object_object_add(get(result, "kernels"), name, meta);
}

void result_set_environment(json_object *result, struct guest_host *host, const char *accelerator)
{
	json_object_object_add(result, "environment", environment_describe(host, accelerator));
}

void result_begin_runs(json_object *result, const struct job *job, const struct run_key *order,
		       size_t n)
{
	json_object_object_add(result, "order", json_object_new_array());
	result_add_order(result, order, n);
	json_object *variants = json_object_new_object();
	json_object_object_add(result, "variants", variants);
	for (size_t i = 0; i < job->n_variants; i++) {
		const struct job_variant *v = &job->variants[i];
		json_object *vo = json_object_new_object();
		json_object *features = json_object_new_array_ext((int)v->n_features);
		for (size_t f = 0; f < v->n_features; f++)
			json_object_array_add(features, json_object_new_string(v->features[f]));
		json_object_object_add(vo, "kernel", json_object_new_string(v->kernel->name));
		json_object_object_add(vo, "features", features);
		json_object_object_add(vo, "runs", json_object_new_array());
		json_object_object_add(variants, v->name, vo);
	}
}

void result_add_order(json_object *result, const struct run_key *order, size_t n)
{
	json_object *o = get(result, "order");
	for (size_t i = 0; o && i < n; i++) {
		char buf[RUN_KEY_STRLEN];
		json_object_array_add(o, json_object_new_string(run_key_format(&order[i], buf)));
	}
}

int result_add_run(json_object *result, const struct run_key *key, json_object *run)
{
	json_object *runs = get(get(get(result, "variants"), key->variant), "runs");
	if (!runs) {
		json_object_put(run);
		return -ENOENT;
	}
	json_object_array_add(runs, run);
	return 0;
}

int result_compare(json_object *result, const struct job *job, struct sl_error *err)
{
	json_object *comparisons = NULL, *reasons = NULL;
	char verdict[16];
	int rc = compare_result(job, get(result, "variants"), &comparisons, verdict, &reasons, err);
	if (rc < 0)
		return rc;
	json_object_object_add(result, "comparisons", comparisons);
	json_object_object_add(result, "verdict", json_object_new_string(verdict));
	json_object_object_add(result, "verdict_reasons", reasons);
	return 0;
}

void result_finish(json_object *result, const char *started_at, const char *finished_at)
{
	json_object_object_add(result, "started_at", json_object_new_string(started_at));
	json_object_object_add(result, "finished_at", json_object_new_string(finished_at));
}
