#include <string.h>
#include <stdbool.h>

#include "run/run_plan.h"
#include "kernel/initramfs.h"

static const struct {
	const char *tool;
	const char *path;
	bool rt_tests; /* takes --json=FILE */
} tools[] = {
    {"rt-migrate-test", "/usr/bin/rt-migrate-test", true},
    {"cyclictest", "/usr/bin/cyclictest", true},
    {"share", INITRAMFS_WORKLOAD_DIR "/share", false},
    {"slice", INITRAMFS_WORKLOAD_DIR "/slice", false},
    {"crashme", INITRAMFS_WORKLOAD_DIR "/crashme", false},
};

static int tool_index(const char *tool)
{
	for (size_t i = 0; tool && i < ELEMENTSOF(tools); i++)
		if (strcmp(tools[i].tool, tool) == 0)
			return (int)i;
	return -1;
}

const char *plan_tool_path(const char *tool)
{
	int i = tool_index(tool);
	return i < 0 ? NULL : tools[i].path;
}

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* Features as the agent writes them: the variant's list, then HRTICK or
 * NO_HRTICK when the variant sets the shorthand. */
static json_object *plan_features(json_object *variant)
{
	json_object *out = json_object_new_array();
	json_object *f = get(variant, "features");
	bool has_hrtick = false;
	for (size_t i = 0; f && i < json_object_array_length(f); i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(f, i));
		if (strcmp(s, "HRTICK") == 0 || strcmp(s, "NO_HRTICK") == 0)
			has_hrtick = true;
		json_object_array_add(out, json_object_new_string(s));
	}
	json_object *h = get(variant, "hrtick");
	if (h && !has_hrtick)
		json_object_array_add(
		    out,
		    json_object_new_string(json_object_get_boolean(h) ? "HRTICK" : "NO_HRTICK"));
	return out;
}

int plan_build(json_object *spec, const char *variant, const char *run_id, json_object **ret,
	       struct sl_error *err)
{
	json_object *v = get(get(spec, "variants"), variant);
	if (!v)
		return error_set(err, ERR_INTERNAL, 0, "Variant '%s' is not in the job.", variant);
	_cleanup_json_ json_object *plan = json_object_new_object();
	json_object_object_add(plan, "run_id", json_object_new_string(run_id));
	json_object_object_add(plan, "features", plan_features(v));
	json_object *t = get(v, "sched_tunables");
	json_object_object_add(plan, "tunables", t ? json_object_get(t) : json_object_new_object());
	json_object *shares = get(v, "uid_shares");
	if (shares)
		json_object_object_add(plan, "uid_shares", json_object_get(shares));

	json_object *wls = json_object_new_array();
	json_object_object_add(plan, "workloads", wls);
	json_object *in = get(spec, "workloads");
	for (size_t i = 0; in && i < json_object_array_length(in); i++) {
		json_object *w = json_object_array_get_idx(in, i);
		const char *tool = json_object_get_string(get(w, "tool"));
		int ti = tool_index(tool);
		if (ti < 0)
			return error_set(err, ERR_INVALID, 0, "Workload tool '%s' is unknown.",
					 tool ? tool : "");
		json_object *pw = json_object_new_object();
		json_object_array_add(wls, pw);
		json_object_object_add(pw, "name", json_object_get(get(w, "name")));
		json_object *argv = json_object_new_array();
		json_object_array_add(argv, json_object_new_string(tools[ti].path));
		if (tools[ti].rt_tests) {
			char out[32], opt[48];
			snprintf(out, sizeof(out), "/tmp/w%zu.json", i);
			snprintf(opt, sizeof(opt), "--json=%s", out);
			json_object_array_add(argv, json_object_new_string(opt));
			json_object_object_add(pw, "json_out", json_object_new_string(out));
			/* maxerr_us is not passed on: the tool runs exactly as the job
			 * says, and schedlab counts inversions itself from the
			 * per-iteration start times (metrics_rtmigrate.c). */
		}
		json_object *args = get(w, "args");
		for (size_t j = 0; args && j < json_object_array_length(args); j++)
			json_object_array_add(argv,
					      json_object_get(json_object_array_get_idx(args, j)));
		json_object_object_add(pw, "argv", argv);
		json_object *to = get(w, "timeout_s");
		json_object_object_add(pw, "timeout_s",
				       json_object_new_int(to ? json_object_get_int(to) : 120));
		json_object *uid = get(w, "uid");
		json_object_object_add(pw, "uid",
				       json_object_new_int(uid ? json_object_get_int(uid) : 0));
	}
	*ret = TAKE_PTR(plan);
	return 0;
}

int plan_deadline_s(json_object *plan, bool tcg)
{
	int total = tcg ? 90 : 45;
	json_object *w = get(plan, "workloads");
	for (size_t i = 0; w && i < json_object_array_length(w); i++)
		total += json_object_get_int(get(json_object_array_get_idx(w, i), "timeout_s")) + 5;
	return total;
}
