/* The agent's frames, checked before a run record reads them. See
 * agent_frames.h; the limits are in docs/contracts.md section 2. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/agent_frames.h"
#include "util/json_get.h"

/* Each item of the array member path.key is a string of at most
 * max_bytes bytes. */
static void check_strings(struct json_reader *r, json_object *o, const char *path, const char *key,
			  size_t max_items, size_t max_bytes)
{
	json_object *a = NULL;
	if (json_get_array(r, o, path, key, false, max_items, &a) != 0)
		return;
	char full[JSON_PATH_MAX];
	snprintf(full, sizeof(full), "%s.%s", path, key);
	const char *s;
	for (size_t i = 0; i < json_object_array_length(a); i++)
		if (json_item_string(r, a, full, i, max_bytes, &s, NULL) < 0)
			return;
}

static void check_sched_ext(struct json_reader *r, json_object *payload)
{
	json_object *scx = NULL;
	if (json_get_object(r, payload, "payload", "sched_ext", false, &scx) != 0)
		return;
	static const char *const names[] = {"scheduler", "state", "ops", "state_end"};
	static const char *const texts[] = {"exit_reason", "loader_exit", "error"};
	const char *s;
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		json_get_string(r, scx, "payload.sched_ext", names[i], false, AGENT_NAME_MAX_BYTES,
				&s, NULL);
	for (size_t i = 0; i < ELEMENTSOF(texts); i++)
		json_get_string(r, scx, "payload.sched_ext", texts[i], false, AGENT_ERROR_MAX_BYTES,
				&s, NULL);
	int64_t ms;
	json_get_int(r, scx, "payload.sched_ext", "enable_ms", false, 0, INT32_MAX, &ms);
}

static void check_topology(struct json_reader *r, json_object *payload)
{
	json_object *t = NULL;
	if (json_get_object(r, payload, "payload", "topology", false, &t) != 0)
		return;
	static const char *const counts[] = {"cpus", "sockets", "cores", "threads"};
	int64_t n;
	for (size_t i = 0; i < ELEMENTSOF(counts); i++)
		json_get_int(r, t, "payload.topology", counts[i], false, 0, 4096, &n);
	check_strings(r, t, "payload.topology", "sched_domains", AGENT_LIST_MAX,
		      AGENT_NAME_MAX_BYTES);
	json_object *numa = NULL;
	if (json_get_array(r, t, "payload.topology", "numa", false, AGENT_LIST_MAX, &numa) != 0)
		return;
	for (size_t i = 0; i < json_object_array_length(numa); i++) {
		char path[JSON_PATH_MAX];
		snprintf(path, sizeof(path), "payload.topology.numa[%zu]", i);
		json_object *node = json_item(numa, i);
		if (!json_object_is_type(node, json_type_object)) {
			json_reader_fail(r, path, "is %s, not an object", json_type_phrase(node));
			return;
		}
		const char *s;
		json_get_int(r, node, path, "node", true, 0, 1023, &n);
		json_get_string(r, node, path, "cpus", true, 256, &s, NULL);
		json_get_int(r, node, path, "memory_kb", false, 0, INT64_C(1) << 50, &n);
	}
}

int agent_summary_check(json_object *payload, const char *what, struct sl_error *err)
{
	struct json_reader r = JSON_READER(what, err);
	if (!json_object_is_type(payload, json_type_object))
		return json_reader_fail(&r, "payload", "is %s, not an object",
					json_type_phrase(payload));
	check_strings(&r, payload, "payload", "errors", AGENT_ERRORS_MAX, AGENT_ERROR_MAX_BYTES);
	static const char *const sections[] = {"features", "tunables", "cgroups"};
	for (size_t i = 0; i < ELEMENTSOF(sections); i++) {
		char path[JSON_PATH_MAX];
		json_object *sec = NULL;
		snprintf(path, sizeof(path), "payload.%s", sections[i]);
		if (json_get_object(&r, payload, "payload", sections[i], false, &sec) == 0)
			check_strings(&r, sec, path, "errors", AGENT_ERRORS_MAX,
				      AGENT_ERROR_MAX_BYTES);
		if (i == 0 && sec)
			check_strings(&r, sec, path, "applied", AGENT_LIST_MAX,
				      AGENT_NAME_MAX_BYTES);
	}
	const char *s;
	json_get_string(&r, payload, "payload", "uname", false, AGENT_UNAME_MAX_BYTES, &s, NULL);
	json_get_string(&r, payload, "payload", "taskstats_error", false, AGENT_ERROR_MAX_BYTES, &s,
			NULL);
	check_sched_ext(&r, payload);
	check_topology(&r, payload);
	return r.failed;
}

