#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "run/result.h"
#include "compare/compare.h"
#include "compare/signatures.h"
#include "run/environment.h"
#include "util/json_get.h"

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
	/* a copy: the artifact's meta is the cache's, "build" is this job's */
	json_object *meta = NULL;
	if (!art->meta || json_object_deep_copy(art->meta, &meta, NULL) < 0)
		meta = json_object_new_object();
	/* the name lists are for sched_names_check(), not for the result */
	json_object_object_del(meta, "sched_features");
	json_object_object_del(meta, "sched_tunables");
	json_object_object_add(meta, "cached", json_object_new_boolean(art->cached));
	json_object *build = json_object_new_object();
	json_object_object_add(build, "status", json_object_new_string("ok"));
	json_object_object_add(meta, "build", build);
	json_object_object_add(json_member(result, "kernels"), name, meta);
}

void result_add_kernel_failed(json_object *result, const char *name, const char *source,
			      const struct sl_error *err, const struct kbuild_failure *f)
{
	json_object *k = json_object_new_object();
	if (f && f->key[0])
		json_object_object_add(k, "key", json_object_new_string(f->key));
	if (source)
		json_object_object_add(k, "source", json_object_new_string(source));
	json_object *b = json_object_new_object();
	const char *status = err->code[0] ? err->code : "build_failed";
	json_object_object_add(b, "status", json_object_new_string(status));
	json_object_object_add(b, "message", json_object_new_string(err->message));
	if (strcmp(status, "patch_does_not_apply") == 0 && f && f->patch[0])
		json_object_object_add(b, "patch", json_object_new_string(f->patch));
	if (strcmp(status, "config_option_dropped") == 0 && f && f->option[0])
		json_object_object_add(b, "option", json_object_new_string(f->option));
	json_object_object_add(b, "log_excerpt",
			       json_object_new_string(f && f->log_excerpt ? f->log_excerpt : ""));
	json_object_object_add(k, "build", b);
	json_object_object_add(json_member(result, "kernels"), name, k);
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
	json_object *o = json_member(result, "order");
	for (size_t i = 0; o && i < n; i++) {
		char buf[RUN_KEY_STRLEN];
		json_object_array_add(o, json_object_new_string(run_key_format(&order[i], buf)));
	}
}

int result_add_run(json_object *result, const struct run_key *key, json_object *run)
{
	json_object *runs =
	    json_member(json_member(json_member(result, "variants"), key->variant), "runs");
	if (!runs) {
		json_object_put(run);
		return -ENOENT;
	}
	json_object_array_add(runs, run);
	return 0;
}

_printf_(2, 3) static void add_reason(json_object *reasons, const char *fmt, ...)
{
	char buf[1600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_object_array_add(reasons, json_object_new_string(buf));
}

/* The reasons kernels that did not build give: one per variant on such a
 * kernel (contract A), and one per such kernel no variant boots. */
static void build_reasons(json_object *result, const struct job *job, json_object *reasons)
{
	json_object *kernels = json_member(result, "kernels");
	json_object_object_foreach(json_member(result, "variants"), vname, v)
	{
		if (!json_object_get_boolean(json_member(v, "not_built")))
			continue;
		const char *kname = json_member_string(v, "kernel");
		json_object *b = json_member(json_member(kernels, kname ? kname : ""), "build");
		const char *status = json_member_string(b, "status"),
			   *msg = json_member_string(b, "message");
		add_reason(reasons, "variant '%s': kernel '%s' did not build (%s): %s", vname,
			   kname ? kname : "?", status ? status : "build_failed",
			   msg ? msg : "see the job's build log.");
	}
	json_object_object_foreach(kernels, kname, k)
	{
		const char *status = json_member_string(json_member(k, "build"), "status");
		if (!status || strcmp(status, "ok") == 0)
			continue;
		bool used = false;
		for (size_t i = 0; i < job->n_variants; i++)
			if (strcmp(job->variants[i].kernel->name, kname) == 0)
				used = true;
		if (!used)
			add_reason(reasons, "kernel '%s' did not build (%s): %s", kname, status,
				   json_member_string(json_member(k, "build"), "message"));
	}
}

int result_compare(json_object *result, const struct job *job, struct sl_error *err)
{
	json_object *variants = json_member(result, "variants");
	_cleanup_json_ json_object *compared = json_object_new_object();
	_cleanup_json_ json_object *reasons = json_object_new_array();
	int candidates = 0;
	json_object_object_foreach(variants, vname, v)
	{
		if (json_object_get_boolean(json_member(v, "not_built")))
			continue;
		if (strcmp(vname, job->baseline->name) != 0)
			candidates++;
		json_object_object_add(compared, vname, json_object_get(v));
	}
	build_reasons(result, job, reasons);
	bool build_failed = json_object_array_length(reasons) > 0;
	/* Kernel bugs (docs/kernel-bugs.md): a signature a candidate shows and
	 * the baseline never does fails the job, whatever the metrics say. */
	_cleanup_json_ json_object *signatures = signatures_collect(variants, job->baseline->name);
	_cleanup_json_ json_object *sig_reasons = json_object_new_array();
	int bugs = signatures_gate(signatures, job->baseline->name, sig_reasons, err);
	if (bugs < 0)
		return bugs;
	bool kernel_bugs = bugs > 0;

	json_object *comparisons = NULL, *cmp_reasons = NULL;
	char verdict[16];
	if (build_failed && candidates == 0) {
		/* nothing was built to compare with the baseline */
		comparisons = json_object_new_array();
		snprintf(verdict, sizeof(verdict), "fail");
	} else {
		int rc =
		    compare_result_calibrated(job, compared, json_member(result, "calibration"),
					      &comparisons, verdict, &cmp_reasons, err);
		if (rc < 0)
			return rc;
		size_t n = json_object_array_length(cmp_reasons);
		/* compare_result() ends a pass with a sentence that all is well: the
		 * kernels that did not build say otherwise. */
		if ((build_failed || kernel_bugs) && strcmp(verdict, "pass") == 0 && n > 0)
			n--;
		for (size_t i = 0; i < n; i++)
			json_object_array_add(
			    reasons, json_object_get(json_object_array_get_idx(cmp_reasons, i)));
		json_object_put(cmp_reasons);
		if (build_failed)
			snprintf(verdict, sizeof(verdict), "fail");
	}
	for (size_t i = 0; i < json_object_array_length(sig_reasons); i++)
		json_object_array_add(reasons,
				      json_object_get(json_object_array_get_idx(sig_reasons, i)));
	if (kernel_bugs)
		snprintf(verdict, sizeof(verdict), "fail");
	json_object_object_foreach(variants, sname, sv)
	{
		int skipped = json_object_get_int(json_member(sv, "skipped_runs"));
		if (skipped > 0)
			add_reason(reasons, "Variant '%s': %d run(s) skipped: %s.", sname, skipped,
				   json_member_string(sv, "skipped_reason")
				       ? json_member_string(sv, "skipped_reason")
				       : "fail fast");
	}
	json_object_object_add(result, "comparisons", comparisons);
	json_object_object_add(result, "verdict", json_object_new_string(verdict));
	json_object_object_add(result, "verdict_reasons", TAKE_PTR(reasons));
	json_object_object_add(result, "signatures", TAKE_PTR(signatures));
	return 0;
}

void result_finish(json_object *result, const char *started_at, const char *finished_at)
{
	json_object_object_add(result, "started_at", json_object_new_string(started_at));
	json_object_object_add(result, "finished_at", json_object_new_string(finished_at));
}
