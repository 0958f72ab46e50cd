/* The runner: builds, boots, measures and compares one job. See runner.h. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "run/runner.h"
#include "run/runner-internal.h"
#include "compare/noise.h"
#include "compare/sequential.h"
#include "compare/calibration.h"
#include "guest/accel.h"
#include "guest/guest.h"
#include "guest/hostpool.h"
#include "job/sched_ext.h"
#include "kernel/scx_user_build.h"
#include "kernel/initramfs.h"
#include "kernel/kbuild.h"
#include "kernel/sched_names.h"
#include "run/materialize.h"
#include "run/placement.h"
#include "run/result.h"
#include "run/run_key.h"
#include "run/run_plan.h"
#include "run/run_skip.h"
#include "util/disk.h"
#include "util/fs.h"
#include "util/time.h"
#include "util/json_get.h"

/* One run as placement_run() asks for it: runner_run_one() on the host it
 * chose. */
struct placed_run {
	struct runner *r;
	const struct run_key *key;
	const char *base_initrd;
	struct kbuild_artifact *art;
	const char *accel;
};

static json_object *placed_run_cb(void *userdata, size_t host, bool *ret_dropped,
				  struct sl_error *err)
{
	struct placed_run *p = userdata;
	return runner_run_one(p->r, host, p->key, p->base_initrd, p->art, p->accel, ret_dropped,
			      err);
}

static void placed_retrying_cb(void *userdata, const struct sl_error *err)
{
	struct placed_run *p = userdata;
	char key[RUN_KEY_STRLEN];
	runner_progress(p->r, "running", -1, "run %d/%d: %s: %s Retrying on another host.",
			p->r->run_index, p->r->run_total, run_key_format(p->key, key),
			err ? err->message : "");
}

/* Fail fast (run_skip.h): a run that fails its variant skips the rest of
 * it, and the last candidate to go stops the job. */
static void fail_fast(struct runner *r, const struct run_key *k, json_object *run)
{
	bool was = run_skip_is_skipped(r->skip, k);
	bool job_stopped = run_skip_run_ended(r->skip, k, run);
	char key[RUN_KEY_STRLEN];
	run_key_format(k, key);
	if (!was && run_skip_is_skipped(r->skip, k))
		runner_progress(
		    r, "running", -1,
		    "run %s %s: the rest of variant '%s' is skipped (fail fast)%s", key,
		    json_object_get_string(json_member(run, "status")), k->variant,
		    job_stopped ? "; no other variant is left to compare, so the job stops" : "");
}

/* The runs of rounds [from, to) in placement order, each reused from an
 * earlier attempt (hooks->lookup_run) or run where pl places it, into
 * result. run_total is the number of runs planned so far, for progress. */
