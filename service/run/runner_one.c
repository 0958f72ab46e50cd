/* One run of a job on one hypervisor host: its plan in an initrd, the
 * guest on the host's slot and pinning, remote volumes, and the run record
 * from what came back. See runner-internal.h. Apart from runner.c, which
 * orders the runs, places them and compares them, because a run's own
 * life (a host dropping, volumes, pinning) is a concern of its own. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "run/runner-internal.h"
#include "guest/guest.h"
#include "guest/hostpool.h"
#include "guest/volume.h"
#include "job/job.h"
#include "kernel/initramfs.h"
#include "kernel/kbuild.h"
#include "run/placement.h"
#include "run/run_key.h"
#include "run/run_plan.h"
#include "run/run_record.h"
#include "run/runner.h"
#include "util/fs.h"
#include "util/time.h"

/* The unit tests' guest (runner-internal.h); NULL in production. Behind a
 * lock like cmd_dry_run_set_hook(): runs may run on several threads. */
static pthread_mutex_t guest_hook_lock = PTHREAD_MUTEX_INITIALIZER;
static runner_guest_run_fn guest_hook;
static void *guest_hook_userdata;

void runner_set_guest_hook(runner_guest_run_fn fn, void *userdata)
{
	pthread_mutex_lock(&guest_hook_lock);
	guest_hook = fn;
	guest_hook_userdata = userdata;
	pthread_mutex_unlock(&guest_hook_lock);
}

static int run_guest(const struct run_key *k, struct guest_host *host, const struct guest_spec *gs,
		     struct guest_outcome **ret, struct sl_error *err)
{
	pthread_mutex_lock(&guest_hook_lock);
	runner_guest_run_fn fn = guest_hook;
	void *userdata = guest_hook_userdata;
	pthread_mutex_unlock(&guest_hook_lock);
	return fn ? fn(userdata, k, host, gs, ret, err) : guest_run(host, gs, ret, err);
}

/* A guest run's cancel check: the job's, or its host dropping, which ends
 * the run at once (it is retried elsewhere, never reported as a result). */
struct run_ctx {
	struct runner *r;
	size_t host;
};

static int run_cancelled_cb(void *userdata)
{
	struct run_ctx *c = userdata;
	return runner_cancelled(c->r) || !hostpool_is_up(c->r->pool, c->host);
}

