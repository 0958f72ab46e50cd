/* The result document as C types. See result_model.h.
 *
 * Each type is a table of its fields (name, kind, whether null is allowed,
 * whether required, where the value sits in the struct): one generic
 * reader and one generic writer walk it, so a field the schema gains is one
 * table line, and the unit test holds the tables to the schema. The typed
 * children (a run's workloads and kernel events, a variant's runs, the
 * result's variants, comparisons and signatures) are parsed and emitted by
 * their own type's functions; the generic reader and writer are in
 * model_fields.c, the kernel bug family in result_model_signatures.c. */
#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/result_model.h"
#include "util/json.h"
#include "util/json_get.h"

#define W struct model_workload
static const struct field workload_fields[] = {
    F(W, name, K_STRING, false, true),	   F(W, tool, K_STRING, false, true),
    F(W, status, K_STRING, false, true),   F(W, exit_code, K_INT, true, false),
    F(W, reason, K_STRING, true, false),   F(W, metrics, K_OBJECT, false, false),
    F(W, details, K_OBJECT, false, false),
};
#undef W

#define R struct model_run
static const struct field run_fields[] = {
    F(R, key, K_STRING, false, true),
    F(R, repeat, K_INT, false, true),
    F(R, status, K_STRING, false, true),
    F(R, accelerator, K_STRING, false, false),
    F(R, host, K_STRING, false, false),
    F(R, pinning, K_OBJECT, false, false),
    F(R, volumes, K_OBJECT, false, false),
    F(R, started_at, K_STRING, false, false),
    F(R, boot_seconds, K_NUMBER, true, false),
    F(R, duration_seconds, K_NUMBER, true, false),
    F(R, features_applied, K_ARRAY, false, false),
    F(R, topology, K_OBJECT, false, false),
    F(R, sched_ext, K_OBJECT, false, false),
    F(R, kernel_events, K_CHILD, false, false),
    F(R, signatures, K_ARRAY, false, false),
    F(R, console_excerpt, K_STRING, true, false),
    F(R, host_interference, K_OBJECT, true, false),
    F(R, taskstats_error, K_STRING, false, false),
    F(R, retry_of, K_OBJECT, false, false),
    F(R, noisy, K_BOOL, false, false),
    F(R, reason, K_STRING, true, false),
    F(R, workloads, K_CHILD, false, false),
};
#undef R

#define C struct model_comparison
static const struct field comparison_fields[] = {
    F(C, variant, K_STRING, false, true),
    F(C, workload, K_STRING, false, true),
    F(C, metric, K_STRING, false, true),
    F(C, baseline, K_OBJECT, false, true),
    F(C, candidate, K_OBJECT, false, true),
    F(C, change, K_NUMBER, true, true),
    F(C, change_pct, K_NUMBER, true, false),
    F(C, estimate, K_NUMBER, true, false),
    F(C, ci_level, K_NUMBER, true, false),
    F(C, ci_method, K_STRING, false, false),
    F(C, ci95, K_ARRAY, true, true),
    F(C, p_value, K_NUMBER, true, true),
    F(C, better, K_STRING, false, true),
    F(C, gated, K_BOOL, false, true),
    F(C, threshold, K_NUMBER, true, false),
    F(C, alpha, K_NUMBER, false, false),
    F(C, min_p, K_NUMBER, false, false),
    F(C, cliffs_delta, K_NUMBER, true, false),
    F(C, detectable_change, K_NUMBER, true, false),
    F(C, relative, K_BOOL, false, false),
    F(C, threshold_source, K_STRING, false, false),
    F(C, threshold_capped_from, K_NUMBER, false, false),
    F(C, aa_spread, K_NUMBER, false, false),
    F(C, verdict, K_STRING, false, true),
    F(C, undecided_reason, K_STRING, false, false),
};
#undef C

#define V struct model_variant
static const struct field variant_fields[] = {
    F(V, kernel, K_STRING, false, true),     F(V, features, K_ARRAY, false, false),
    F(V, runs, K_CHILD, false, true),	     F(V, not_built, K_ANY, false, false),
    F(V, skipped_runs, K_INT, false, false), F(V, skipped_reason, K_STRING, false, false),
};
#undef V

