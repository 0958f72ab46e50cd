/* The typed job: struct job built from an expanded spec, its accessors. See job.h.
 *
 * Strings point into the expanded spec, which the job holds a reference to;
 * only the arrays of structs are allocated here. */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "job/job.h"
#include "job/job-internal.h"
#include "job/suite.h"
#include "util/cpu_list.h"
#include "util/parse.h"

/* An error for a member of the expanded spec that is missing or mistyped. */
static int job_bad(struct sl_error *err, const char *path, const char *what)
{
	return error_set_path(err, ERR_INVALID, path,
			      "The expanded job has no valid %s at %s; expand the job again.", what,
			      path);
}

static void *job_calloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

/* Fills *f from one expanded patch or config item; builtin_key is "series"
 * for a patch and "builtin" for a config. */
static int job_file_from(json_object *item, const char *builtin_key, const char *path,
			 struct job_file *f, struct sl_error *err)
{
	const char *builtin = json_member_string(item, builtin_key);
	if (builtin) {
		*f = (struct job_file){.kind = JOB_FILE_BUILTIN, .builtin = builtin};
		return 0;
	}
	json_object *content = json_member(item, "content");
	if (!json_object_is_type(content, json_type_string))
		return job_bad(err, path, "built-in name or inline content");
	*f = (struct job_file){
	    .kind = JOB_FILE_INLINE,
	    .name = json_member_string(item, "name"),
	    .content = json_object_get_string(content),
	    .content_len = (size_t)json_object_get_string_len(content),
	};
	return 0;
}

/* A NULL-free array of the strings in arr (borrowed), or -EINVAL. */
static int job_strings(json_object *arr, const char *path, const char ***ret, size_t *ret_n,
		       struct sl_error *err)
{
	size_t n = arr ? json_object_array_length(arr) : 0;
	const char **v = job_calloc(n, sizeof(*v));
	if (!v)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(s, json_type_string)) {
			free(v);
			return job_bad(err, path, "list of strings");
		}
		v[i] = json_object_get_string(s);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static int job_kernels_from(struct job *job, json_object *kernels, struct sl_error *err)
{
	char path[256];
	if (!kernels)
		return job_bad(err, "$.kernels", "kernels object");
	job->kernels =
	    job_calloc((size_t)json_object_object_length(kernels), sizeof(*job->kernels));
	if (!job->kernels)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	json_object_object_foreach(kernels, kname, k)
	{
		struct job_kernel *kern = &job->kernels[job->n_kernels++];
		snprintf(path, sizeof(path), "$.kernels.%s", kname);
		kern->name = kname;
		kern->source = json_member_string(k, "source");
		if (!kern->source)
			return job_bad(err, path, "source");
		json_object *patches = json_member_array(k, "patches");
		size_t n = patches ? json_object_array_length(patches) : 0;
		kern->patches = job_calloc(n, sizeof(*kern->patches));
		if (!kern->patches)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		for (size_t i = 0; i < n; i++) {
			char sub[300];
			snprintf(sub, sizeof(sub), "%s.patches[%zu]", path, i);
			int r = job_file_from(json_object_array_get_idx(patches, i), "series", sub,
					      &kern->patches[i], err);
			if (r < 0)
				return r;
			kern->n_patches++;
		}
		snprintf(path, sizeof(path), "$.kernels.%s.config", kname);
		int r = job_file_from(json_member_object(k, "config"), "builtin", path,
				      &kern->config, err);
		if (r < 0)
			return r;
		json_object *ss = json_member(k, "schedstat");
		kern->schedstat = ss && json_object_get_boolean(ss);
		kern->debug = json_member_string(k, "debug");
		if (kern->debug && !suite_debug_known(kern->debug)) {
			snprintf(path, sizeof(path), "$.kernels.%s.debug", kname);
			return job_bad(err, path, "debug preset");
		}
	}
	return 0;
}