int agent_workload_check(json_object *payload, size_t n_workloads, const char *what,
			 struct sl_error *err)
{
	struct json_reader r = JSON_READER(what, err);
	if (!json_object_is_type(payload, json_type_object))
		return json_reader_fail(&r, "payload", "is %s, not an object",
					json_type_phrase(payload));
	int64_t n;
	bool b;
	const char *s;
	if (n_workloads == 0)
		return json_reader_fail(&r, "payload", "is a workload's, and the job has none");
	json_get_int(&r, payload, "payload", "index", true, 0, (int64_t)n_workloads - 1, &n);
	json_get_int(&r, payload, "payload", "exit_code", false, INT32_MIN, INT32_MAX, &n);
	json_get_int(&r, payload, "payload", "signal", false, 0, 128, &n);
	json_get_bool(&r, payload, "payload", "timed_out", false, &b);
	json_get_string(&r, payload, "payload", "error", false, AGENT_ERROR_MAX_BYTES, &s, NULL);
	static const char *const texts[] = {"stdout", "stderr", "json_file", "schedstat_before",
					    "schedstat_after"};
	for (size_t i = 0; i < ELEMENTSOF(texts); i++)
		json_get_string(&r, payload, "payload", texts[i], false, AGENT_TEXT_MAX_BYTES, &s,
				NULL);
	json_object *o;
	json_get_object(&r, payload, "payload", "tasks_rusage", false, &o);
	json_get_object(&r, payload, "payload", "tasks_delay", false, &o);
	return r.failed;
}

int agent_frames_read(json_object *frames, size_t n_workloads, struct agent_frames *af,
		      struct sl_error *err)
{
	*af = (struct agent_frames){.n_workloads = n_workloads};
	if (n_workloads) {
		af->workloads = calloc(n_workloads, sizeof(*af->workloads));
		if (!af->workloads) {
			af->n_workloads = 0;
			return error_set(err, ERR_INTERNAL, ENOMEM,
					 "Out of memory reading the agent's frames.");
		}
	}
	int first = 0;
	size_t n =
	    json_object_is_type(frames, json_type_array) ? json_object_array_length(frames) : 0;
	for (size_t i = 0; i < n; i++) {
		json_object *f = json_item(frames, i);
		json_object *kind = json_member(f, "kind");
		const char *k =
		    json_object_is_type(kind, json_type_string) ? json_object_get_string(kind) : "";
		json_object *payload = json_member(f, "payload");
		bool is_summary = strcmp(k, "summary") == 0;
		if ((is_summary && af->summary) || (!is_summary && strcmp(k, "workload") != 0))
			continue;
		char what[96];
		struct sl_error e = {0};
		int r;
		if (is_summary) {
			snprintf(what, sizeof(what), "agent's summary frame");
			r = agent_summary_check(payload, what, &e);
		} else {
			snprintf(what, sizeof(what),
				 "agent's workload frame (frame %zu of the run)", i + 1);
			r = agent_workload_check(payload, n_workloads, what, &e);
		}
		if (r < 0) {
			if (!first && err)
				*err = e;
			if (!first)
				first = r;
			continue;
		}
		if (is_summary) {
			af->summary = payload;
			continue;
		}
		size_t idx = (size_t)json_object_get_int64(json_member(payload, "index"));
		if (!af->workloads[idx])
			af->workloads[idx] = payload;
	}
	return first;
}

void agent_frames_done(struct agent_frames *af)
{
	free(af->workloads);
	*af = (struct agent_frames){0};
}
