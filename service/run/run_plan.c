#include <string.h>
#include <stdbool.h>

#include "run/run_plan.h"
#include "job/job.h"
#include "job/sched_ext.h"
#include "job/sched_ext_source.h"
#include "kernel/initramfs.h"
#include "util/json_get.h"

/* Each tool's program in the guest and the option that makes it write its
 * results to a file the agent returns (NULL: stdout only). */
static const struct {
	const char *tool;
	const char *path;
	const char *out_opt; /* "--json=" (rt-tests) or "--yaml=" (stress-ng) */
	bool on_demand;	     /* in the initramfs only for jobs that run it */
} tools[] = {
    {"rt-migrate-test", "/usr/bin/rt-migrate-test", "--json=", false},
    {"cyclictest", "/usr/bin/cyclictest", "--json=", false},
    {"hackbench", "/usr/bin/hackbench", NULL, false},
    {"pi_stress", "/usr/bin/pi_stress", "--json=", false},
    {"pip_stress", "/usr/bin/pip_stress", NULL, false},
    {"cyclicdeadline", "/usr/bin/cyclicdeadline", "--json=", false},
    {"stress-ng", "/usr/bin/stress-ng", "--yaml=", true},
    /* Debian's linux-perf, not one built from the job's tree: `perf bench
     * sched` makes no perf_event calls, so a 6.1 perf runs the same on any
     * guest kernel (docs/workloads.md "perf-bench-sched"). */
    {"perf-bench-sched", "/usr/bin/perf", NULL, true},
    {"share", INITRAMFS_WORKLOAD_DIR "/share", NULL, false},
    {"slice", INITRAMFS_WORKLOAD_DIR "/slice", NULL, false},
    {"wakeup", INITRAMFS_WORKLOAD_DIR "/wakeup", NULL, false},
    {"burn", INITRAMFS_WORKLOAD_DIR "/burn", NULL, false},
    {"crashme", INITRAMFS_WORKLOAD_DIR "/crashme", NULL, false},
};

/* The arguments a tool's program gets before the job's own (NULL-ended). */
static const char *const *tool_prefix(const char *tool)
{
	static const char *const perf_bench_sched[] = {"bench", "sched", NULL};
	static const char *const none[] = {NULL};
	return strcmp(tool, "perf-bench-sched") == 0 ? perf_bench_sched : none;
}

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

size_t plan_initramfs_tools(const struct job *job, const char **out, size_t cap)
{
	size_t n = 0;
	for (const char *const *d = initramfs_default_tools(); *d && n + 1 < cap; d++)
		out[n++] = *d;
	for (size_t i = 0; i < ELEMENTSOF(tools); i++) {
		if (!tools[i].on_demand)
			continue;
		for (size_t w = 0; w < job->n_workloads; w++)
			if (strcmp(job->workloads[w].tool, tools[i].tool) == 0 && n + 1 < cap) {
				out[n++] = tools[i].path;
				break;
			}
	}
	out[n] = NULL;
	return n;
}

/* Features as the agent writes them: the variant's list, then HRTICK or
 * NO_HRTICK when the variant sets the shorthand. */
static json_object *plan_features(const struct job_variant *v)
{
	json_object *out = json_object_new_array();
	bool has_hrtick = false;
	for (size_t i = 0; i < v->n_features; i++) {
		const char *s = v->features[i];
		if (strcmp(s, "HRTICK") == 0 || strcmp(s, "NO_HRTICK") == 0)
			has_hrtick = true;
		json_object_array_add(out, json_object_new_string(s));
	}
	if (v->hrtick != JOB_HRTICK_DEFAULT && !has_hrtick)
		json_object_array_add(
		    out,
		    json_object_new_string(v->hrtick == JOB_HRTICK_ON ? "HRTICK" : "NO_HRTICK"));
	return out;
}

/* {name: value} of the variant's sched_tunables, in the spec's order. */
static json_object *plan_tunables(const struct job_variant *v)
{
	json_object *out = json_object_new_object();
	for (size_t i = 0; i < v->n_sched_tunables; i++)
		json_object_object_add(out, v->sched_tunables[i].name,
				       json_object_new_int64(v->sched_tunables[i].value));
	return out;
}

/* {"uid": share} of the variant's uid_shares, in the spec's order. */
static json_object *plan_uid_shares(const struct job_variant *v)
{
	json_object *out = json_object_new_object();
	for (size_t i = 0; i < v->n_uid_shares; i++) {
		char uid[16];
		snprintf(uid, sizeof(uid), "%u", v->uid_shares[i].uid);
		json_object_object_add(out, uid, json_object_new_int(v->uid_shares[i].share));
	}
	return out;
}

void plan_sched_ext_loader_path(const struct job_variant *v, char *buf, size_t len)
{
	char tag[SCHED_EXT_TAG_LEN + 1];
	if (!v->scx_bpf) {
		snprintf(buf, len, "%s/%s/%s", SCHED_EXT_GUEST_DIR, v->kernel->name,
			 v->scx_scheduler);
		return;
	}
	sched_ext_source_tag(v->scx_scheduler, v->scx_bpf, v->scx_loader, tag);
	snprintf(buf, len, "%s/%s/%s/%s", SCHED_EXT_GUEST_DIR, v->kernel->name, tag,
		 v->scx_scheduler);
}

/* {"scheduler": name, "argv": [loader, args...]}: the BPF scheduler the
 * agent starts before the workloads (job/sched_ext.h). */
