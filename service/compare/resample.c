/* Pools of stored runs, draws from them and the Clopper-Pearson interval
 * (resample.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "compare/resample.h"
#include "compare/result_model.h"
#include "job/suite.h"
#include "util/error.h"
#include "util/macro.h"
#include "util/json.h"
#include "util/json_get.h"

static int pool_add(struct resample_pool *p, json_object *run)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		json_object **n = realloc(p->runs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->runs = n;
		p->cap = cap;
	}
	p->runs[p->n++] = run;
	return 0;
}

static bool kept(const struct resample_keep *keep, size_t n, const char *w, const char *m)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(keep[i].workload, w) == 0 && (!m || strcmp(keep[i].metric, m) == 0))
			return true;
	return false;
}

/* Drops the details, and with keep the workloads and metrics it does not
 * name, from one run's workloads. The run is read through the model
 * (compare/result_model.h) for its workloads' names and metrics; the
 * document is what is pruned, as the pool hands out copies of it. A run
 * record that does not read is -EINVAL: results reach here parsed strictly
 * (resample_load_results()), so it is a caller's hand-made one. */
static int prune(json_object *run, const struct resample_keep *keep, size_t n_keep)
{
	struct model_run mr;
	struct sl_error err = {0};
	if (model_run_read(run, &mr, &err) < 0)
		return -EINVAL;
	/* the model's workloads are the array's items, index for index */
	json_object *wls = json_member_array(run, "workloads");
	for (size_t w = mr.n_workloads; w-- > 0;) {
		const struct model_workload *wl = &mr.workloads[w];
		/* wl borrows from the item: nothing of it is read after a delete */
		json_object_object_del(json_object_array_get_idx(wls, w), "details");
		if (!n_keep)
			continue;
		if (!wl->name || !kept(keep, n_keep, wl->name, NULL)) {
			json_object_array_del_idx(wls, w, 1);
			continue;
		}
		if (!wl->metrics)
			continue;
		/* Collect first: deleting while iterating a json-c object is not safe. */
		const char *drop[256];
		size_t n_drop = 0;
		json_object_object_foreach(wl->metrics, key, val)
		{
			(void)val;
			if (!kept(keep, n_keep, wl->name, key) && n_drop < 256)
				drop[n_drop++] = key;
		}
		for (size_t i = 0; i < n_drop; i++)
			json_object_object_del(wl->metrics, drop[i]);
	}
	model_run_free(&mr);
	return 0;
}

int resample_pool_add(struct resample_pool *p, json_object *result, bool baseline,
		      const struct resample_keep *keep, size_t n_keep)
{
	struct model_result m;
	if (model_result_read(result, &m, NULL) < 0)
		return -EINVAL;
	const char *bname = json_member_string(m.job, "baseline");
	int k = bname && m.n_variants > 0 ? 0 : -EINVAL;
	for (size_t v = 0; k == 0 && v < m.n_variants; v++) {
		if ((strcmp(m.variants[v].name, bname) == 0) != baseline)
			continue;
		/* the pool holds the documents: prune() edits them, and nothing of
		 * the model is read after that */
		for (size_t i = 0; k == 0 && i < m.variants[v].n_runs; i++) {
			json_object *run = m.variants[v].runs[i].doc;
			if (prune(run, keep, n_keep) < 0)
				k = -EINVAL;
			else if (pool_add(p, run) < 0)
				k = -ENOMEM;
		}
	}
	model_result_free(&m);
	return k;
}

void resample_pool_free(struct resample_pool *p)
{
	free(p->runs);
	*p = (struct resample_pool){0};
}

json_object *resample_draw(const struct resample_pool *p, gsl_rng *rng, const char *vname, int r)
{
	json_object *copy = NULL;
	if (json_object_deep_copy(p->runs[gsl_rng_uniform_int(rng, p->n)], &copy, NULL) < 0)
		return NULL;
	char key[64];
	snprintf(key, sizeof(key), "%s#%d", vname, r);
	json_object_object_add(copy, "key", json_object_new_string(key));
	json_object_object_add(copy, "repeat", json_object_new_int(r));
	return copy;
}

