/* The payload of a workload frame (docs/contracts.md section 2). */
#include <string.h>

#include "agent/util.h"
#include "agent/workload_frame.h"

json_object *strv_to_json(char *const *v, size_t n)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(arr, json_object_new_string(v[i]));
	return arr;
}

json_object *string_or_null(const char *data, size_t len)
{
	_cleanup_free_ char *clean = NULL;

	if (!data)
		return NULL;
	clean = agent_utf8_clean(data, len);
	return json_object_new_string_len(clean, (int)len);
}

void schedstat_read(const char *root, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *path = agent_path(root, "/proc/schedstat");
	if (agent_read_file(path, SCHEDSTAT_MAX, ret, ret_len) < 0)
		*ret = NULL, *ret_len = 0;
}

/* The workload frame's payload; keep caps the captured text (0: all). */
json_object *workload_json(size_t index, const struct plan_workload *w,
			   const struct run_result *res, const char *json_file, size_t json_len,
			   const char *error, size_t keep, const struct schedstat_snap *ss)
{
	json_object *o = json_object_new_object();
	size_t out_len = res->out_len, err_len = res->err_len;
	const char *out = res->out, *err = res->err;
	bool out_trunc = res->out_truncated, err_trunc = res->err_truncated;

	/* keep the tail: a workload's result JSON comes last */
	if (keep && out_len > keep) {
		out += out_len - keep;
		out_len = keep;
		out_trunc = true;
	}
	if (keep && err_len > keep) {
		err += err_len - keep;
		err_len = keep;
		err_trunc = true;
	}
	json_object_object_add(o, "index", json_object_new_int64((int64_t)index));
	json_object_object_add(o, "name", json_object_new_string(w->name));
	json_object_object_add(o, "argv", strv_to_json(w->argv, w->argc));
	json_object_object_add(o, "uid", json_object_new_int64((int64_t)w->uid));
	json_object_object_add(o, "exit_code", json_object_new_int(res->exit_code));
	json_object_object_add(o, "signal", json_object_new_int(res->signal));
	json_object_object_add(o, "timed_out", json_object_new_boolean(res->timed_out));
	json_object_object_add(o, "duration_ms", json_object_new_int64(res->duration_ms));
	json_object_object_add(o, "stdout", string_or_null(out ? out : "", out ? out_len : 0));
	json_object_object_add(o, "stderr", string_or_null(err ? err : "", err ? err_len : 0));
	json_object_object_add(o, "stdout_truncated", json_object_new_boolean(out_trunc));
	json_object_object_add(o, "stderr_truncated", json_object_new_boolean(err_trunc));
	if (json_file && keep && json_len > keep * 4)
		json_file = NULL, error = error ? error : "the json_out file was too large to send";
	json_object_object_add(o, "json_file", string_or_null(json_file, json_len));
	json_object_object_add(o, "error", error && *error ? json_object_new_string(error) : NULL);
	if (ss && ss->before && ss->after) {
		json_object_object_add(o, "schedstat_before",
				       string_or_null(ss->before, ss->before_len));
		json_object_object_add(o, "schedstat_after",
				       string_or_null(ss->after, ss->after_len));
	}
	if (ss && ss->ru) {
		const struct rusage *a = &ss->ru_before, *b = &ss->ru_after;
		json_object *t = json_object_new_object();
		int64_t ut = (b->ru_utime.tv_sec - a->ru_utime.tv_sec) * 1000000LL +
			     (b->ru_utime.tv_usec - a->ru_utime.tv_usec);
		int64_t st = (b->ru_stime.tv_sec - a->ru_stime.tv_sec) * 1000000LL +
			     (b->ru_stime.tv_usec - a->ru_stime.tv_usec);
		json_object_object_add(t, "utime_us", json_object_new_int64(ut));
		json_object_object_add(t, "stime_us", json_object_new_int64(st));
		json_object_object_add(t, "nvcsw",
				       json_object_new_int64(b->ru_nvcsw - a->ru_nvcsw));
		json_object_object_add(t, "nivcsw",
				       json_object_new_int64(b->ru_nivcsw - a->ru_nivcsw));
		json_object_object_add(o, "tasks_rusage", t);
	}
	if (ss && ss->has_tasks)
		json_object_object_add(o, "tasks_delay", agent_taskstats_json(&ss->tasks));
	return o;
}
