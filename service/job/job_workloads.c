/* A job's workloads and gates: defaults, names, argument rules, loads and
 * the default gates (split from job.c). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "job/job.h"
#include "job/job-internal.h"
#include "job/load.h"
#include "job/suite.h"
#include "job/workload_args.h"
#include "util/macro.h"

int job_run_deadline_s(json_object *workloads, bool tcg)
{
	long long total = tcg ? BOOT_ALLOWANCE_TCG_S : BOOT_ALLOWANCE_KVM_S;
	size_t n = json_object_is_type(workloads, json_type_array)
		       ? json_object_array_length(workloads)
		       : 0;
	for (size_t i = 0; i < n; i++)
		total += json_member_int(json_object_array_get_idx(workloads, i), "timeout_s",
					 JOB_DEFAULT_TIMEOUT_S) +
			 WORKLOAD_SLACK_S;
	return total > INT_MAX ? INT_MAX : (int)total;
}

int job_expand_workloads(json_object *in, json_object **ret, int *ret_seconds, struct sl_error *err)
{
	char path[128];
	_cleanup_json_ json_object *out = json_object_new_array();
	int seconds = 0;
	size_t n = json_object_array_length(in);
	for (size_t i = 0; i < n; i++) {
		json_object *w = json_object_array_get_idx(in, i);
		snprintf(path, sizeof(path), "$.workloads[%zu]", i);
		json_object *copy = NULL;
		json_object_deep_copy(w, &copy, NULL);
		json_object_array_add(out, copy);
		const char *tool = json_member_string(copy, "tool");
		if (!json_member(copy, "name"))
			json_object_object_add(copy, "name", json_object_new_string(tool));
		if (!json_member(copy, "args"))
			json_object_object_add(copy, "args", json_object_new_array());
		if (!json_member(copy, "timeout_s"))
			json_object_object_add(copy, "timeout_s",
					       json_object_new_int(JOB_DEFAULT_TIMEOUT_S));
		if (!json_member(copy, "uid"))
			json_object_object_add(copy, "uid", json_object_new_int(0));
		int r = workload_args_check(tool, json_member(copy, "args"), path, err);
		if (r < 0)
			return r;
		const char *name = json_member_string(copy, "name");
		if (!job_safe_name(name))
			return error_set_path(
			    err, ERR_INVALID, path,
			    "Workload name '%s' may hold only letters, digits and "
			    "'._-'.",
			    name);
		for (size_t j = 0; j < i; j++) {
			json_object *o = json_object_array_get_idx(out, j);
			if (strcmp(json_member_string(o, "name"), name) == 0)
				return error_set_path(err, ERR_INVALID, path,
						      "Workload name '%s' is used twice; give "
						      "each workload a distinct 'name'.",
						      name);
		}
		seconds += json_member_int(copy, "timeout_s", JOB_DEFAULT_TIMEOUT_S);
	}
	int r = job_loads_expand(out, err);
	if (r < 0)
		return r;
	*ret_seconds = seconds;
	*ret = TAKE_PTR(out);
	return 0;
}

static int check_gates(json_object *gates, json_object *workloads, struct sl_error *err)
{
	char path[128];
	for (size_t i = 0; gates && i < json_object_array_length(gates); i++) {
		json_object *g = json_object_array_get_idx(gates, i);
		const char *wl = json_member_string(g, "workload");
		snprintf(path, sizeof(path), "$.gates[%zu].workload", i);
		bool found = false;
		for (size_t j = 0; j < json_object_array_length(workloads); j++) {
			json_object *w = json_object_array_get_idx(workloads, j);
			if (wl && strcmp(json_member_string(w, "name"), wl) == 0)
				found = true;
		}
		if (!found)
			return error_set_path(err, ERR_INVALID, path,
					      "Gate %zu names workload '%s', which the job does "
					      "not run.",
					      i, wl ? wl : "");
	}
	return 0;
}

/* The gates as run: the job's own (checked against its workloads); when it
 * names none, every workload's default gates, marked "default": true
 * (suite.h), unless defaults is false (the debug suite: none); "gates": []
 * (or "gates_opt_out": true without gates, the
 * expanded form of that) opts out and gives an empty list, which the caller
 * records as "gates_opt_out": true. Defaults that come out empty are
 * recorded as "gates": [] with "gates_opt_out": false, which expands to
 * itself again (not an opt-out). */
int job_expand_gates(json_object *full, json_object *workloads, bool defaults, json_object **ret,
		     bool *ret_opted_out, struct sl_error *err)
{
	json_object *gates = json_member(full, "gates");
	json_object *opt_out = json_member(full, "gates_opt_out");
	bool opted_out =
	    json_object_is_type(opt_out, json_type_boolean) && json_object_get_boolean(opt_out);
	if (opted_out && gates && json_object_array_length(gates) > 0)
		return error_set_path(err, ERR_INVALID, "$.gates_opt_out",
				      "gates_opt_out is true but the job names %zu gate(s); "
				      "drop one or the other.",
				      json_object_array_length(gates));
	if (gates) {
		int r = check_gates(gates, workloads, err);
		if (r < 0)
			return r;
		bool said_no = json_object_is_type(opt_out, json_type_boolean) &&
			       !json_object_get_boolean(opt_out);
		*ret = json_object_get(gates);
		*ret_opted_out = json_object_array_length(gates) == 0 && !said_no;
		return 0;
	}
	json_object *out = json_object_new_array();
	/* the workloads after the first load run beside the loads */
	bool under_load = false;
	for (size_t i = 0; defaults && !opted_out && i < json_object_array_length(workloads); i++) {
		json_object *w = json_object_array_get_idx(workloads, i);
		under_load |= job_workload_is_load(w);
		suite_add_default_gates_at(w, out, under_load);
	}
	*ret = out;
	*ret_opted_out = opted_out;
	return 0;
}