static json_object *plan_sched_ext(const struct job_variant *v)
{
	json_object *out = json_object_new_object();
	char loader[256];
	plan_sched_ext_loader_path(v, loader, sizeof(loader));
	json_object_object_add(out, "scheduler", json_object_new_string(v->scx_scheduler));
	/* the user's own: its ops name is whatever the program declares */
	if (v->scx_bpf)
		json_object_object_add(out, "own", json_object_new_boolean(true));
	json_object *argv = json_object_new_array();
	json_object_array_add(argv, json_object_new_string(loader));
	for (size_t i = 0; i < v->n_scx_args; i++)
		json_object_array_add(argv, json_object_new_string(v->scx_args[i]));
	json_object_object_add(out, "argv", argv);
	return out;
}

/* Workload i of the plan: its argv and, for rt-tests and stress-ng, the
 * JSON or YAML file it writes. NULL for an unknown tool. */
static json_object *plan_workload(const struct job_workload *w, size_t i)
{
	int ti = tool_index(w->tool);
	if (ti < 0)
		return NULL;
	json_object *pw = json_object_new_object();
	json_object_object_add(pw, "name", json_object_new_string(w->name));
	json_object *argv = json_object_new_array();
	json_object_array_add(argv, json_object_new_string(tools[ti].path));
	for (const char *const *a = tool_prefix(w->tool); *a; a++)
		json_object_array_add(argv, json_object_new_string(*a));
	if (tools[ti].out_opt) {
		char out[32], opt[48];
		snprintf(out, sizeof(out), "/tmp/w%zu.%s", i,
			 strcmp(tools[ti].out_opt, "--yaml=") == 0 ? "yaml" : "json");
		snprintf(opt, sizeof(opt), "%s%s", tools[ti].out_opt, out);
		json_object_array_add(argv, json_object_new_string(opt));
		json_object_object_add(pw, "json_out", json_object_new_string(out));
		/* maxerr_us is not passed on: the tool runs exactly as the job
		 * says, and schedlab counts inversions itself from the
		 * per-iteration start times (metrics_rtmigrate.c). */
	}
	/* cyclictest -h prints its histogram on stdout too, one line per
	 * bucket: 420 KB for -h20000, which the agent sent over the serial
	 * port in tens of seconds of a loaded guest. The metrics read the
	 * --json file; a job's own --histfile comes later and wins. */
	if (strcmp(w->tool, "cyclictest") == 0)
		json_object_array_add(argv, json_object_new_string("--histfile=/dev/null"));
	for (size_t j = 0; j < w->n_args; j++)
		json_object_array_add(argv, json_object_new_string(w->args[j]));
	json_object_object_add(pw, "argv", argv);
	json_object_object_add(pw, "timeout_s", json_object_new_int(w->timeout_s));
	json_object_object_add(pw, "uid", json_object_new_int(w->uid));
	/* a load (docs/workloads.md "Loads") and the CPUs it is pinned to */
	json_object *load = NULL, *cpus = NULL, *nice = NULL;
	if (w->spec && json_object_object_get_ex(w->spec, "nice", &nice) &&
	    json_object_is_type(nice, json_type_int) && json_object_get_int(nice) != 0)
		json_object_object_add(pw, "nice", json_object_new_int(json_object_get_int(nice)));
	if (w->spec && json_object_object_get_ex(w->spec, "load", &load) &&
	    json_object_get_boolean(load))
		json_object_object_add(pw, "load", json_object_new_boolean(1));
	if (w->spec && json_object_object_get_ex(w->spec, "cpus", &cpus) &&
	    json_object_is_type(cpus, json_type_array))
		json_object_object_add(pw, "cpus", json_object_get(cpus));
	return pw;
}

int plan_build(const struct job *job, const char *variant, const char *run_id, json_object **ret,
	       struct sl_error *err)
{
	const struct job_variant *v = job_find_variant(job, variant);
	if (!v)
		return error_set(err, ERR_INTERNAL, 0, "Variant '%s' is not in the job.", variant);
	_cleanup_json_ json_object *plan = json_object_new_object();
	json_object_object_add(plan, "run_id", json_object_new_string(run_id));
	json_object_object_add(plan, "features", plan_features(v));
	json_object_object_add(plan, "tunables", plan_tunables(v));
	if (v->n_uid_shares > 0)
		json_object_object_add(plan, "uid_shares", plan_uid_shares(v));
	if (v->scx_scheduler)
		json_object_object_add(plan, "sched_ext", plan_sched_ext(v));
	if (v->kernel->schedstat)
		json_object_object_add(plan, "schedstat", json_object_new_boolean(1));

	json_object *wls = json_object_new_array();
	json_object_object_add(plan, "workloads", wls);
	for (size_t i = 0; i < job->n_workloads; i++) {
		const struct job_workload *w = &job->workloads[i];
		json_object *pw = plan_workload(w, i);
		if (!pw)
			return error_set(err, ERR_INVALID, 0, "Workload tool '%s' is unknown.",
					 w->tool);
		json_object_array_add(wls, pw);
	}
	*ret = TAKE_PTR(plan);
	return 0;
}

int plan_deadline_s(json_object *plan, bool tcg)
{
	/* One formula for the runner and the job's budget (job.h). */
	return job_run_deadline_s(json_member(plan, "workloads"), tcg);
}