static int job_uid_shares_from(json_object *shares, const char *path, struct job_variant *var,
			       struct sl_error *err)
{
	var->uid_shares = job_calloc(shares ? (size_t)json_object_object_length(shares) : 0,
				     sizeof(*var->uid_shares));
	if (!var->uid_shares)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	if (!shares) /* json_object_object_foreach() does not accept NULL */
		return 0;
	json_object_object_foreach(shares, uid, share)
	{
		unsigned long long u;
		long long sh;
		if (parse_uint64(uid, 65535, &u) < 0 || !json_integral(share, &sh) ||
		    sh < INT_MIN || sh > INT_MAX)
			return job_bad(err, path, "uid_shares entry");
		var->uid_shares[var->n_uid_shares++] =
		    (struct job_uid_share){.uid = (unsigned)u, .share = (int)sh};
	}
	return 0;
}

static int job_tunables_from(json_object *tun, const char *path, struct job_variant *var,
			     struct sl_error *err)
{
	var->sched_tunables = job_calloc(tun ? (size_t)json_object_object_length(tun) : 0,
					 sizeof(*var->sched_tunables));
	if (!var->sched_tunables)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	if (!tun)
		return 0;
	json_object_object_foreach(tun, tname, tval)
	{
		long long tv;
		if (!json_integral(tval, &tv))
			return job_bad(err, path, "sched_tunables entry");
		var->sched_tunables[var->n_sched_tunables++] =
		    (struct job_tunable){.name = tname, .value = tv};
	}
	return 0;
}

static int job_variant_from(struct job *job, const char *vname, json_object *v,
			    struct job_variant *var, struct sl_error *err)
{
	char path[256];
	snprintf(path, sizeof(path), "$.variants.%s", vname);
	var->name = vname;
	const char *kernel = json_member_string(v, "kernel");
	var->kernel = kernel ? job_find_kernel(job, kernel) : NULL;
	if (!var->kernel)
		return job_bad(err, path, "kernel that the job defines");
	int r = job_strings(json_member_array(v, "features"), path, &var->features,
			    &var->n_features, err);
	if (r < 0)
		return r;
	json_object *h = json_member(v, "hrtick");
	var->hrtick = !json_object_is_type(h, json_type_boolean) ? JOB_HRTICK_DEFAULT
		      : json_object_get_boolean(h)		 ? JOB_HRTICK_ON
								 : JOB_HRTICK_OFF;

	r = job_uid_shares_from(json_member_object(v, "uid_shares"), path, var, err);
	if (r < 0)
		return r;
	json_object *scx = json_member_object(v, "sched_ext");
	if (scx) {
		char spath[300];
		snprintf(spath, sizeof(spath), "%s.sched_ext", path);
		json_object *src = json_member_object(scx, "source");
		var->scx_scheduler =
		    json_member_string(src ? src : scx, src ? "name" : "scheduler");
		if (!var->scx_scheduler)
			return job_bad(err, spath, "scheduler");
		if (src) {
			var->scx_bpf = json_member_string(src, "bpf");
			var->scx_loader = json_member_string(src, "loader");
			if (!var->scx_bpf || !var->scx_loader)
				return job_bad(err, spath, "source");
		}
		r = job_strings(json_member_array(scx, "args"), spath, &var->scx_args,
				&var->n_scx_args, err);
		if (r < 0)
			return r;
	}
	return job_tunables_from(json_member_object(v, "sched_tunables"), path, var, err);
}

