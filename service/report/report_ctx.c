/* Reading a (possibly hostile) result: typed member access that never trusts
 * a type, and the variant order every section and chart shares. */
#include <math.h>
#include <string.h>

#include "report/report-internal.h"

const char *report_str(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

bool report_num(json_object *o, const char *key, double *ret)
{
	json_object *v;
	double d;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return false;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return false;
	d = json_object_get_double(v);
	if (!isfinite(d))
		return false;
	*ret = d;
	return true;
}

json_object *report_get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

json_object *report_get_array(json_object *o, const char *key)
{
	json_object *v = report_get(o, key);

	return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

/* An object member, or NULL when absent or not an object (the foreach
 * macro must never see anything else). */
json_object *report_get_object(json_object *o, const char *key)
{
	json_object *v = report_get(o, key);

	return v && json_object_is_type(v, json_type_object) ? v : NULL;
}

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

void report_ctx_init(struct report_ctx *c, json_object *result)
{
	json_object *job = report_get(result, "job");
	json_object *job_variants = report_get(job, "variants");

	memset(c, 0, sizeof(*c));
	c->result = result;
	c->variants = report_get(result, "variants");
	c->baseline = report_str(job, "baseline");
	if (c->baseline && !report_get(c->variants, c->baseline))
		c->baseline = NULL;
	if (!c->baseline)
		c->baseline = report_get(c->variants, "baseline") ? "baseline" : NULL;
	if (c->baseline)
		c->names[c->n_names++] = c->baseline;
	/* The job's order first, then whatever else the result holds. */
	for (int pass = 0; pass < 2; pass++) {
		json_object *src = pass == 0 ? job_variants : c->variants;
		if (!src || !json_object_is_type(src, json_type_object))
			continue;
		json_object_object_foreach(src, name, val)
		{
			(void)val;
			bool seen = false;
			if (!report_get(c->variants, name))
				continue;
			for (size_t i = 0; i < c->n_names; i++)
				seen = seen || strcmp(c->names[i], name) == 0;
			if (!seen && c->n_names < REPORT_MAX_VARIANTS)
				c->names[c->n_names++] = name;
		}
	}
	if (!c->baseline && c->n_names > 0)
		c->baseline = c->names[0];
}
