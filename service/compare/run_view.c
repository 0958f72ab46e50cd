/* See run_view.h. */
#include <string.h>

#include "compare/run_view.h"

json_object *run_view_workload(json_object *run, const char *name)
{
	json_object *wls = NULL;
	if (!run || !name || !json_object_object_get_ex(run, "workloads", &wls) ||
	    !json_object_is_type(wls, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(wls); i++) {
		json_object *w = json_object_array_get_idx(wls, i), *n = NULL;
		if (json_object_object_get_ex(w, "name", &n) &&
		    json_object_is_type(n, json_type_string) &&
		    strcmp(json_object_get_string(n), name) == 0)
			return w;
	}
	return NULL;
}
