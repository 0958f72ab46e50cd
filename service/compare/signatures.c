/* Kernel bug signatures across runs: see signatures.h.
 *
 * Runs are read through the result model (compare/result_model.h), which
 * type-checks every member, and the signatures are built as model structs
 * and emitted through it: their strings borrow from the runs, which the
 * caller's variants object keeps alive until the emitted copy is made. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/result_model.h"
#include "compare/signatures.h"
#include "util/json.h"
#include "util/json_get.h"

struct collector {
	struct model_signature *sigs; /* SIGNATURES_MAX of them */
	size_t n;
	int more; /* reports past SIGNATURES_MAX */
};

static void set(struct model_signature *s, const char *name)
{
	model_set(MODEL_SIGNATURE, &s->has, name);
}

static bool has_id(json_object *ids, const char *id)
{
	for (size_t i = 0; i < json_object_array_length(ids); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(ids, i)), id) == 0)
			return true;
	return false;
}

/* The signature of ev (which has one) in c, or a new one first seen in run
 * of variant vname; NULL past SIGNATURES_MAX or out of memory. */
static struct model_signature *entry_for(struct collector *c, const struct model_kernel_event *ev,
					 const char *vname, const struct model_run *run)
{
	const struct model_signature_ref *ref = &ev->signature;
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->sigs[i].id, ref->id) == 0)
			return &c->sigs[i];
	if (c->n >= SIGNATURES_MAX)
		return NULL;
	struct model_signature *s = &c->sigs[c->n];
	*s = (struct model_signature){.id = ref->id, .kind = ref->kind, .title = ref->title};
	if (!(s->variants = json_object_new_object()))
		return NULL;
	c->n++;
	set(s, "id");
	set(s, "kind");
	set(s, "title");
	if (ref->location) {
		s->location = ref->location;
		set(s, "location");
	}
	set(s, "runs");
	set(s, "reports");
	set(s, "variants");
	set(s, "first");
	struct model_signature_first *f = &s->first;
	f->variant = vname;
	model_set(MODEL_SIGNATURE_FIRST, &f->has, "variant");
	if (run->key) {
		f->key = run->key;
		model_set(MODEL_SIGNATURE_FIRST, &f->has, "key");
	}
	/* an older writer's name for the key: not in the schema, kept in extra */
	if ((f->run_id = json_member_string(run->extra, "run_id")))
		model_set(MODEL_SIGNATURE_FIRST, &f->has, "run_id");
	f->excerpt = ev->excerpt ? ev->excerpt : "";
	model_set(MODEL_SIGNATURE_FIRST, &f->has, "excerpt");
	return s;
}

/* Counts run's events into c and names its signatures in the run document
 * (a new "signatures" array of ids). */
static int collect_run(struct collector *c, json_object *run_doc, const char *vname)
{
	struct model_run run;
	/* a record that does not read as a run has no events to count */
	if (model_run_read(run_doc, &run, NULL) < 0)
		return 0;
	json_object *ids = json_object_new_array();
	if (!ids) {
		model_run_free(&run);
		return -ENOMEM;
	}
	for (size_t i = 0; i < run.n_kernel_events; i++) {
		const struct model_kernel_event *ev = &run.kernel_events[i];
		if (!ev->signature.id || !ev->signature.title)
			continue;
		struct model_signature *s = entry_for(c, ev, vname, &run);
		if (!s) {
			c->more++;
			continue;
		}
		s->reports++;
		if (has_id(ids, s->id))
			continue;
		json_object_array_add(ids, json_object_new_string(s->id));
		s->runs++;
		json_object_object_add(
		    s->variants, vname,
		    json_object_new_int(json_member_int(s->variants, vname, 0) + 1));
	}
	model_run_free(&run);
	json_object_object_add(run_doc, "signatures", ids);
	return 0;
}

/* in_baseline and new_in of every signature, and the count of the ones
 * left out on the last. */
static int finish(struct collector *c, const char *baseline)
{
	for (size_t i = 0; i < c->n; i++) {
		struct model_signature *s = &c->sigs[i];
		s->in_baseline = json_member_int(s->variants, baseline, 0) > 0;
		if (!(s->new_in = json_object_new_array()))
			return -ENOMEM;
		json_object_object_foreach(s->variants, name, count)
		{
			(void)count;
			if (!s->in_baseline && strcmp(name, baseline) != 0)
				json_object_array_add(s->new_in, json_object_new_string(name));
		}
		set(s, "in_baseline");
		set(s, "new_in");
	}
	if (c->more > 0 && c->n > 0) {
		c->sigs[c->n - 1].more = c->more;
		set(&c->sigs[c->n - 1], "more");
	}
	return 0;
}

json_object *signatures_collect(json_object *variants, const char *baseline)
{
	struct collector c = {.sigs = calloc(SIGNATURES_MAX, sizeof(*c.sigs))};
	json_object *all = NULL;
	int k = c.sigs ? 0 : -ENOMEM;
	if (k == 0 && json_object_is_type(variants, json_type_object)) {
		json_object_object_foreach(variants, vname, v)
		{
			json_object *runs = json_member_array(v, "runs");
			size_t n = runs ? json_object_array_length(runs) : 0;
			for (size_t r = 0; k == 0 && r < n; r++)
				k = collect_run(&c, json_object_array_get_idx(runs, r), vname);
		}
	}
	if (k == 0)
		k = finish(&c, baseline);
	if (k == 0)
		all = json_object_new_array_ext((int)c.n);
	for (size_t i = 0; all && i < c.n; i++) {
		json_object *o = model_signature_emit(&c.sigs[i]);
		if (!o || json_object_array_add(all, o) != 0) {
			json_object_put(o);
			json_object_put(all);
			all = NULL;
		}
	}
	for (size_t i = 0; c.sigs && i < c.n; i++) {
		json_object_put(c.sigs[i].variants);
		json_object_put(c.sigs[i].new_in);
	}
	free(c.sigs);
	return all;
}

int signatures_gate(json_object *signatures, const char *baseline, json_object *reasons,
		    struct sl_error *err)
{
	struct model_signature *sigs = NULL;
	size_t n_sigs = 0;
	int k = model_signatures_parse(signatures, &sigs, &n_sigs, err);
	if (k < 0)
		return k;
	int n = 0;
	for (size_t i = 0; i < n_sigs; i++) {
		const struct model_signature *s = &sigs[i];
		for (size_t j = 0; j < json_object_array_length(s->new_in); j++) {
			const char *vname = json_object_get_string(json_item(s->new_in, j));
			char buf[1200];
			snprintf(
			    buf, sizeof(buf),
			    "Variant '%s': kernel bug '%s' (%s%s%s) in %d run(s), never in the "
			    "baseline '%s' [signature %s].",
			    vname, s->title, s->kind, s->location ? ", " : "",
			    s->location ? s->location : "", json_member_int(s->variants, vname, 0),
			    baseline, s->id);
			json_object_array_add(reasons, json_object_new_string(buf));
			n++;
		}
	}
	model_signatures_free(sigs, n_sigs);
	return n;
}