static int run_rounds(struct runner *r, struct placement *pl, json_object *result,
		      struct built_kernel *built, size_t n_built, const char *base_initrd,
		      const char *accel, int from, int to, struct sl_error *err)
{
	_cleanup_free_ struct run_key *order = NULL;
	size_t n = 0;
	if (placement_order_rounds(r->job, from, to, &order, &n) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int rc = 0;
	int first = r->run_index, planned = 0;
	for (size_t i = 0; i < n; i++)
		planned += !run_skip_is_skipped(r->skip, &order[i]);
	r->run_total = first + planned;
	for (size_t i = 0; i < n; i++) {
		const struct run_key *k = &order[i];
		char key[RUN_KEY_STRLEN];
		run_key_format(k, key);
		/* Not built, or failed fast: counted on its variant, never booted. */
		if (run_skip_take(r->skip, k))
			continue;
		/* result.order lists the runs in the order they were booted */
		result_add_order(result, k, 1);
		r->run_index++;
		if (r->run_index > r->run_total)
			r->run_total = r->run_index;
		if (runner_cancelled(r)) {
			rc = error_set(err, ERR_CANCELLED, ECANCELED, "The job was cancelled.");
			break;
		}
		json_object *run = r->hooks && r->hooks->lookup_run
				       ? r->hooks->lookup_run(r->hooks->userdata, key)
				       : NULL;
		if (run) {
			runner_progress(r, "running", -1,
					"run %d/%d: %s done in an earlier attempt", r->run_index,
					r->run_total, key);
			fail_fast(r, k, run);
			result_add_run(result, k, run);
			continue;
		}
		const struct job_variant *v = job_find_variant(r->job, k->variant);
		const struct built_kernel *bk =
		    v ? runner_built_find(built, n_built, v->kernel->name) : NULL;
		struct placed_run pr = {
		    .r = r,
		    .key = k,
		    .base_initrd = base_initrd,
		    .art = bk ? bk->art : NULL,
		    .accel = accel,
		};
		struct placement_ops ops = {
		    .run = placed_run_cb, .retrying = placed_retrying_cb, .userdata = &pr};
		run = placement_run(pl, k, &ops, err);
		if (!run) {
			rc = -EIO;
			break;
		}
		/* "error" is the transport's verdict (a frame cut off or unreadable,
		 * no summary), not the kernel's: on a busy host the last bytes of a
		 * guest that powers off can be lost. "crashed" is QEMU's or
		 * libvirt's (the domain died without a kernel panic line). Both
		 * belong to schedlab, not to the kernel (docs/kernel-bugs.md): run
		 * it once more; one that repeats is kept. A hang or panic is the
		 * kernel's and is never retried. */
		const char *st = json_object_get_string(json_member(run, "status"));
		if (st && (strcmp(st, "error") == 0 || strcmp(st, "crashed") == 0) &&
		    !runner_cancelled(r)) {
			runner_progress(r, "running", -1,
					"run %d/%d: %s error: %s Running it once more.",
					r->run_index, r->run_total, key,
					json_member(run, "reason")
					    ? json_object_get_string(json_member(run, "reason"))
					    : "");
			json_object *again = placement_run(pl, k, &ops, err);
			if (!again) {
				json_object_put(run);
				rc = -EIO;
				break;
			}
			json_object *attempt = json_object_new_object();
			json_object_object_add(attempt, "status",
					       json_object_get(json_member(run, "status")));
			json_object_object_add(attempt, "reason",
					       json_object_get(json_member(run, "reason")));
			json_object_object_add(again, "retry_of", attempt);
			json_object_put(run);
			run = again;
			st = json_object_get_string(json_member(run, "status"));
		}
		runner_progress(
		    r, "running", 100.0 * r->run_index / r->run_total, "run %d/%d: %s %s%s%s",
		    r->run_index, r->run_total, key, st, json_member(run, "reason") ? ": " : "",
		    json_member(run, "reason") ? json_object_get_string(json_member(run, "reason"))
					       : "");
		if (r->hooks && r->hooks->run_done)
			r->hooks->run_done(r->hooks->userdata, key, run);
		fail_fast(r, k, run);
		result_add_run(result, k, run);
	}
	return rc;
}

/* The most noisy runs any one variant has among rounds [from, to). */
static int noisy_runs(json_object *result, int from, int to)
{
	int most = 0;
	json_object_object_foreach(json_member(result, "variants"), vname, v)
	{
		(void)vname;
		json_object *runs = json_member(v, "runs");
		int n = 0;
		for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
			json_object *run = json_object_array_get_idx(runs, i);
			int rep = json_object_get_int(json_member(run, "repeat"));
			if (rep >= from && rep < to && noise_run_is_noisy(run))
				n++;
		}
		if (n > most)
			most = n;
	}
	return most;
}

/* Whether a look left a gate neither failed nor passed (inconclusive): more runs may help. */
static bool gated_undecided(json_object *result)
{
	json_object *cmps = json_member(result, "comparisons");
	for (size_t i = 0; cmps && i < json_object_array_length(cmps); i++) {
		json_object *c = json_object_array_get_idx(cmps, i);
		const char *v = json_object_get_string(json_member(c, "verdict"));
		if (json_object_get_boolean(json_member(c, "gated")) && v &&
		    strcmp(v, "inconclusive") == 0)
			return true;
	}
	return false;
}

/* Every run of the job: the rounds up to each look of the repeat schedule (compare/sequential.h;
 * one look for a plain repeat count), noisy rounds rerun while the policy excludes them and the
 * budget lasts, and after each look a comparison that decides whether the next look is needed.
 * Records the looks in result.repeats. */
