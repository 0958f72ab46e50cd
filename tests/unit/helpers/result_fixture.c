/* See result_fixture.h. */
#include <stdio.h>

#include "result_fixture.h"

static void put_default(json_object *o, const char *key, json_object *v)
{
	if (json_object_is_type(o, json_type_object) && !json_object_object_get_ex(o, key, NULL))
		json_object_object_add(o, key, v);
	else
		json_object_put(v);
}

void result_fixture_complete(json_object *r)
{
	put_default(r, "schema", json_object_new_string("schedlab-result/1"));
	put_default(r, "job", json_object_new_object());
	put_default(r, "environment", json_object_new_object());
	put_default(r, "variants", json_object_new_object());
	put_default(r, "comparisons", json_object_new_array());
	put_default(r, "verdict", json_object_new_string("?"));
	put_default(r, "verdict_reasons", json_object_new_array());
	json_object *variants = json_object_object_get(r, "variants");
	if (json_object_is_type(variants, json_type_object)) {
		json_object_object_foreach(variants, name, v)
		{
			put_default(v, "kernel", json_object_new_string(name));
			put_default(v, "runs", json_object_new_array());
			json_object *runs = json_object_object_get(v, "runs");
			for (size_t i = 0; json_object_is_type(runs, json_type_array) &&
					   i < json_object_array_length(runs);
			     i++) {
				json_object *run = json_object_array_get_idx(runs, i);
				char key[32];
				snprintf(key, sizeof(key), "%s-%zu", name, i);
				put_default(run, "key", json_object_new_string(key));
				put_default(run, "repeat", json_object_new_int((int)i));
				put_default(run, "status", json_object_new_string("ok"));
			}
		}
	}
	json_object *cmps = json_object_object_get(r, "comparisons");
	for (size_t i = 0;
	     json_object_is_type(cmps, json_type_array) && i < json_object_array_length(cmps);
	     i++) {
		json_object *c = json_object_array_get_idx(cmps, i);
		put_default(c, "baseline", json_object_new_object());
		put_default(c, "candidate", json_object_new_object());
		put_default(c, "change", NULL);
		put_default(c, "ci95", NULL);
		put_default(c, "p_value", NULL);
		put_default(c, "better", json_object_new_string("lower"));
		put_default(c, "gated", json_object_new_boolean(0));
		put_default(c, "verdict", json_object_new_string("unchanged"));
	}
}