static int job_workloads_from(struct job *job, json_object *workloads, struct sl_error *err)
{
	char path[128];
	if (!workloads)
		return job_bad(err, "$.workloads", "workloads list");
	size_t n = json_object_array_length(workloads);
	job->workloads = job_calloc(n, sizeof(*job->workloads));
	if (!job->workloads)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < n; i++) {
		json_object *w = json_object_array_get_idx(workloads, i);
		struct job_workload *wl = &job->workloads[job->n_workloads++];
		snprintf(path, sizeof(path), "$.workloads[%zu]", i);
		wl->spec = w;
		wl->tool = json_member_string(w, "tool");
		wl->name = json_member_string(w, "name");
		if (!wl->tool || !wl->name)
			return job_bad(err, path, "tool and name");
		int r =
		    job_strings(json_member_array(w, "args"), path, &wl->args, &wl->n_args, err);
		if (r < 0)
			return r;
		wl->timeout_s = json_member_int(w, "timeout_s", -1);
		wl->uid = json_member_int(w, "uid", 0);
		if (wl->timeout_s < 1)
			return job_bad(err, path, "timeout_s");
		json_object *m = json_member(w, "maxerr_us");
		wl->maxerr_us = json_object_is_type(m, json_type_int) &&
					json_object_get_int64(m) >= 0 &&
					json_object_get_int64(m) <= LONG_MAX
				    ? (long)json_object_get_int64(m)
				    : -1;
	}
	return 0;
}

static int job_gates_from(struct job *job, json_object *gates, struct sl_error *err)
{
	char path[128];
	size_t n = gates ? json_object_array_length(gates) : 0;
	job->gates = job_calloc(n, sizeof(*job->gates));
	if (!job->gates)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < n; i++) {
		json_object *g = json_object_array_get_idx(gates, i);
		struct job_gate *gate = &job->gates[job->n_gates++];
		snprintf(path, sizeof(path), "$.gates[%zu]", i);
		gate->workload = json_member_string(g, "workload");
		gate->metric = json_member_string(g, "metric");
		if (!gate->workload || !gate->metric)
			return job_bad(err, path, "workload and metric");
		json_object *t = json_member(g, "threshold");
		gate->has_threshold = json_object_is_type(t, json_type_int) ||
				      json_object_is_type(t, json_type_double);
		gate->threshold = gate->has_threshold ? json_object_get_double(t) : 0;
		json_object *rel = json_member(g, "relative");
		gate->relative =
		    json_object_is_type(rel, json_type_boolean) && json_object_get_boolean(rel);
		json_object *def = json_member(g, "default");
		gate->is_default =
		    json_object_is_type(def, json_type_boolean) && json_object_get_boolean(def);
	}
	return 0;
}

/* alpha, noise_policy and noise_limit_pct: defaults when absent (a job
 * stored before they existed), ERR_INVALID when out of the schema's range. */
static int job_statistics_from(struct job *job, json_object *expanded, struct sl_error *err)
{
	json_object *a = json_member(expanded, "alpha");
	job->alpha = 0.05;
	if (a) {
		if (!json_object_is_type(a, json_type_double) &&
		    !json_object_is_type(a, json_type_int))
			return job_bad(err, "$.alpha", "alpha");
		job->alpha = json_object_get_double(a);
		if (!(job->alpha > 0 && job->alpha < 1))
			return job_bad(err, "$.alpha", "alpha");
	}
	json_object *np = json_member(expanded, "noise_policy");
	const char *policy = json_member_string(expanded, "noise_policy");
	if (np && !policy)
		return job_bad(err, "$.noise_policy", "noise_policy");
	if (!policy || strcmp(policy, "exclude") == 0)
		job->noise_policy = JOB_NOISE_EXCLUDE;
	else if (strcmp(policy, "keep") == 0)
		job->noise_policy = JOB_NOISE_KEEP;
	else if (strcmp(policy, "fail") == 0)
		job->noise_policy = JOB_NOISE_FAIL;
	else
		return job_bad(err, "$.noise_policy", "noise_policy");
	json_object *nl = json_member(expanded, "noise_limit_pct");
	job->noise_limit_pct = JOB_NOISE_LIMIT_DEFAULT_PCT;
	job->noise_limit_given = nl != NULL;
	if (nl) {
		if (!json_object_is_type(nl, json_type_double) &&
		    !json_object_is_type(nl, json_type_int))
			return job_bad(err, "$.noise_limit_pct", "noise_limit_pct");
		job->noise_limit_pct = json_object_get_double(nl);
		if (!(job->noise_limit_pct > 0 && job->noise_limit_pct <= 100))
			return job_bad(err, "$.noise_limit_pct", "noise_limit_pct");
	}
	return 0;
}