static int run_all(struct runner *r, struct placement *pl, json_object *result,
		   struct built_kernel *built, size_t n_built, const char *base_initrd,
		   const char *accel, struct sl_error *err)
{
	int min = r->job->repeat_min, max = r->job->repeat, looks[COMPARE_MAX_LOOKS];
	size_t n_looks = compare_look_schedule(min, max, looks, COMPARE_MAX_LOOKS);
	bool adaptive = n_looks > 1;
	bool exclude = r->job->noise_policy == JOB_NOISE_EXCLUDE;
	/* Reruns of noisy rounds: at most as many as the job's largest repeat. */
	int rerun_budget = max, reruns = 0, rounds = 0, clean_target = 0;
	result_begin_runs(result, r->job, NULL, 0);
	json_object *rep = json_object_new_object();
	json_object *jlooks = json_object_new_array();
	json_object_object_add(rep, "min", json_object_new_int(min));
	json_object_object_add(rep, "max", json_object_new_int(max));
	json_object_object_add(rep, "alpha_per_look",
			       json_object_new_double(compare_alpha(r->job)));
	json_object_object_add(rep, "noise_policy",
			       json_object_new_string(noise_policy_name(r->job->noise_policy)));
	json_object_object_add(rep, "noise_limit_pct",
			       json_object_new_double(r->job->noise_limit_pct));
	json_object_object_add(rep, "noise_limit_source",
			       json_object_new_string(r->job->noise_limit_given	   ? "job"
						      : isfinite(r->noise_aa_wait) ? "calibration"
										   : "default"));
	if (isfinite(r->noise_aa_wait))
		json_object_object_add(rep, "calibration_vcpu_wait_pct_p90",
				       json_object_new_double(r->noise_aa_wait));
	json_object_object_add(rep, "looks", jlooks);
	json_object_object_add(result, "repeats", rep);
	const char *stopped = "the repeat count was reached";
	char warn[400]; /* repeats that can never decide a gate: said as the job starts */
	if (compare_repeat_warning(r->job, warn, sizeof(warn)))
		runner_progress(r, "running", -1, "warning: %s", warn);
	int rc = 0;
	for (size_t li = 0; li < n_looks && rc >= 0; li++) {
		int want = looks[li] - clean_target;
		clean_target = looks[li];
		while (want > 0 && rc >= 0) {
			int from = rounds;
			rc = run_rounds(r, pl, result, built, n_built, base_initrd, accel, from,
					from + want, err);
			rounds += want;
			/* Replace rounds the host spoiled, within the budget; a job
			 * that stopped (fail fast) has nothing left to rerun. */
			want = exclude && !run_skip_stopped(r->skip)
				   ? noisy_runs(result, from, rounds)
				   : 0;
			if (want > rerun_budget - reruns)
				want = rerun_budget - reruns;
			if (want > 0) {
				reruns += want;
				runner_progress(
				    r, "running", -1,
				    "%d noisy run(s): the host starved the vCPUs; running %d "
				    "more round(s)",
				    noisy_runs(result, from, rounds), want);
			}
		}
		if (rc < 0)
			break;
		runner_progress(r, "comparing", -1, "comparing every variant with the baseline");
		run_skip_describe(r->skip, result);
		rc = result_compare(result, r->job, err);
		if (rc < 0)
			break;
		bool undecided = gated_undecided(result);
		json_object *look = json_object_new_object();
		json_object_object_add(look, "repeats", json_object_new_int(looks[li]));
		json_object_object_add(look, "rounds_run", json_object_new_int(rounds));
		json_object_object_add(look, "verdict",
				       json_object_get(json_member(result, "verdict")));
		json_object_object_add(look, "undecided", json_object_new_boolean(undecided));
		json_object_array_add(jlooks, look);
		if (!adaptive)
			break;
		if (run_skip_stopped(r->skip)) {
			stopped = "every non-baseline variant failed (fail fast)";
			break;
		}
		if (!undecided) {
			stopped = "every gated metric was decided";
			break;
		}
		if (strcmp(json_object_get_string(json_member(result, "verdict")), "fail") == 0) {
			stopped = "the job failed";
			break;
		}
		if (li + 1 == n_looks)
			stopped =
			    "the largest repeat count was reached with a gated metric undecided";
		else
			runner_progress(r, "running", -1,
					"a gated metric is undecided at %d repeats: going on to %d",
					looks[li], looks[li + 1]);
	}
	json_object_object_add(rep, "rounds_run", json_object_new_int(rounds));
	json_object_object_add(rep, "noisy_reruns", json_object_new_int(reruns));
	json_object_object_add(rep, "stopped", json_object_new_string(stopped));
	placement_describe(pl, result);
	return rc;
}

