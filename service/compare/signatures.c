/* Kernel bug signatures across runs: see signatures.h. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "compare/result_model.h"
#include "compare/signatures.h"
#include "util/json_get.h"

/* Runs may come from a stored result as well as from this process: every
 * read here is type-checked (json_get.h), never a json-c assertion. */
static size_t len_of(json_object *a)
{
	return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

/* The count under k of a counter object this file builds (a signature's
 * runs per variant): 0 when there is none yet. */
static int count_of(json_object *o, const char *k)
{
	return json_object_get_int(json_member(o, k));
}

static void add_int(json_object *o, const char *k, int delta)
{
	json_object_object_add(o, k, json_object_new_int(count_of(o, k) + delta));
}

static bool array_has(json_object *a, const char *s)
{
	for (size_t i = 0; i < len_of(a); i++)
		if (strcmp(json_object_get_string(json_item(a, i)), s) == 0)
			return true;
	return false;
}

/* The signature with id in all (an id -> entry index), or a new one. */
static json_object *entry_for(json_object *all, json_object *by_id, json_object *sig,
			      json_object *event, const char *vname, const struct model_run *run)
{
	const char *id = json_member_string(sig, "id");
	json_object *idx = json_member(by_id, id);
	if (idx)
		return json_object_array_get_idx(all, (size_t)json_object_get_int(idx));
	if (json_object_array_length(all) >= SIGNATURES_MAX)
		return NULL;
	json_object *e = json_object_new_object();
	json_object_object_add(e, "id", json_object_new_string(id));
	const char *keys[] = {"kind", "title", "location"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_member_string(sig, keys[i]))
			json_object_object_add(
			    e, keys[i], json_object_new_string(json_member_string(sig, keys[i])));
	json_object_object_add(e, "runs", json_object_new_int(0));
	json_object_object_add(e, "reports", json_object_new_int(0));
	json_object_object_add(e, "variants", json_object_new_object());
	json_object *first = json_object_new_object();
	json_object_object_add(first, "variant", json_object_new_string(vname));
	if (run->key)
		json_object_object_add(first, "key", json_object_new_string(run->key));
	/* an older writer's name for the key: not in the schema, kept in extra */
	const char *run_id = json_member_string(run->extra, "run_id");
	if (run_id)
		json_object_object_add(first, "run_id", json_object_new_string(run_id));
	const char *ex = json_member_string(event, "excerpt");
	json_object_object_add(first, "excerpt", json_object_new_string(ex ? ex : ""));
	json_object_object_add(e, "first", first);
	json_object_object_add(by_id, id, json_object_new_int((int)json_object_array_length(all)));
	json_object_array_add(all, e);
	return e;
}

json_object *signatures_collect(json_object *variants, const char *baseline)
{
	json_object *all = json_object_new_array();
	json_object *by_id = json_object_new_object();
	int more = 0;
	if (!json_object_is_type(variants, json_type_object)) {
		json_object_put(by_id);
		return all;
	}
	json_object_object_foreach(variants, vname, v)
	{
		json_object *runs = json_member(v, "runs");
		for (size_t r = 0; r < len_of(runs); r++) {
			json_object *run = json_item(runs, r);
			/* a record that does not read as a run has no events to count */
			struct model_run m;
			if (model_run_read(run, &m, NULL) < 0)
				continue;
			json_object *events = m.kernel_events;
			json_object *ids = json_object_new_array();
			for (size_t i = 0; i < len_of(events); i++) {
				json_object *ev = json_item(events, i);
				json_object *sig = json_member(ev, "signature");
				if (!json_member_string(sig, "id") ||
				    !json_member_string(sig, "title"))
					continue;
				json_object *e = entry_for(all, by_id, sig, ev, vname, &m);
				if (!e) {
					more++;
					continue;
				}
				add_int(e, "reports", 1);
				const char *id = json_member_string(sig, "id");
				if (array_has(ids, id))
					continue;
				json_object_array_add(ids, json_object_new_string(id));
				add_int(e, "runs", 1);
				add_int(json_member(e, "variants"), vname, 1);
			}
			model_run_free(&m);
			json_object_object_add(run, "signatures", ids);
		}
	}
	size_t n = json_object_array_length(all);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(all, i);
		json_object *per = json_member(e, "variants");
		bool in_baseline = count_of(per, baseline) > 0;
		json_object *new_in = json_object_new_array();
		json_object_object_foreach(per, name, count)
		{
			(void)count;
			if (!in_baseline && strcmp(name, baseline) != 0)
				json_object_array_add(new_in, json_object_new_string(name));
		}
		json_object_object_add(e, "in_baseline", json_object_new_boolean(in_baseline));
		json_object_object_add(e, "new_in", new_in);
	}
	if (more > 0 && n > 0)
		json_object_object_add(json_object_array_get_idx(all, n - 1), "more",
				       json_object_new_int(more));
	json_object_put(by_id);
	return all;
}

int signatures_gate(json_object *signatures, const char *baseline, json_object *reasons)
{
	int n = 0;
	for (size_t i = 0; i < len_of(signatures); i++) {
		json_object *e = json_item(signatures, i);
		json_object *new_in = json_member(e, "new_in");
		for (size_t k = 0; k < len_of(new_in); k++) {
			const char *vname = json_object_get_string(json_item(new_in, k));
			int runs = count_of(json_member(e, "variants"), vname);
			const char *loc = json_member_string(e, "location");
			char buf[1200];
			snprintf(
			    buf, sizeof(buf),
			    "Variant '%s': kernel bug '%s' (%s%s%s) in %d run(s), never in the "
			    "baseline '%s' [signature %s].",
			    vname, json_member_string(e, "title"), json_member_string(e, "kind"),
			    loc ? ", " : "", loc ? loc : "", runs, baseline,
			    json_member_string(e, "id"));
			json_object_array_add(reasons, json_object_new_string(buf));
			n++;
		}
	}
	return n;
}