int job_from_expanded(json_object *expanded, struct job **ret, struct sl_error *err)
{
	if (!json_object_is_type(expanded, json_type_object))
		return error_set_path(err, ERR_INVALID, "$", "A job must be a JSON object.");
	_cleanup_job_ struct job *job = calloc(1, sizeof(*job));
	if (!job)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	job->spec = json_object_get(expanded);

	job->name = json_member_string(expanded, "name");
	if (!job->name)
		return job_bad(err, "$.name", "name");
	job->description = json_member_string(expanded, "description");

	int r = job_kernels_from(job, json_member_object(expanded, "kernels"), err);
	if (r < 0)
		return r;

	json_object *guest = json_member_object(expanded, "guest");
	job->guest.vcpus = json_member_int(guest, "vcpus", -1);
	job->guest.memory_mb = json_member_int(guest, "memory_mb", -1);
	if (job->guest.vcpus < 1 || job->guest.memory_mb < 1)
		return job_bad(err, "$.guest", "vcpus and memory_mb");
	json_object *topo = json_member_object(guest, "topology");
	if (topo) {
		job->guest.sockets = json_member_int(topo, "sockets", -1);
		job->guest.cores = json_member_int(topo, "cores", -1);
		job->guest.threads = json_member_int(topo, "threads", -1);
		if (job->guest.sockets < 1 || job->guest.cores < 1 || job->guest.threads < 1 ||
		    job->guest.sockets * job->guest.cores * job->guest.threads != job->guest.vcpus)
			return job_bad(err, "$.guest.topology", "sockets, cores and threads");
	}
	json_object *numa = json_member(guest, "numa");
	size_t n_numa =
	    json_object_is_type(numa, json_type_array) ? json_object_array_length(numa) : 0;
	if (numa && (n_numa < 1 || n_numa > GUEST_NUMA_MAX))
		return job_bad(err, "$.guest.numa", "1 to 8 nodes");
	for (size_t i = 0; i < n_numa; i++) {
		json_object *cell = json_object_array_get_idx(numa, i);
		const char *cpus = json_member_string(cell, "cpus");
		struct job_numa_cell *c = &job->guest.numa[i];
		c->memory_mb = json_member_int(cell, "memory_mb", -1);
		if (!cpus || cpu_list_parse(cpus, &c->cpus) < 0 || c->memory_mb < GUEST_NUMA_MIN_MB)
			return job_bad(err, "$.guest.numa", "cpus and memory_mb");
	}
	job->guest.n_numa = n_numa;
	const char *pinning = json_member_string(guest, "pinning");
	if (pinning && strcmp(pinning, "auto") != 0 && strcmp(pinning, "off") != 0)
		return job_bad(err, "$.guest.pinning", "auto or off");
	job->guest.pinning_off = pinning && strcmp(pinning, "off") == 0;
	for (size_t i = 0; i < job->n_kernels; i++)
		job->kernels[i].numa = n_numa > 0;

	json_object *variants = json_member_object(expanded, "variants");
	if (!variants)
		return job_bad(err, "$.variants", "variants object");
	job->variants =
	    job_calloc((size_t)json_object_object_length(variants), sizeof(*job->variants));
	if (!job->variants)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	json_object_object_foreach(variants, vname, v)
	{
		r = job_variant_from(job, vname, v, &job->variants[job->n_variants], err);
		job->n_variants++; /* counted before a failure too, so job_free() frees it */
		if (r < 0)
			return r;
	}
	const char *baseline = json_member_string(expanded, "baseline");
	job->baseline = baseline ? job_find_variant(job, baseline) : NULL;
	if (!job->baseline)
		return job_bad(err, "$.baseline", "baseline variant");

	r = job_workloads_from(job, json_member_array(expanded, "workloads"), err);
	if (r < 0)
		return r;
	json_object *rep = json_member(expanded, "repeat");
	if (json_object_is_type(rep, json_type_object)) {
		job->repeat_min = json_member_int(rep, "min", -1);
		job->repeat = json_member_int(rep, "max", -1);
	} else
		job->repeat_min = job->repeat = json_member_int(expanded, "repeat", -1);
	if (job->repeat_min < 1 || job->repeat < job->repeat_min)
		return job_bad(err, "$.repeat", "repeat");
	r = job_gates_from(job, json_member_array(expanded, "gates"), err);
	if (r < 0)
		return r;
	json_object *opt_out = json_member(expanded, "gates_opt_out");
	if (opt_out && !json_object_is_type(opt_out, json_type_boolean))
		return job_bad(err, "$.gates_opt_out", "gates_opt_out");
	job->gates_opt_out = opt_out && json_object_get_boolean(opt_out) && job->n_gates == 0;
	json_object *suite = json_member(expanded, "suite");
	job->suite = json_member_string(expanded, "suite");
	if (suite && !job->suite)
		return job_bad(err, "$.suite", "suite");

	job->accelerator = json_member_string(expanded, "accelerator");
	if (!job->accelerator)
		job->accelerator = "auto";
	const char *placement = json_member_string(expanded, "placement");
	job->has_placement = placement != NULL;
	job->placement = placement && strcmp(placement, "spread") == 0 ? JOB_PLACEMENT_SPREAD
								       : JOB_PLACEMENT_TOGETHER;
	r = job_strings(json_member_array(expanded, "host_labels"), "$.host_labels",
			&job->host_labels, &job->n_host_labels, err);
	if (r < 0)
		return r;

	r = job_statistics_from(job, expanded, err);
	if (r < 0)
		return r;

	*ret = TAKE_PTR(job);
	return 0;
}