/* The host's A/A calibration for the baseline's kernel and the job's
 * workloads, when `schedlab calibrate` stored one (compare/calibration.h):
 * result.calibration, which result_compare() hands to the comparisons. */
static void attach_calibration(struct runner *r, json_object *result, const char *accel)
{
	const char *kname = r->job->baseline->kernel->name;
	const char *kkey =
	    json_member_string(json_member(json_member(result, "kernels"), kname), "key");
	if (!kkey)
		return;
	struct calibration_host h;
	calibration_host_local(accel, &h);
	json_object *cal = calibration_lookup(r->cache_dir, &h, kkey, r->job);
	if (json_object_array_length(cal) == 0) {
		json_object_put(cal);
		return;
	}
	for (size_t i = 0; i < json_object_array_length(cal); i++) {
		json_object *e = json_object_array_get_idx(cal, i);
		runner_progress(
		    r, "booting", -1,
		    "workload '%s': default thresholds from the A/A calibration of %s (%d "
		    "boots)",
		    json_member_string(e, "workload"), json_member_string(e, "made_at"),
		    json_object_get_int(json_member(e, "boots")));
	}
	json_object_object_add(result, "calibration", cal);
}

/* The noise limit of the job's runs (docs/statistics.md, "Host interference"):
 * the job's own noise_limit_pct, else one from the host's A/A calibration
 * (result.calibration; calibration_noise_limit), else the default. Before
 * any run is marked. */
static void choose_noise_limit(struct runner *r, json_object *result)
{
	r->noise_aa_wait = NAN;
	if (r->job->noise_limit_given)
		return;
	double lim = calibration_noise_limit(json_member(result, "calibration"),
					     JOB_NOISE_LIMIT_DEFAULT_PCT, &r->noise_aa_wait);
	r->job->noise_limit_pct = lim;
	if (isfinite(r->noise_aa_wait))
		runner_progress(r, "booting", -1,
				"noise limit %.3g %% of a run's vCPU time: 9 in 10 of the A/A "
				"calibration's runs waited at most %.3g %%",
				lim, r->noise_aa_wait);
}

/* The sched_ext loaders the job's variants start (docs/sched-ext.md): each
 * variant's scheduler, built with its kernel, at SCHED_EXT_GUEST_DIR/<kernel>/
 * <scheduler> in the initramfs, once. A variant whose kernel does not enable
 * SCHED_CLASS_EXT is an error naming its sched_ext field. files holds cap
 * entries; hosts (as many) keeps the malloc'd host paths. */
