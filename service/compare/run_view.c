/* See run_view.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compare/run_view.h"

int run_view_read(json_object *runs, const char *what, struct run_view *ret, struct sl_error *err)
{
	size_t n = json_object_is_type(runs, json_type_array) ? json_object_array_length(runs) : 0;
	if (n > RUN_VIEW_MAX_RUNS)
		return error_set(err, ERR_INVALID, 0, "%s has %zu runs, more than the %d allowed.",
				 what, n, RUN_VIEW_MAX_RUNS);
	struct run_view v = {.runs = calloc(n ? n : 1, sizeof(*v.runs))};
	if (!v.runs)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory reading %s's runs.",
				 what);
	for (; v.n < n; v.n++) {
		int r = model_run_read(json_object_array_get_idx(runs, v.n), &v.runs[v.n], err);
		if (r < 0) {
			error_prefix(err, "%s, run %zu", what, v.n);
			run_view_free(&v);
			return r;
		}
	}
	*ret = v;
	return 0;
}

void run_view_free(struct run_view *v)
{
	for (size_t i = 0; v->runs && i < v->n; i++)
		model_run_free(&v->runs[i]);
	free(v->runs);
	*v = (struct run_view){0};
}

bool run_view_ok(const struct model_run *run)
{
	return run->status && strcmp(run->status, "ok") == 0;
}

const struct model_workload *run_view_ok_workload(const struct model_run *run, const char *name)
{
	const struct model_workload *w = model_run_workload(run, name);
	return w && (!w->status || strcmp(w->status, "ok") == 0) ? w : NULL;
}
