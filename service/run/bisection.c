/* A bisection of a failing series on the statistical verdict (see
 * bisection.h; docs/testing-your-patch.md "Which patch did it"). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "run/bisect_search.h"
#include "run/bisection.h"
#include "run/prefix_step.h"
#include "util/json.h"
#include "util/macro.h"
#include "util/json_get.h"

/* The state a measure callback needs between steps. */
struct search_ctx {
	const struct series_input *in;
	struct prefix_pool *pool;
	json_object *patches, *steps;
	int builds, boots;
};

static enum bisect_verdict measure_prefix(void *userdata, size_t k)
{
	struct search_ctx *s = userdata;
	json_object *step = NULL;
	enum bisect_verdict v = BISECT_ERROR;
	if (prefix_step_run(s->in, s->pool, s->patches, k, "bisect", "bisect", &step, &v, NULL) < 0)
		return BISECT_ERROR;
	s->builds += json_object_get_boolean(json_member(step, "built"));
	s->boots += json_object_get_int(json_member(step, "boots"));
	json_object_array_add(s->steps, step);
	return v;
}

int run_bisection(const struct series_input *in, json_object *result)
{
	_cleanup_json_ json_object *patches = prefix_series_patches(in);
	size_t n = patches ? json_object_array_length(patches) : 0;

	if (n < 2 || prefix_verdict(result) != BISECT_BAD)
		return 0;
	struct prefix_pool pool;
	prefix_pool_init(&pool, result);

	struct search_ctx s = {
	    .in = in, .pool = &pool, .patches = patches, .steps = json_object_new_array()};
	prefix_say(in, "[bisect] the series of %zu %s failed: looking for the first one that fails",
		   n, in->commits ? "commits" : "patches");
	struct bisect_answer a;
	bisect_search(n, measure_prefix, &s, &a);

	json_object *b = json_object_new_object();
	if (a.error) {
		json_object_object_add(b, "first_bad", NULL);
		json_object_object_add(b, "status", json_object_new_string("error"));
	} else {
		json_object *p = json_object_array_get_idx(patches, a.first_bad - 1);
		json_object_object_add(b, "status", json_object_new_string("found"));
		json_object_object_add(b, "first_bad", json_object_new_int((int)a.first_bad));
		json_object_object_add(b, "first_bad_patch",
				       json_object_get(json_member(p, "name")));
		json_object *c =
		    in->commits ? json_object_array_get_idx(in->commits, a.first_bad - 1) : NULL;
		if (c) {
			json_object_object_add(b, "first_bad_commit",
					       json_object_get(json_member(c, "commit")));
			json_object_object_add(b, "first_bad_subject",
					       json_object_get(json_member(c, "subject")));
		}
	}
	json_object_object_add(b, "patches", json_object_new_int((int)n));
	if (in->commits)
		json_object_object_add(b, "commits", json_object_get(in->commits));
	json_object_object_add(b, "certain", json_object_new_boolean(a.certain));
	json_object_object_add(
	    b, "rule",
	    json_object_new_string("binary search over prefixes of the series, each judged by the "
				   "job's own verdict rules and repeats; a prefix that fails to "
				   "build or hangs is bad; an inconclusive prefix counts good and "
				   "makes the answer uncertain"));
	json_object_object_add(b, "steps", s.steps);
	json_object_object_add(b, "builds", json_object_new_int(s.builds));
	json_object_object_add(b, "boots", json_object_new_int(s.boots));
	json_object_object_add(result, "bisection", b);
	prefix_pool_free(&pool);
	return 0;
}