static int sched_ext_files(const struct job *job, struct built_kernel *built, size_t n_built,
			   struct initramfs_file *files, char **hosts, size_t cap, size_t *ret_n,
			   struct sl_error *err)
{
	size_t n = 0;
	for (size_t i = 0; i < job->n_variants; i++) {
		const struct job_variant *v = &job->variants[i];
		const struct built_kernel *bk = runner_built_find(built, n_built, v->kernel->name);
		if (!v->scx_scheduler || !bk)
			continue;
		const struct kbuild_artifact *art = bk->art;
		/* a user's scheduler: built with the kernel */
		const char *own = bk->user_loaders ? bk->user_loaders[i] : NULL;
		char path[256];
		snprintf(path, sizeof(path), "$.variants.%s.sched_ext", v->name);
		if (!bk->scx)
			return error_set_path(
			    err, ERR_INVALID, path,
			    "Variant '%s' asks for the sched_ext scheduler '%s', but its kernel "
			    "'%s' was built without CONFIG_SCHED_CLASS_EXT (the built-in "
			    "linux-6.12 config enables it).",
			    v->name, v->scx_scheduler, v->kernel->name);
		_cleanup_free_ char *dir = fs_path_join(art->dir, KBUILD_SCX_DIR);
		char *host = own ? strdup(own) : fs_path_join(dir, v->scx_scheduler);
		char image[256];
		plan_sched_ext_loader_path(v, image, sizeof(image));
		memmove(image, image + 1, strlen(image)); /* relative to the image's root */
		bool dup = false;
		for (size_t j = 0; j < n; j++)
			dup = dup || strcmp(files[j].host, host) == 0;
		if (dup || n == cap) {
			free(host);
			if (!dup)
				return error_set_path(err, ERR_INVALID, path,
						      "The job names more than %zu sched_ext "
						      "schedulers.",
						      cap);
			continue;
		}
		if (!fs_exists(host)) {
			free(host);
			_cleanup_free_ char *failed = fs_path_join(dir, KBUILD_SCX_FAILED);
			_cleanup_free_ char *why = NULL;
			struct sl_error ignored;
			if (fs_read_file(failed, 4096, &why, NULL, &ignored) < 0)
				why = NULL;
			else
				why[strcspn(why, "\n")] = '\0';
			return error_set_path(err, ERR_INVALID, path,
					      "The sched_ext scheduler '%s' of kernel '%s' did not "
					      "build: %s",
					      v->scx_scheduler, v->kernel->name,
					      why ? why : "its loader is missing.");
		}
		hosts[n] = host;
		files[n].host = host;
		files[n].image = strdup(image);
		hosts[cap + n] = (char *)files[n].image;
		n++;
	}
	*ret_n = n;
	return 0;
}

/* After the kernels are built: initramfs, accelerator, runs, comparisons into result. */
static int measure(struct runner *r, json_object *result, struct built_kernel *built,
		   size_t n_built, struct sl_error *err)
{
	_cleanup_free_ char *agent = fs_path_join(r->data_dir, "build/agent");
	_cleanup_free_ char *wl = fs_path_join(r->data_dir, "build/workloads");
	const char *tools[16];
	plan_initramfs_tools(r->job, tools, ELEMENTSOF(tools));
	struct initramfs_file scx[16];
	char *scx_paths[2 * ELEMENTSOF(scx)] = {NULL};
	size_t n_scx = 0;
	int rc =
	    sched_ext_files(r->job, built, n_built, scx, scx_paths, ELEMENTSOF(scx), &n_scx, err);
	struct initramfs_inputs in = {
	    .agent = agent, .tools = tools, .workloads_dir = wl, .files = scx, .n_files = n_scx};
	_cleanup_free_ char *base_initrd = NULL;
	runner_progress(r, "booting", -1, "assembling the guest initramfs");
	if (rc >= 0)
		rc = initramfs_base(r->cache_dir, &in, &base_initrd, err);
	for (size_t i = 0; i < ELEMENTSOF(scx_paths); i++)
		free(scx_paths[i]);
	if (rc < 0)
		return rc;

	const char *want = r->job->accelerator;
	if (strcmp(want, "auto") == 0 && r->cfg->accel)
		want = r->cfg->accel;
	struct hostpool *own = NULL;
	r->pool = r->cfg->hostpool;
	if (!r->pool) {
		rc = placement_pool_new(r->cfg->hypervisors, r->cfg->libvirt_uri, &own, err);
		if (rc < 0)
			return rc;
		r->pool = own;
	}
	/* The accelerator probe boots local files: on the first local host. A
	 * pool of remote hosts only runs TCG unless the job names kvm. */
	int probe_host = placement_probe_host(r->pool);
	char accel[8];
	struct guest_host *host = NULL;
	rc = hostpool_connect(r->pool, probe_host >= 0 ? (size_t)probe_host : 0, &host, NULL, err);
	if (rc >= 0 && probe_host >= 0) {
		runner_progress(r, "booting", -1, "choosing the accelerator (%s)", want);
		/* the baseline's kernel: always built when the job gets here */
		const struct built_kernel *probe =
		    runner_built_find(built, n_built, r->job->baseline->kernel->name);
		rc = accel_resolve(host, r->cache_dir, want,
				   (probe ? probe : &built[0])->art->bzimage, base_initrd, accel,
				   err);
	} else if (rc >= 0) {
		snprintf(accel, sizeof(accel), "%s", strcmp(want, "kvm") == 0 ? "kvm" : "tcg");
	}
	if (rc >= 0) {
		struct placement pl;
		rc = placement_begin(&pl, r->pool, r->job, accel, err);
		if (rc >= 0) {
			result_set_environment(result, host, accel);
			attach_calibration(r, result, accel);
			choose_noise_limit(r, result);
			rc = run_all(r, &pl, result, built, n_built, base_initrd, accel, err);
		}
		placement_end(&pl);
	}
	r->pool = NULL;
	hostpool_free(own);
	return rc;
}

