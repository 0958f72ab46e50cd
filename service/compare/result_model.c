/* The result document as C types. See result_model.h.
 *
 * Each type is a table of its fields (name, kind, whether null is allowed,
 * whether required, where the value sits in the struct): one generic
 * reader and one generic writer walk it, so a field the schema gains is one
 * table line, and the unit test holds the tables to the schema. The typed
 * children (a run's workloads, a variant's runs, the result's variants and
 * comparisons) are parsed and emitted by their own type's functions. */
#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/result_model.h"
#include "util/json_get.h"

enum kind {
	K_STRING,
	K_INT,
	K_NUMBER,
	K_BOOL,
	K_OBJECT,
	K_ARRAY,
	K_ANY,	 /* one of several JSON types (a const, a oneOf): kept as it is */
	K_CHILD, /* typed children, parsed and emitted by the type's own code */
};

struct field {
	const char *name;
	enum kind kind;
	bool nullable, required;
	size_t off;
};

#define F(type, member, kind, nullable, required)                                                  \
	{                                                                                          \
#member, kind, nullable, required, offsetof(type, member)                          \
	}

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
    F(R, kernel_events, K_ARRAY, false, false),
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
    F(T, signatures, K_ARRAY, false, false),
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

bool model_has(enum model_type type, const struct model_presence *has, const char *name)
{
	size_t n;
	const struct field *f = fields_of(type, &n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0)
			return (has->set >> i) & 1;
	return false;
}

/* A json_reader that also says whether a required member may be missing
 * (model_run_read()). Every reader this file makes is one, so read_field()
 * may look past its json_reader. */
struct model_reader {
	struct json_reader r; /* first */
	bool partial;
};

/* One field of o at path into base: 0, or the reader's errno. */
static int read_field(struct json_reader *r, json_object *o, const char *path,
		      const struct field *f, size_t i, char *base, struct model_presence *has)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(o, f->name, &v)) {
		char full[JSON_PATH_MAX];
		snprintf(full, sizeof(full), "%s%s%s", path, path[0] ? "." : "", f->name);
		bool partial = ((const struct model_reader *)r)->partial;
		return f->required && !partial ? json_reader_fail(r, full, "is missing") : 0;
	}
	if (!v) {
		if (!f->nullable) {
			char full[JSON_PATH_MAX];
			snprintf(full, sizeof(full), "%s%s%s", path, path[0] ? "." : "", f->name);
			return json_reader_fail(r, full, "is null");
		}
		has->null |= 1ull << i;
		return 0;
	}
	has->set |= 1ull << i;
	void *at = base + f->off;
	switch (f->kind) {
	case K_STRING:
		return json_get_string(r, o, path, f->name, true, MODEL_MAX_STRING, at, NULL);
	case K_INT:
		return json_get_int(r, o, path, f->name, true, INT64_MIN, INT64_MAX, at);
	case K_NUMBER:
		if (json_object_is_type(v, json_type_int))
			has->integral |= 1ull << i;
		return json_get_number(r, o, path, f->name, true, -DBL_MAX, DBL_MAX, at);
	case K_BOOL:
		return json_get_bool(r, o, path, f->name, true, at);
	case K_OBJECT:
		return json_get_object(r, o, path, f->name, true, at);
	case K_ARRAY:
		return json_get_array(r, o, path, f->name, true, MODEL_MAX_ITEMS, at);
	case K_ANY:
		*(json_object **)at = v;
		return 0;
	case K_CHILD:
		return 0;
	}
	return 0;
}

/* Every field of a type from object o at path, and the members it does not
 * know into *extra (a new object of references, or NULL when none). */
static int read_fields(struct json_reader *r, json_object *o, const char *path,
		       enum model_type type, void *base, struct model_presence *has,
		       json_object **extra)
{
	if (!json_object_is_type(o, json_type_object))
		return json_reader_fail(r, path[0] ? path : "$", "is %s, not an object",
					json_type_phrase(o));
	size_t n;
	const struct field *f = fields_of(type, &n);
	for (size_t i = 0; i < n; i++)
		if (read_field(r, o, path, &f[i], i, base, has) < 0)
			return r->failed;
	json_object_object_foreach(o, key, val)
	{
		size_t i = 0;
		while (i < n && strcmp(f[i].name, key) != 0)
			i++;
		if (i < n)
			continue;
		if (!*extra && !(*extra = json_object_new_object()))
			return -ENOMEM;
		json_object_object_add(*extra, key, json_object_get(val));
	}
	return 0;
}

/* A deep copy of v (NULL stays NULL; NULL also when out of memory). */
static json_object *copy(json_object *v)
{
	json_object *c = NULL;
	if (v && json_object_deep_copy(v, &c, NULL) != 0)
		return NULL;
	return c;
}

/* The fields of a type from base into a new object; child(i) gives a
 * K_CHILD field's value. */