int resample_load_results(const char *dir, const char *kind, int hogs, json_object **out, int cap)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	char suffix[32];
	snprintf(suffix, sizeof(suffix), "-hog%d.result.json", hogs);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < cap) {
		size_t len = strlen(e->d_name), sl = strlen(suffix), kl = strlen(kind);
		if (len <= sl + kl || strncmp(e->d_name, kind, kl) != 0 ||
		    strcmp(e->d_name + len - sl, suffix) != 0)
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		json_object *r = NULL;
		struct sl_error err = {0};
		struct model_result m;
		/* A stored result is read back strictly once (compare/result_model.h),
		 * so a damaged file is named here, not met halfway through a replay. */
		if (json_read_file_strict(path, 0, "result file", &r, &err) < 0 ||
		    model_result_parse(r, &m, &err) < 0) {
			fprintf(stderr, "%s: %s (left out)\n", e->d_name, err.message);
			json_object_put(r);
			continue;
		}
		model_result_free(&m);
		out[n++] = r;
	}
	closedir(d);
	return n;
}

static bool has_gate(json_object *gates, const char *w, const char *m)
{
	for (size_t i = 0; i < json_object_array_length(gates); i++) {
		json_object *g = json_object_array_get_idx(gates, i);
		const char *gw = json_member_string(g, "workload");
		const char *gm = json_member_string(g, "metric");
		if (gw && gm && strcmp(gw, w) == 0 && strcmp(gm, m) == 0)
			return true;
	}
	return false;
}

/* Today's default gates of workload w, except on a metric a gate the job
 * names itself already covers (that one wins, as at expansion). */
static void add_defaults(json_object *w, json_object *gates)
{
	_cleanup_json_ json_object *fresh = json_object_new_array();
	suite_add_default_gates(w, fresh);
	for (size_t i = 0; i < json_object_array_length(fresh); i++) {
		json_object *g = json_object_array_get_idx(fresh, i);
		const char *gw = json_member_string(g, "workload");
		const char *gm = json_member_string(g, "metric");
		if (gw && gm && !has_gate(gates, gw, gm))
			json_object_array_add(gates, json_object_get(g));
	}
}

json_object *resample_job_json(json_object *stored, const char *workload, int min, int max)
{
	json_object *job = NULL;
	if (json_object_deep_copy(stored, &job, NULL) < 0)
		return NULL;
	json_object *wls = json_object_new_array(), *gates = json_object_new_array();
	json_object *old_wls = json_member_array(job, "workloads");
	json_object *old_gates = json_member_array(job, "gates");
	bool defaults = false;
	for (size_t i = 0; old_gates && i < json_object_array_length(old_gates); i++) {
		json_object *g = json_object_array_get_idx(old_gates, i);
		const char *gw = json_member_string(g, "workload");
		if (json_member_true(g, "default")) {
			defaults = true;
			continue;
		}
		if (!workload || (gw && strcmp(gw, workload) == 0))
			json_object_array_add(gates, json_object_get(g));
	}
	for (size_t i = 0; old_wls && i < json_object_array_length(old_wls); i++) {
		json_object *w = json_object_array_get_idx(old_wls, i);
		const char *name = json_member_string(w, "name");
		if (workload && (!name || strcmp(name, workload) != 0))
			continue;
		json_object_array_add(wls, json_object_get(w));
		if (defaults)
			add_defaults(w, gates);
	}
	json_object_object_add(job, "workloads", wls);
	json_object_object_add(job, "gates", gates);
	json_object *rep = json_object_new_object();
	json_object_object_add(rep, "min", json_object_new_int(min));
	json_object_object_add(rep, "max", json_object_new_int(max));
	json_object_object_add(job, "repeat", rep);
	return job;
}

/* The p in [0, 1] where f(p) crosses level, f monotone, by bisection: GSL's
 * inverse beta does not converge for x close to n. */
static double bisect(double (*f)(int, int, double), int x, int n, double level, bool increasing)
{
	double lo = 0, hi = 1;
	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2;
		if ((f(x, n, mid) < level) == increasing)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

static double binom_le(int x, int n, double p) /* P(X <= x) */
{
	return gsl_cdf_binomial_P((unsigned)x, p, (unsigned)n);
}

static double binom_ge(int x, int n, double p) /* P(X >= x) */
{
	return x <= 0 ? 1.0 : gsl_cdf_binomial_Q((unsigned)(x - 1), p, (unsigned)n);
}

void resample_cp95(int x, int n, double ret[2])
{
	ret[0] = x <= 0 || n <= 0 ? 0.0 : 100 * bisect(binom_ge, x, n, 0.025, true);
	ret[1] = x >= n || n <= 0 ? 100.0 : 100 * bisect(binom_le, x, n, 0.025, false);
}