/* No candidate kernel built: no guest boots (there is nothing to compare
 * the baseline with). The result says so: the variants, the baseline's
 * first-look runs as skipped, the build reasons, verdict fail. */
static int nothing_to_compare(struct runner *r, json_object *result, struct sl_error *err)
{
	runner_progress(r, "comparing", -1,
			"no non-baseline variant was built: no guest boots, the verdict is fail");
	result_set_environment(result, NULL, NULL);
	result_begin_runs(result, r->job, NULL, 0);
	_cleanup_free_ struct run_key *order = NULL;
	size_t n = 0;
	if (placement_order(r->job, &order, &n) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < n; i++)
		run_skip_take(r->skip, &order[i]);
	run_skip_describe(r->skip, result);
	return result_compare(result, r->job, err);
}

/* runner_run_job, or with build_only runner_build_job (*ret_built: how many were built). */
static int run_job(const struct runner_config *cfg, json_object *spec, const char *job_dir,
		   const struct runner_hooks *hooks, bool build_only, json_object **ret_result,
		   int *ret_built, struct sl_error *err)
{
	_cleanup_job_ struct job *job = NULL;
	int rc = job_from_expanded(spec, &job, err);
	if (rc < 0)
		return rc;
	_cleanup_free_ char *cache_dir =
	    cfg->cache_dir ? strdup(cfg->cache_dir) : fs_default_cache_dir();
	_cleanup_free_ char *data_dir = cfg->data_dir ? strdup(cfg->data_dir) : fs_data_dir();
	struct runner r = {
	    .cfg = cfg,
	    .hooks = hooks,
	    .job = job,
	    .job_dir = job_dir,
	    .cache_dir = cache_dir,
	    .data_dir = data_dir,
	    .noise_aa_wait = NAN,
	};
	char started[TIME_ISO8601_MAX], finished[TIME_ISO8601_MAX];
	time_now_iso8601(started);
	rc = fs_mkdir_p(job_dir, err);
	if (rc < 0)
		return rc;
	_cleanup_json_ json_object *result = result_new(job);
	r.skip = run_skip_new(job);
	if (!r.skip)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");

	struct built_kernel *built = NULL;
	size_t n_built = 0;
	rc = runner_build_kernels(&r, result, &built, &n_built, err);
	if (build_only) {
		int fresh = 0;
		for (size_t i = 0; i < n_built; i++)
			fresh += !built[i].art->cached;
		*ret_built = rc >= 0 && n_built < job->n_kernels ? -1 : fresh;
	} else if (rc >= 0 && run_skip_stopped(r.skip))
		rc = nothing_to_compare(&r, result, err);
	else if (rc >= 0)
		rc = measure(&r, result, built, n_built, err);
	runner_built_free(built, n_built, job->n_variants);
	run_skip_free(r.skip);
	if (rc < 0 || build_only)
		return rc < 0 ? rc : 0;
	time_now_iso8601(finished);
	result_finish(result, started, finished);
	*ret_result = TAKE_PTR(result);
	return 0;
}

int runner_run_job(const struct runner_config *cfg, json_object *spec, const char *job_dir,
		   const struct runner_hooks *hooks, json_object **ret_result, struct sl_error *err)
{
	return run_job(cfg, spec, job_dir, hooks, false, ret_result, NULL, err);
}

int runner_build_job(const struct runner_config *cfg, json_object *spec, const char *job_dir,
		     const struct runner_hooks *hooks, int *ret_built, struct sl_error *err)
{
	return run_job(cfg, spec, job_dir, hooks, true, NULL, ret_built, err);
}