#define T struct model_result
static const struct field result_fields[] = {
    F(T, schema, K_ANY, false, true),
    F(T, job, K_OBJECT, false, true),
    F(T, environment, K_OBJECT, false, true),
    F(T, signatures, K_CHILD, false, false),
    F(T, kernels, K_OBJECT, false, false),
    F(T, calibration, K_ARRAY, false, false),
    F(T, repeats, K_OBJECT, false, false),
    F(T, order, K_ARRAY, false, false),
    F(T, placement, K_OBJECT, false, false),
    F(T, variants, K_CHILD, false, true),
    F(T, comparisons, K_CHILD, false, true),
    F(T, verdict, K_STRING, false, true),
    F(T, verdict_reasons, K_ARRAY, false, true),
    F(T, started_at, K_STRING, false, false),
    F(T, finished_at, K_STRING, false, false),
    F(T, attribution, K_OBJECT, false, false),
    F(T, bisection, K_OBJECT, false, false),
};
#undef T

#define E struct model_kernel_event
static const struct field kernel_event_fields[] = {
    F(E, kind, K_STRING, false, true),	   F(E, line, K_ANY, false, false),
    F(E, excerpt, K_STRING, false, false), F(E, signature, K_CHILD, false, false),
    F(E, part_of, K_INT, false, false),
};
#undef E

#define S struct model_signature_ref
static const struct field signature_ref_fields[] = {
    F(S, id, K_STRING, false, true),
    F(S, kind, K_STRING, false, true),
    F(S, title, K_STRING, false, true),
    F(S, location, K_STRING, false, false),
};
#undef S

/* In the order signatures.c has always written them. */
#define S struct model_signature
static const struct field signature_fields[] = {
    F(S, id, K_STRING, false, true),	    F(S, kind, K_STRING, false, true),
    F(S, title, K_STRING, false, true),	    F(S, location, K_STRING, false, false),
    F(S, runs, K_INT, false, true),	    F(S, reports, K_INT, false, true),
    F(S, variants, K_OBJECT, false, true),  F(S, first, K_CHILD, false, true),
    F(S, in_baseline, K_BOOL, false, true), F(S, new_in, K_ARRAY, false, true),
    F(S, more, K_INT, false, false),
};
#undef S

#define S struct model_signature_first
static const struct field signature_first_fields[] = {
    F(S, variant, K_STRING, false, true),
    F(S, key, K_STRING, false, false),
    F(S, run_id, K_STRING, false, false),
    F(S, excerpt, K_STRING, false, true),
};
#undef S

#undef F

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct field *fields_of(enum model_type type, size_t *ret_n)
{
	switch (type) {
	case MODEL_RESULT:
		*ret_n = N(result_fields);
		return result_fields;
	case MODEL_VARIANT:
		*ret_n = N(variant_fields);
		return variant_fields;
	case MODEL_RUN:
		*ret_n = N(run_fields);
		return run_fields;
	case MODEL_WORKLOAD:
		*ret_n = N(workload_fields);
		return workload_fields;
	case MODEL_COMPARISON:
		*ret_n = N(comparison_fields);
		return comparison_fields;
	case MODEL_KERNEL_EVENT:
		*ret_n = N(kernel_event_fields);
		return kernel_event_fields;
	case MODEL_SIGNATURE_REF:
		*ret_n = N(signature_ref_fields);
		return signature_ref_fields;
	case MODEL_SIGNATURE:
		*ret_n = N(signature_fields);
		return signature_fields;
	case MODEL_SIGNATURE_FIRST:
		*ret_n = N(signature_first_fields);
		return signature_first_fields;
	}
	*ret_n = 0;
	return NULL;
}

const char *model_field_name(enum model_type type, size_t i)
{
	size_t n;
	const struct field *f = fields_of(type, &n);
	return i < n ? f[i].name : NULL;
}

void model_set(enum model_type type, struct model_presence *has, const char *name)
{
	size_t n;
	const struct field *f = fields_of(type, &n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0)
			has->set |= 1ull << i;
}

bool model_has(enum model_type type, const struct model_presence *has, const char *name)
{
	size_t n;
	const struct field *f = fields_of(type, &n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0)
			return (has->set >> i) & 1;
	return false;
}

/* The generic reader and writer (model_fields.h) on a type's table. */
static int read_fields(struct json_reader *r, json_object *o, const char *path,
		       enum model_type type, void *base, struct model_presence *has,
		       json_object **extra)
{
	size_t n;
	const struct field *f = fields_of(type, &n);
	return model_read_fields(r, o, path, f, n, base, has, extra);
}