static json_object *write_fields(enum model_type type, const void *base,
				 const struct model_presence *has, json_object *extra,
				 json_object *(*child)(const void *base, const char *name))
{
	json_object *o = json_object_new_object();
	if (!o)
		return NULL;
	size_t n;
	const struct field *f = fields_of(type, &n);
	for (size_t i = 0; i < n; i++) {
		const void *at = (const char *)base + f[i].off;
		json_object *v = NULL;
		if ((has->null >> i) & 1) {
			json_object_object_add(o, f[i].name, NULL);
			continue;
		}
		if (!((has->set >> i) & 1))
			continue;
		switch (f[i].kind) {
		case K_STRING:
			v = json_object_new_string(*(const char *const *)at);
			break;
		case K_INT:
			v = json_object_new_int64(*(const int64_t *)at);
			break;
		case K_NUMBER:
			v = (has->integral >> i) & 1
				? json_object_new_int64((int64_t) * (const double *)at)
				: json_object_new_double(*(const double *)at);
			break;
		case K_BOOL:
			v = json_object_new_boolean(*(const bool *)at);
			break;
		case K_OBJECT:
		case K_ARRAY:
		case K_ANY:
			v = copy(*(json_object *const *)at);
			break;
		case K_CHILD:
			v = child(base, f[i].name);
			break;
		}
		if (!v) {
			json_object_put(o);
			return NULL;
		}
		json_object_object_add(o, f[i].name, v);
	}
	if (!extra)
		return o;
	json_object_object_foreach(extra, key, val)
	{
		json_object *v = copy(val);
		if (val && !v) {
			json_object_put(o);
			return NULL;
		}
		json_object_object_add(o, key, v);
	}
	return o;
}

/* A typed array member of o at path: its items parsed by parse_item into a
 * new array of n items of size bytes each. Absent: 0 items. */
static int read_children(struct json_reader *r, json_object *o, const char *path, const char *key,
			 size_t size, void **ret, size_t *ret_n,
			 int (*parse_item)(struct json_reader *r, json_object *item,
					   const char *path, void *ret))
{
	json_object *a = NULL;
	int k = json_get_array(r, o, path, key, false, MODEL_MAX_ITEMS, &a);
	if (k != 0)
		return k < 0 ? k : 0;
	size_t n = json_object_array_length(a);
	*ret = calloc(n ? n : 1, size);
	if (!*ret)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char item[JSON_PATH_MAX];
		snprintf(item, sizeof(item), "%s%s%s[%zu]", path, path[0] ? "." : "", key, i);
		/* counted first, so a failure frees what the item holds */
		*ret_n = i + 1;
		if (parse_item(r, json_object_array_get_idx(a, i), item, (char *)*ret + i * size) <
		    0)
			return r->failed ? r->failed : -ENOMEM;
	}
	return 0;
}

static int parse_workload(struct json_reader *r, json_object *o, const char *path, void *ret)
{
	struct model_workload *w = ret;
	return read_fields(r, o, path, MODEL_WORKLOAD, w, &w->has, &w->extra);
}

static int parse_run(struct json_reader *r, json_object *o, const char *path, void *ret)
{
	struct model_run *run = ret;
	int k = read_fields(r, o, path, MODEL_RUN, run, &run->has, &run->extra);
	if (k < 0)
		return k;
	return read_children(r, o, path, "workloads", sizeof(*run->workloads),
			     (void **)&run->workloads, &run->n_workloads, parse_workload);
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
		int k = read_children(r, v, path, "runs", sizeof(*mv->runs), (void **)&mv->runs,
				      &mv->n_runs, parse_run);
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
		k = read_children(r, doc, "", "comparisons", sizeof(*ret->comparisons),
				  (void **)&ret->comparisons, &ret->n_comparisons,
				  parse_comparison);
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

static json_object *run_child(const void *base, const char *name)
{
	const struct model_run *run = base;
	(void)name; /* "workloads" */
	json_object *a = json_object_new_array_ext((int)run->n_workloads);
	for (size_t i = 0; a && i < run->n_workloads; i++) {
		const struct model_workload *w = &run->workloads[i];
		json_object *o = write_fields(MODEL_WORKLOAD, w, &w->has, w->extra, workload_child);
		if (!o || json_object_array_add(a, o) != 0) {
			json_object_put(o);
			json_object_put(a);
			return NULL;
		}
	}
	return a;
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
	o = json_object_new_array_ext((int)m->n_comparisons);
	for (size_t i = 0; o && i < m->n_comparisons; i++) {
		json_object *c = model_comparison_emit(&m->comparisons[i]);
		if (!c || json_object_array_add(o, c) != 0) {
			json_object_put(c);
			json_object_put(o);
			return NULL;
		}
	}
	return o;
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
	json_object_put(m->extra);
	json_object_put(m->doc);
	*m = (struct model_result){0};
}
