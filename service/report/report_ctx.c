/* Reading a (possibly hostile) result: typed member access that never trusts
 * a type, and the variant order every section and chart shares. */
#include <math.h>
#include <string.h>

#include "report/report-internal.h"
#include "util/json_get.h"

bool report_is_number(json_object *v)
{
	return v &&
	       (json_object_is_type(v, json_type_int) ||
		json_object_is_type(v, json_type_double)) &&
	       isfinite(json_object_get_double(v));
}

int report_variant_color(const struct report_ctx *c, size_t i)
{
	(void)c;
	/* Palette order: blue, orange, green, purple, sky, vermillion, black;
	 * yellow (index 7) is skipped, it is too faint for lines on white. */
	return (int)(i % 7);
}

const struct model_variant *report_model_variant(const struct model_result *m, const char *name)
{
	for (size_t i = 0; name && i < m->n_variants; i++)
		if (strcmp(m->variants[i].name, name) == 0)
			return &m->variants[i];
	return NULL;
}

bool report_cmp_has(const struct model_comparison *c, const char *name)
{
	return model_has(MODEL_COMPARISON, &c->has, name);
}

bool report_run_num(const struct model_run *r, const char *name, double v, double *ret)
{
	if (!model_has(MODEL_RUN, &r->has, name) || !isfinite(v))
		return false;
	*ret = v;
	return true;
}

static void ctx_add(struct report_ctx *c, const struct model_variant *v)
{
	for (size_t i = 0; i < c->n_names; i++)
		if (c->vars[i] == v)
			return;
	if (c->n_names < REPORT_MAX_VARIANTS) {
		c->vars[c->n_names] = v;
		c->names[c->n_names++] = v->name;
	}
}

void report_ctx_init(struct report_ctx *c, const struct model_result *m)
{
	json_object *job_variants = json_member(m->job, "variants");
	const struct model_variant *base =
	    report_model_variant(m, json_member_string(m->job, "baseline"));

	memset(c, 0, sizeof(*c));
	c->m = m;
	if (!base)
		base = report_model_variant(m, "baseline");
	if (base)
		ctx_add(c, base);
	/* The job's order first, then whatever else the result holds. */
	if (json_object_is_type(job_variants, json_type_object)) {
		json_object_object_foreach(job_variants, name, val)
		{
			(void)val;
			const struct model_variant *v = report_model_variant(m, name);
			if (v)
				ctx_add(c, v);
		}
	}
	for (size_t i = 0; i < m->n_variants; i++)
		ctx_add(c, &m->variants[i]);
	c->baseline = base ? base->name : c->n_names > 0 ? c->names[0] : NULL;
}