static json_object *write_fields(enum model_type type, const void *base,
				 const struct model_presence *has, json_object *extra,
				 json_object *(*child)(const void *base, const char *name))
{
	size_t n;
	const struct field *f = fields_of(type, &n);
	return model_write_fields(f, n, base, has, extra, child);
}

/* The object member key of o at path, a struct of type nested in a parsed
 * one, into base: when its field is present. */
static int parse_nested(struct json_reader *r, json_object *o, const char *path, const char *key,
			enum model_type type, void *base, struct model_presence *has,
			json_object **extra)
{
	char p[JSON_PATH_MAX];
	snprintf(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", key);
	return read_fields(r, json_member(o, key), p, type, base, has, extra);
}

static int parse_kernel_event(struct json_reader *r, json_object *o, const char *path, void *ret)
{
	struct model_kernel_event *ev = ret;
	int k = read_fields(r, o, path, MODEL_KERNEL_EVENT, ev, &ev->has, &ev->extra);
	if (k < 0 || !model_has(MODEL_KERNEL_EVENT, &ev->has, "signature"))
		return k;
	struct model_signature_ref *s = &ev->signature;
	return parse_nested(r, o, path, "signature", MODEL_SIGNATURE_REF, s, &s->has, &s->extra);
}

static int parse_signature(struct json_reader *r, json_object *o, const char *path, void *ret)
{
	struct model_signature *s = ret;
	int k = read_fields(r, o, path, MODEL_SIGNATURE, s, &s->has, &s->extra);
	if (k < 0 || !model_has(MODEL_SIGNATURE, &s->has, "first"))
		return k;
	struct model_signature_first *f = &s->first;
	return parse_nested(r, o, path, "first", MODEL_SIGNATURE_FIRST, f, &f->has, &f->extra);
}

static int read_signatures(struct json_reader *r, json_object *o, struct model_signature **ret,
			   size_t *ret_n)
{
	return model_read_children(r, o, "", "signatures", sizeof(**ret), (void **)ret, ret_n,
				   parse_signature);
}

int model_signatures_parse(json_object *a, struct model_signature **ret, size_t *ret_n,
			   struct sl_error *err)
{
	struct model_reader mr = {.r = JSON_READER("signatures", err)};
	*ret = NULL;
	*ret_n = 0;
	/* read as the member of a one-member object, so paths read signatures[i] */
	_cleanup_json_ json_object *holder = json_object_new_object();
	if (!holder || json_object_object_add(holder, "signatures", json_object_get(a)) != 0)
		return -ENOMEM;
	int k =
	    json_object_is_type(a, json_type_array)
		? read_signatures(&mr.r, holder, ret, ret_n)
		: json_reader_fail(&mr.r, "signatures", "is %s, not an array", json_type_phrase(a));
	if (k < 0) {
		if (k == -ENOMEM && !mr.r.failed)
			error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory reading signatures.");
		model_signatures_free(*ret, *ret_n);
		*ret = NULL;
		*ret_n = 0;
	}
	return k < 0 ? k : 0;
}

static json_object *no_child(const void *base, const char *name)
{
	(void)base;
	(void)name;
	return NULL;
}

static json_object *kernel_event_child(const void *base, const char *name)
{
	const struct model_signature_ref *s = &((const struct model_kernel_event *)base)->signature;
	(void)name; /* "signature" */
	return write_fields(MODEL_SIGNATURE_REF, s, &s->has, s->extra, no_child);
}

static json_object *emit_kernel_event(const void *item)
{
	const struct model_kernel_event *ev = item;
	return write_fields(MODEL_KERNEL_EVENT, ev, &ev->has, ev->extra, kernel_event_child);
}

static json_object *signature_child(const void *base, const char *name)
{
	const struct model_signature_first *f = &((const struct model_signature *)base)->first;
	(void)name; /* "first" */
	return write_fields(MODEL_SIGNATURE_FIRST, f, &f->has, f->extra, no_child);
}

json_object *model_signature_emit(const struct model_signature *s)
{
	return write_fields(MODEL_SIGNATURE, s, &s->has, s->extra, signature_child);
}

static json_object *emit_signature(const void *item)
{
	return model_signature_emit(item);
}

static void kernel_events_free(struct model_kernel_event *ev, size_t n)
{
	for (size_t i = 0; ev && i < n; i++) {
		json_object_put(ev[i].signature.extra);
		json_object_put(ev[i].extra);
	}
	free(ev);
}

void model_signatures_free(struct model_signature *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		json_object_put(s[i].first.extra);
		json_object_put(s[i].extra);
	}
	free(s);
}