json_object *runner_run_one(struct runner *r, size_t hidx, const struct run_key *k,
			    const char *base_initrd, struct kbuild_artifact *art, const char *accel,
			    bool *ret_dropped, struct sl_error *err)
{
	const char *uri = hostpool_uri(r->pool, hidx);
	bool local = hostpool_is_local(r->pool, hidx), acquired = false;
	*ret_dropped = false;
	char key[RUN_KEY_STRLEN], run_id[RUN_RECORD_ID_LEN], started[TIME_ISO8601_MAX];
	run_key_format(k, key);
	run_record_id(r->job_dir, key, run_id);
	time_now_iso8601(started);
	json_object *run = run_record_new(k, run_id, uri, started);
	_cleanup_free_ char *runs_dir = fs_path_join(r->job_dir, "runs");
	_cleanup_free_ char *run_dir = fs_path_join(runs_dir, run_id);
	_cleanup_free_ char *initrd = fs_path_join(run_dir, "initrd.img");
	/* Not the key itself: a '#' in a file name wants quoting in a shell. */
	char console_name[RUN_KEY_STRLEN + 16];
	snprintf(console_name, sizeof(console_name), "console-%s-%d.log", k->variant, k->repeat);
	_cleanup_free_ char *console = fs_path_join(r->job_dir, console_name);
	_cleanup_json_ json_object *plan = NULL;
	struct guest_host *host = NULL;
	virConnectPtr conn = NULL;
	struct volume_ref kv = {0}, iv = {0};
	struct guest_outcome *out = NULL;
	/* the floor before the run writes its initrd, console and record */
	int rc = runner_wait_for_room(r, err);
	if (rc >= 0)
		rc = plan_build(r->job, k->variant, run_id, &plan, err);
	if (rc >= 0)
		rc = fs_mkdir_p(run_dir, err);
	if (rc >= 0)
		rc = initramfs_with_plan(base_initrd, plan, initrd, err);
	if (rc < 0)
		goto cleanup;
	struct run_ctx ctx = {.r = r, .host = hidx};
	struct guest_pinning pin = {.n_vcpus = r->job->guest.vcpus};
	struct guest_numa_cell numa[GUEST_NUMA_MAX_CELLS];
	size_t n_numa = r->job->guest.n_numa < GUEST_NUMA_MAX_CELLS ? r->job->guest.n_numa
								    : GUEST_NUMA_MAX_CELLS;
	for (size_t i = 0; i < n_numa; i++)
		numa[i] = (struct guest_numa_cell){.cpus = r->job->guest.numa[i].cpus,
						   .memory_mb = r->job->guest.numa[i].memory_mb};
	struct guest_spec gs = {
	    .run_id = run_id,
	    .kernel = art->bzimage,
	    .initrd = initrd,
	    .vcpus = r->job->guest.vcpus,
	    .memory_mb = r->job->guest.memory_mb,
	    .sockets = r->job->guest.sockets,
	    .cores = r->job->guest.cores,
	    .threads = r->job->guest.threads,
	    .numa = numa,
	    .n_numa = n_numa,
	    .accel = accel,
	    .deadline_s = plan_deadline_s(plan, strcmp(accel, "tcg") == 0),
	    .console_log_path = console,
	    .cancelled = run_cancelled_cb,
	    .userdata = &ctx,
	};
	runner_progress(r, "booting", -1, "run %d/%d: %s (%s) on '%s'", r->run_index, r->run_total,
			key, k->variant, uri);
	rc = hostpool_acquire(r->pool, hidx, runner_cancelled, r);
	if (rc == -ECANCELED) {
		error_set(err, ERR_CANCELLED, ECANCELED, "The job was cancelled.");
		goto cleanup;
	}
	if (rc < 0) {
		*ret_dropped = true;
		error_set(err, ERR_INFRA, EHOSTDOWN, "The hypervisor host '%s' is down.", uri);
		goto cleanup;
	}
	acquired = true;
	rc = hostpool_connect(r->pool, hidx, &host, &conn, err);
	if (rc < 0)
		*ret_dropped = true;
	if (rc >= 0 && !local) {
		/* A remote host boots what libvirt uploaded into its pool. */
		rc = volume_upload(conn, art->bzimage, "kernel", NULL, &kv, err);
		if (rc >= 0)
			rc = volume_upload(conn, initrd, "initrd", NULL, &iv, err);
		gs.kernel = kv.path;
		gs.initrd = iv.path;
		gs.files_on_host = true;
	}
	double t0 = time_monotonic_s();
	if (rc >= 0) {
		if (local)
			placement_slot_acquire(PLACEMENT_SLOT_GUEST, r->cfg->guest_slots);
		/* docs/guests.md "Pinning": chosen once the guest has its slot. */
		if (r->job->guest.pinning_off)
			snprintf(pin.reason, sizeof(pin.reason), "guest.pinning is off");
		else
			hostpool_pin(r->pool, hidx, gs.vcpus, &pin);
		if (pin.pinned) {
			gs.vcpu_pin = pin.vcpu_cpu;
			gs.emulator_pin = pin.emulator;
		}
		rc = run_guest(k, host, &gs, &out, err);
		hostpool_unpin(r->pool, hidx, &pin);
		if (local)
			placement_slot_release(PLACEMENT_SLOT_GUEST);
	}
	/* A host that dropped during the run makes whatever came back (a broken
	 * stream, a cancel) an infrastructure failure, not a kernel's result. */
	if (!runner_cancelled(r) && !hostpool_is_up(r->pool, hidx)) {
		*ret_dropped = true;
		rc = error_set(err, ERR_INFRA, EHOSTDOWN,
			       "The hypervisor host '%s' dropped during run '%s'.", uri, key);
	}
	if (!local && conn && !*ret_dropped) {
		/* The run's initrd is used once; old kernels go by LRU. */
		const char *keep[] = {kv.name, NULL};
		if (iv.path)
			volume_delete(conn, iv.name, NULL);
		volume_evict(conn, VOLUME_KEEP_DEFAULT, keep, NULL);
	}
	/* What the upload cost, for bench/scaleout.sh and the curious. */
	if (!local && rc >= 0)
		run_record_add_volumes(run, &kv, &iv);
	if (rc >= 0) {
		run_record_set_outcome(run, r->job, accel, out, time_monotonic_s() - t0);
		run_record_set_pinning(run, &pin, out->vcpu_pin_applied);
	}
cleanup:
	volume_ref_clear(&kv);
	volume_ref_clear(&iv);
	if (acquired)
		hostpool_release(r->pool, hidx);
	guest_outcome_free(out);
	/* The initrd is big and reproducible from the cache and the plan. */
	fs_rm_rf(run_dir, NULL);
	if (rc < 0) {
		json_object_put(run);
		return NULL;
	}
	return run;
}