int job_expand(json_object *spec, enum job_origin origin, const char *base_dir,
	       const struct job_limits *limits, struct job **ret, struct sl_error *err)
{
	_cleanup_json_ json_object *expanded = NULL;
	int r = job_expand_json(spec, origin, base_dir, limits, &expanded, err);
	if (r < 0)
		return r;
	return job_from_expanded(expanded, ret, err);
}

struct job *job_free(struct job *job)
{
	if (!job)
		return NULL;
	for (size_t i = 0; i < job->n_kernels; i++)
		free(job->kernels[i].patches);
	free(job->kernels);
	for (size_t i = 0; i < job->n_variants; i++) {
		free(job->variants[i].features);
		free(job->variants[i].uid_shares);
		free(job->variants[i].sched_tunables);
		free(job->variants[i].scx_args);
	}
	free(job->variants);
	for (size_t i = 0; i < job->n_workloads; i++)
		free(job->workloads[i].args);
	free(job->workloads);
	free(job->gates);
	free(job->host_labels);
	json_object_put(job->spec);
	free(job);
	return NULL;
}

const struct job_variant *job_find_variant(const struct job *job, const char *name)
{
	for (size_t i = 0; job && name && i < job->n_variants; i++)
		if (strcmp(job->variants[i].name, name) == 0)
			return &job->variants[i];
	return NULL;
}

const struct job_kernel *job_find_kernel(const struct job *job, const char *name)
{
	for (size_t i = 0; job && name && i < job->n_kernels; i++)
		if (strcmp(job->kernels[i].name, name) == 0)
			return &job->kernels[i];
	return NULL;
}

const struct job_workload *job_find_workload(const struct job *job, const char *name)
{
	for (size_t i = 0; job && name && i < job->n_workloads; i++)
		if (strcmp(job->workloads[i].name, name) == 0)
			return &job->workloads[i];
	return NULL;
}