static int parse_workload(struct json_reader *r, json_object *o, const char *path, void *ret)
{
	struct model_workload *w = ret;
	return read_fields(r, o, path, MODEL_WORKLOAD, w, &w->has, &w->extra);
}

static int parse_run(struct json_reader *r, json_object *o, const char *path, void *ret)
{
	struct model_run *run = ret;
	run->doc = o;
	int k = read_fields(r, o, path, MODEL_RUN, run, &run->has, &run->extra);
	if (k < 0)
		return k;
	k = model_read_children(r, o, path, "workloads", sizeof(*run->workloads),
				(void **)&run->workloads, &run->n_workloads, parse_workload);
	if (k < 0)
		return k;
	return model_read_children(r, o, path, "kernel_events", sizeof(*run->kernel_events),
				   (void **)&run->kernel_events, &run->n_kernel_events,
				   parse_kernel_event);
}

static int parse_comparison(struct json_reader *r, json_object *o, const char *path, void *ret)
{
	struct model_comparison *c = ret;
	return read_fields(r, o, path, MODEL_COMPARISON, c, &c->has, &c->extra);
}

static int parse_variants(struct json_reader *r, json_object *o, struct model_result *m)
{
	json_object *vs = NULL;
	bool partial = ((const struct model_reader *)r)->partial;
	if (json_get_object(r, o, "", "variants", !partial, &vs) != 0)
		return r->failed;
	size_t n = (size_t)json_object_object_length(vs);
	m->variants = calloc(n ? n : 1, sizeof(*m->variants));
	if (!m->variants)
		return -ENOMEM;
	json_object_object_foreach(vs, name, v)
	{
		struct model_variant *mv = &m->variants[m->n_variants++];
		char path[JSON_PATH_MAX];
		snprintf(path, sizeof(path), "variants.%s", name);
		mv->name = name;
		if (read_fields(r, v, path, MODEL_VARIANT, mv, &mv->has, &mv->extra) < 0)
			return r->failed ? r->failed : -ENOMEM;
		int k = model_read_children(r, v, path, "runs", sizeof(*mv->runs),
					    (void **)&mv->runs, &mv->n_runs, parse_run);
		if (k < 0)
			return k;
	}
	return 0;
}

static int result_read(json_object *doc, bool partial, struct model_result *ret,
		       struct sl_error *err)
{
	struct model_reader mr = {.r = JSON_READER("result document", err), .partial = partial};
	struct json_reader *r = &mr.r;
	*ret = (struct model_result){.doc = json_object_get(doc)};
	int k = read_fields(r, doc, "", MODEL_RESULT, ret, &ret->has, &ret->extra);
	if (k >= 0)
		k = parse_variants(r, doc, ret);
	if (k >= 0)
		k = model_read_children(r, doc, "", "comparisons", sizeof(*ret->comparisons),
					(void **)&ret->comparisons, &ret->n_comparisons,
					parse_comparison);
	if (k >= 0)
		k = read_signatures(r, doc, &ret->signatures, &ret->n_signatures);
	if (k < 0) {
		if (k == -ENOMEM && !r->failed)
			error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory reading a result.");
		model_result_free(ret);
		return k;
	}
	return 0;
}

static int run_read(json_object *o, bool partial, struct model_run *ret, struct sl_error *err)
{
	struct model_reader mr = {.r = JSON_READER("run record", err), .partial = partial};
	*ret = (struct model_run){0};
	int k = parse_run(&mr.r, o, "", ret);
	if (k < 0) {
		if (k == -ENOMEM && !mr.r.failed)
			error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory reading a run record.");
		model_run_free(ret);
	}
	return k < 0 ? k : 0;
}

int model_result_parse(json_object *doc, struct model_result *ret, struct sl_error *err)
{
	return result_read(doc, false, ret, err);
}

int model_result_read(json_object *doc, struct model_result *ret, struct sl_error *err)
{
	return result_read(doc, true, ret, err);
}

int model_run_parse(json_object *o, struct model_run *ret, struct sl_error *err)
{
	return run_read(o, false, ret, err);
}

int model_run_read(json_object *o, struct model_run *ret, struct sl_error *err)
{
	return run_read(o, true, ret, err);
}

const struct model_workload *model_run_workload(const struct model_run *run, const char *name)
{
	for (size_t i = 0; run && name && i < run->n_workloads; i++)
		if (run->workloads[i].name && strcmp(run->workloads[i].name, name) == 0)
			return &run->workloads[i];
	return NULL;
}

static json_object *workload_child(const void *base, const char *name)
{
	(void)base;
	(void)name;
	return NULL; /* a workload has no typed children */
}

static json_object *emit_workload(const void *item)
{
	const struct model_workload *w = item;
	return write_fields(MODEL_WORKLOAD, w, &w->has, w->extra, workload_child);
}

static json_object *run_child(const void *base, const char *name)
{
	const struct model_run *run = base;
	if (strcmp(name, "kernel_events") == 0)
		return model_write_children(run->kernel_events, run->n_kernel_events,
					    sizeof(*run->kernel_events), emit_kernel_event);
	return model_write_children(run->workloads, run->n_workloads, sizeof(*run->workloads),
				    emit_workload);
}

json_object *model_run_emit(const struct model_run *run)
{
	return write_fields(MODEL_RUN, run, &run->has, run->extra, run_child);
}

static json_object *variant_child(const void *base, const char *name)
{
	const struct model_variant *v = base;
	(void)name; /* "runs" */
	json_object *a = json_object_new_array_ext((int)v->n_runs);
	for (size_t i = 0; a && i < v->n_runs; i++) {
		json_object *o = model_run_emit(&v->runs[i]);
		if (!o || json_object_array_add(a, o) != 0) {
			json_object_put(o);
			json_object_put(a);
			return NULL;
		}
	}
	return a;
}

json_object *model_comparison_emit(const struct model_comparison *c)
{
	return write_fields(MODEL_COMPARISON, c, &c->has, c->extra, workload_child);
}

static json_object *emit_comparison(const void *item)
{
	return model_comparison_emit(item);
}

static json_object *result_child(const void *base, const char *name)
{
	const struct model_result *m = base;
	json_object *o = NULL;
	if (strcmp(name, "variants") == 0) {
		o = json_object_new_object();
		for (size_t i = 0; o && i < m->n_variants; i++) {
			const struct model_variant *v = &m->variants[i];
			json_object *jv =
			    write_fields(MODEL_VARIANT, v, &v->has, v->extra, variant_child);
			if (!jv || json_object_object_add(o, v->name, jv) != 0) {
				json_object_put(jv);
				json_object_put(o);
				return NULL;
			}
		}
		return o;
	}
	if (strcmp(name, "signatures") == 0)
		return model_write_children(m->signatures, m->n_signatures, sizeof(*m->signatures),
					    emit_signature);
	return model_write_children(m->comparisons, m->n_comparisons, sizeof(*m->comparisons),
				    emit_comparison);
}

json_object *model_result_emit(const struct model_result *m)
{
	return write_fields(MODEL_RESULT, m, &m->has, m->extra, result_child);
}

void model_run_free(struct model_run *run)
{
	for (size_t i = 0; run->workloads && i < run->n_workloads; i++)
		json_object_put(run->workloads[i].extra);
	free(run->workloads);
	kernel_events_free(run->kernel_events, run->n_kernel_events);
	json_object_put(run->extra);
	*run = (struct model_run){0};
}

void model_result_free(struct model_result *m)
{
	for (size_t i = 0; m->variants && i < m->n_variants; i++) {
		for (size_t j = 0; m->variants[i].runs && j < m->variants[i].n_runs; j++)
			model_run_free(&m->variants[i].runs[j]);
		free(m->variants[i].runs);
		json_object_put(m->variants[i].extra);
	}
	free(m->variants);
	for (size_t i = 0; m->comparisons && i < m->n_comparisons; i++)
		json_object_put(m->comparisons[i].extra);
	free(m->comparisons);
	model_signatures_free(m->signatures, m->n_signatures);
	json_object_put(m->extra);
	json_object_put(m->doc);
	*m = (struct model_result){0};
}
