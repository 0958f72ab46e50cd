/* The runner: builds, boots, measures and compares one job. See runner.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "run/runner.h"
#include "guest/accel.h"
#include "compare/compare.h"
#include "run/environment.h"
#include "guest/guest.h"
#include "guest/hostpool.h"
#include "kernel/initramfs.h"
#include "kernel/kbuild.h"
#include "run/run_plan.h"
#include "run/run_record.h"
#include "guest/volume.h"
#include "util/fs.h"
#include "util/hash.h"

/* Process-wide slots, so the service's workers share one build and the
 * guest capacity between jobs. Sized by the first runner_config seen. */
struct slots {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int free;
	bool init;
};
static struct slots build_slots = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false};
static struct slots guest_slots = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false};

static void slot_acquire(struct slots *s, int size)
{
	pthread_mutex_lock(&s->lock);
	if (!s->init) {
		s->free = size > 0 ? size : 1;
		s->init = true;
	}
	while (s->free <= 0)
		pthread_cond_wait(&s->cond, &s->lock);
	s->free--;
	pthread_mutex_unlock(&s->lock);
}

static void slot_release(struct slots *s)
{
	pthread_mutex_lock(&s->lock);
	s->free++;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

struct runner {
	const struct runner_config *cfg;
	const struct runner_hooks *hooks;
	json_object *spec;
	const char *job_dir;
	const char *cache_dir;
	const char *data_dir;
	int run_index, run_total;
	/* Placement (hostpool.h): the job's host unless spread, the hosts
	 * dropped during this job, and how many runs were retried. */
	struct hostpool *pool;
	struct hostpool_constraints cons;
	bool spread;
	int job_host;
	bool excluded[HOSTPOOL_MAX_HOSTS];
	int retries;
};

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static void now_iso(char buf[32])
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

_printf_(4, 5) static void progress(struct runner *r, const char *phase, double pct,
				    const char *fmt, ...)
{
	if (!r->hooks || !r->hooks->progress)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct runner_progress p = {
	    .phase = phase,
	    .percent = pct,
	    .run_index = r->run_index,
	    .run_total = r->run_total,
	    .message = msg,
	};
	r->hooks->progress(r->hooks->userdata, &p);
}

static int cancelled_cb(void *userdata)
{
	struct runner *r = userdata;
	return r->hooks && r->hooks->cancelled && r->hooks->cancelled(r->hooks->userdata);
}

static void build_progress_cb(void *userdata, double pct, const char *line)
{
	struct runner *r = userdata;
	progress(r, "building", pct, "%s", line);
}

/* Writes an inline file item {name, content} under dir as NNNN-name. */
static int write_inline(const char *dir, int index, json_object *item, char **ret_path,
			struct sl_error *err)
{
	char fname[200];
	snprintf(fname, sizeof(fname), "%04d-%s", index, json_object_get_string(get(item, "name")));
	_cleanup_free_ char *path = fs_path_join(dir, fname);
	json_object *c = get(item, "content");
	int r = fs_write_file_atomic(path, json_object_get_string(c),
				     (size_t)json_object_get_string_len(c), err);
	if (r < 0)
		return r;
	*ret_path = TAKE_PTR(path);
	return 0;
}

/* Turns the expanded kernel object into a kernel_spec through the kernel
 * stage's builder (the same series parser as `schedlab kernel`): inline
 * files are written under <job>/kernels/<kname>/, built-in series and
 * fragments come from <data>/guest-kernel/, and every path is absolute, so
 * the build does not depend on the current directory. */
static int materialize_kernel(struct runner *r, const char *kname, json_object *k,
			      struct kernel_spec **ret, struct sl_error *err)
{
	_cleanup_free_ char *kdir0 = fs_path_join(r->job_dir, "kernels");
	_cleanup_free_ char *kdir_rel = fs_path_join(kdir0, kname);
	int ret_code = fs_mkdir_p(kdir_rel, err);
	if (ret_code < 0)
		return ret_code;
	_cleanup_free_ char *kdir = realpath(kdir_rel, NULL);
	if (!kdir)
		return error_set(err, ERR_INTERNAL, errno, "Cannot resolve the directory '%s': %s.",
				 kdir_rel, strerror(errno));
	_cleanup_free_ char *gk = fs_path_join(r->data_dir, "guest-kernel");
	struct kernel_spec *s = NULL;
	ret_code = kernel_spec_new(json_object_get_string(get(k, "source")), NULL, &s, err);
	if (ret_code < 0)
		return ret_code;
	json_object *patches = get(k, "patches");
	for (size_t i = 0; patches && i < json_object_array_length(patches); i++) {
		json_object *item = json_object_array_get_idx(patches, i);
		json_object *series = get(item, "series");
		char field[300];
		snprintf(field, sizeof(field), "$.kernels.%s.patches[%zu]", kname, i);
		if (series) {
			const char *name = json_object_get_string(series);
			_cleanup_free_ char *dir = fs_path_join(gk, name);
			_cleanup_free_ char *file = fs_path_join(dir, "series");
			ret_code = kernel_spec_add_series(s, NULL, file, field, err);
			if (ret_code < 0)
				error_prefix(err, "Built-in series '%s' cannot be used", name);
		} else {
			_cleanup_free_ char *path = NULL;
			ret_code = write_inline(kdir, (int)i + 1, item, &path, err);
			if (ret_code == 0)
				ret_code = kernel_spec_add_patch(s, NULL, path, field, err);
		}
		if (ret_code < 0) {
			kernel_spec_free(s);
			return ret_code;
		}
	}
	json_object *cfg = get(k, "config");
	json_object *builtin = get(cfg, "builtin");
	_cleanup_free_ char *cfg_path = NULL;
	if (builtin) {
		_cleanup_free_ char *dir = fs_path_join(gk, json_object_get_string(builtin));
		cfg_path = fs_path_join(dir, "schedlab.config");
	} else
		ret_code = write_inline(kdir, 0, cfg, &cfg_path, err);
	if (ret_code == 0)
		ret_code = kernel_spec_set_config(s, NULL, cfg_path, "config", err);
	if (ret_code < 0) {
		kernel_spec_free(s);
		return ret_code;
	}
	*ret = s;
	return 0;
}

struct built_kernel {
	char *name;
	struct kbuild_artifact *art;
};

static int build_kernels(struct runner *r, json_object *kernels_out, struct built_kernel **ret,
			 size_t *ret_n, struct sl_error *err)
{
	json_object *kernels = get(r->spec, "kernels");
	size_t n = (size_t)json_object_object_length(kernels), i = 0;
	struct built_kernel *built = calloc(n ? n : 1, sizeof(*built));
	*ret = built;
	*ret_n = 0;
	json_object_object_foreach(kernels, kname, k)
	{
		struct kernel_spec *spec = NULL;
		int rc = materialize_kernel(r, kname, k, &spec, err);
		if (rc < 0)
			return rc;
		_cleanup_free_ char *logname = NULL;
		if (asprintf(&logname, "build-%s.log", kname) < 0)
			abort();
		_cleanup_free_ char *logpath = fs_path_join(r->job_dir, logname);
		_cleanup_close_ int log_fd =
		    open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		struct kbuild_opts o = {
		    .cache_dir = r->cache_dir,
		    .jobs = r->cfg->build_jobs,
		    .log_fd = log_fd,
		    .progress = build_progress_cb,
		    .cancelled = cancelled_cb,
		    .userdata = r,
		};
		progress(r, "building", 0, "kernel '%s': building or taking from the cache", kname);
		slot_acquire(&build_slots, r->cfg->build_slots);
		struct kbuild_artifact *art = NULL;
		rc = kbuild_build(&o, spec, &art, err);
		slot_release(&build_slots);
		kernel_spec_free(spec);
		if (rc < 0)
			return error_prefix(err, "Kernel '%s' was not built", kname);
		built[i].name = strdup(kname);
		built[i].art = art;
		*ret_n = ++i;
		json_object *meta =
		    art->meta ? json_object_get(art->meta) : json_object_new_object();
		json_object_object_add(meta, "cached", json_object_new_boolean(art->cached));
		json_object_object_add(kernels_out, kname, meta);
		progress(r, "building", 100, "kernel '%s' ready (%s, key %.12s)", kname,
			 art->cached ? "cache hit" : "built", art->key);
	}
	return 0;
}

static void built_free(struct built_kernel *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(b[i].name);
		kbuild_artifact_free(b[i].art);
	}
	free(b);
}

static struct kbuild_artifact *built_find(struct built_kernel *b, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(b[i].name, name) == 0)
			return b[i].art;
	return NULL;
}

/* The run id: unguessable enough to be unique across jobs on one host, and
 * safe as a domain name and a file name. */
static void run_id_for(const char *job_dir, const char *key, char out[40])
{
	char h[HASH_HEX_LEN];
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s|%s|%ld|%d", job_dir, key, (long)time(NULL), (int)getpid());
	hash_buf_hex(buf, strlen(buf), h);
	snprintf(out, 40, "%.16s", h);
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
	return cancelled_cb(c->r) || !hostpool_is_up(c->r->pool, c->host);
}

/* The kernel and the run's initrd as volumes on a remote host. */
static int upload_files(virConnectPtr conn, const char *kernel, const char *initrd,
			struct volume_ref *kv, struct volume_ref *iv, struct sl_error *err)
{
	int rc = volume_upload(conn, kernel, "kernel", NULL, kv, err);
	if (rc >= 0)
		rc = volume_upload(conn, initrd, "initrd", NULL, iv, err);
	return rc;
}

static json_object *run_one(struct runner *r, size_t hidx, const char *variant, int repeat,
			    const char *key, const char *base_initrd, struct kbuild_artifact *art,
			    const char *accel, bool *ret_dropped, struct sl_error *err)
{
	const char *uri = hostpool_uri(r->pool, hidx);
	bool local = hostpool_is_local(r->pool, hidx);
	*ret_dropped = false;
	char run_id[40], started[32];
	run_id_for(r->job_dir, key, run_id);
	now_iso(started);
	json_object *run = json_object_new_object();
	json_object_object_add(run, "key", json_object_new_string(key));
	json_object_object_add(run, "run_id", json_object_new_string(run_id));
	json_object_object_add(run, "repeat", json_object_new_int(repeat));
	json_object_object_add(run, "status", json_object_new_string("ok"));
	json_object_object_add(run, "host", json_object_new_string(uri));
	json_object_object_add(run, "started_at", json_object_new_string(started));

	_cleanup_json_ json_object *plan = NULL;
	if (plan_build(r->spec, variant, run_id, &plan, err) < 0) {
		json_object_put(run);
		return NULL;
	}
	_cleanup_free_ char *runs_dir = fs_path_join(r->job_dir, "runs");
	_cleanup_free_ char *run_dir = fs_path_join(runs_dir, run_id);
	if (fs_mkdir_p(run_dir, err) < 0) {
		json_object_put(run);
		return NULL;
	}
	_cleanup_free_ char *initrd = fs_path_join(run_dir, "initrd.img");
	if (initramfs_with_plan(base_initrd, plan, initrd, err) < 0) {
		json_object_put(run);
		return NULL;
	}
	char console_name[96];
	snprintf(console_name, sizeof(console_name), "console-%s.log", key);
	for (char *c = console_name; *c; c++)
		if (*c == '#')
			*c = '-';
	_cleanup_free_ char *console = fs_path_join(r->job_dir, console_name);
	json_object *guest = get(r->spec, "guest");
	struct run_ctx ctx = {.r = r, .host = hidx};
	struct guest_spec gs = {
	    .run_id = run_id,
	    .kernel = art->bzimage,
	    .initrd = initrd,
	    .vcpus = json_object_get_int(get(guest, "vcpus")),
	    .memory_mb = json_object_get_int(get(guest, "memory_mb")),
	    .accel = accel,
	    .deadline_s = plan_deadline_s(plan, strcmp(accel, "tcg") == 0),
	    .console_log_path = console,
	    .cancelled = run_cancelled_cb,
	    .userdata = &ctx,
	};
	progress(r, "booting", -1, "run %d/%d: %s (%s) on '%s'", r->run_index, r->run_total, key,
		 variant, uri);
	struct guest_host *host = NULL;
	virConnectPtr conn = NULL;
	struct volume_ref kv = {0}, iv = {0};
	struct guest_outcome *out = NULL;
	int rc = hostpool_acquire(r->pool, hidx, cancelled_cb, r);
	if (rc == -ECANCELED) {
		error_set(err, ERR_CANCELLED, ECANCELED, "The job was cancelled.");
		json_object_put(run);
		fs_rm_rf(run_dir, NULL);
		return NULL;
	}
	if (rc < 0) {
		*ret_dropped = true;
		error_set(err, ERR_INFRA, EHOSTDOWN, "The hypervisor host '%s' is down.", uri);
		json_object_put(run);
		fs_rm_rf(run_dir, NULL);
		return NULL;
	}
	rc = hostpool_connect(r->pool, hidx, &host, &conn, err);
	if (rc < 0)
		*ret_dropped = true;
	if (rc >= 0 && !local) {
		/* A remote host boots what libvirt uploaded into its pool. */
		rc = upload_files(conn, art->bzimage, initrd, &kv, &iv, err);
		gs.kernel = kv.path;
		gs.initrd = iv.path;
		gs.files_on_host = true;
	}
	double t0 = now_s();
	if (rc >= 0) {
		if (local)
			slot_acquire(&guest_slots, r->cfg->guest_slots);
		rc = guest_run(host, &gs, &out, err);
		if (local)
			slot_release(&guest_slots);
	}
	/* A host that dropped during the run makes whatever came back (a broken
	 * stream, a cancel) an infrastructure failure, not a kernel's result. */
	if (!cancelled_cb(r) && !hostpool_is_up(r->pool, hidx)) {
		*ret_dropped = true;
		guest_outcome_free(out);
		out = NULL;
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
	if (!local && rc >= 0) {
		/* What the upload cost, for bench/scaleout.sh and the curious. */
		json_object *vols = json_object_new_object();
		const struct volume_ref *refs[] = {&kv, &iv};
		for (size_t i = 0; i < ELEMENTSOF(refs); i++) {
			json_object *v = json_object_new_object();
			json_object_object_add(v, "volume", json_object_new_string(refs[i]->name));
			json_object_object_add(v, "uploaded",
					       json_object_new_boolean(refs[i]->uploaded));
			json_object_object_add(v, "bytes",
					       json_object_new_int64((int64_t)refs[i]->bytes));
			json_object_object_add(v, "seconds",
					       json_object_new_double(refs[i]->seconds));
			json_object_object_add(vols, i == 0 ? "kernel" : "initrd", v);
		}
		json_object_object_add(run, "volumes", vols);
	}
	volume_ref_clear(&kv);
	volume_ref_clear(&iv);
	hostpool_release(r->pool, hidx);
	if (rc < 0) {
		json_object_put(run);
		fs_rm_rf(run_dir, NULL);
		return NULL;
	}
	json_object_object_add(run, "accelerator", json_object_new_string(accel));
	json_object_object_add(run, "status", json_object_new_string(out->status));
	if (out->reason)
		json_object_object_add(run, "reason", json_object_new_string(out->reason));
	json_object_object_add(run, "boot_seconds", json_object_new_double(out->agent_start_s));
	json_object_object_add(run, "duration_seconds", json_object_new_double(now_s() - t0));
	json_object_object_add(run, "kernel_events",
			       out->events ? json_object_get(out->events)
					   : json_object_new_array());
	run_record_fill(run, r->spec, out->frames);
	const char *st = json_object_get_string(get(run, "status"));
	if (strcmp(st, "ok") != 0 && out->console_tail) {
		size_t len = strlen(out->console_tail);
		const char *tail = out->console_tail + (len > 4096 ? len - 4096 : 0);
		json_object_object_add(run, "console_excerpt", json_object_new_string(tail));
	}
	guest_outcome_free(out);
	/* The initrd is big and reproducible from the cache and the plan. */
	fs_rm_rf(run_dir, NULL);
	return run;
}

/* Repeats interleave the variants (A B A B ...), and the first variant of
 * each round alternates, so drift on the host hits every variant alike. */
static json_object *run_order(json_object *spec)
{
	json_object *order = json_object_new_array();
	json_object *variants = get(spec, "variants");
	int n = json_object_object_length(variants),
	    repeat = json_object_get_int(get(spec, "repeat"));
	const char *names[256];
	int k = 0;
	json_object_object_foreach(variants, name, v)
	{
		(void)v;
		if (k < 256)
			names[k++] = name;
	}
	n = k;
	for (int rep = 0; rep < repeat; rep++)
		for (int i = 0; i < n; i++) {
			int idx = rep % 2 == 0 ? i : n - 1 - i;
			char key[160];
			snprintf(key, sizeof(key), "%s#%d", names[idx], rep);
			json_object_array_add(order, json_object_new_string(key));
		}
	return order;
}

/* Runs key on the job's host (or, spread, the round's host), and retries it
 * on another host when its host drops: the run then counts once. */
static json_object *run_placed(struct runner *r, const char *variant, int repeat, const char *key,
			       const char *base_initrd, struct kbuild_artifact *art,
			       const char *accel, struct sl_error *err)
{
	for (size_t attempt = 0; attempt <= hostpool_size(r->pool); attempt++) {
		int h = r->spread
			    ? hostpool_choose_spread(r->pool, &r->cons, repeat, r->excluded, err)
			    : r->job_host;
		if (h < 0)
			return NULL;
		bool dropped = false;
		json_object *run = run_one(r, (size_t)h, variant, repeat, key, base_initrd, art,
					   accel, &dropped, err);
		if (run || !dropped)
			return run;
		progress(r, "running", -1, "run %d/%d: %s: %s Retrying on another host.",
			 r->run_index, r->run_total, key, err ? err->message : "");
		r->excluded[h] = true;
		r->retries++;
		if (!r->spread) {
			hostpool_job_placed(r->pool, (size_t)h, -1);
			r->job_host = hostpool_choose(r->pool, &r->cons, r->excluded, err);
			if (r->job_host < 0)
				return NULL;
			hostpool_job_placed(r->pool, (size_t)r->job_host, 1);
		}
	}
	error_set(err, ERR_INFRA, EHOSTUNREACH, "Run '%s' found no hypervisor host that stayed up.",
		  key);
	return NULL;
}

/* result.placement: how runs were spread, on which hosts, and whether a
 * comparison crossed hosts (then differences between hosts may be in it). */
static void placement_describe(struct runner *r, json_object *result)
{
	json_object *p = json_object_new_object(), *hosts = json_object_new_array();
	json_object_object_foreach(get(result, "variants"), vname, vo)
	{
		(void)vname;
		json_object *runs = get(vo, "runs");
		for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
			const char *h =
			    json_object_get_string(get(json_object_array_get_idx(runs, i), "host"));
			bool seen = false;
			for (size_t k = 0; h && k < json_object_array_length(hosts); k++)
				seen |= strcmp(h, json_object_get_string(
						      json_object_array_get_idx(hosts, k))) == 0;
			if (h && !seen)
				json_object_array_add(hosts, json_object_new_string(h));
		}
	}
	json_object_object_add(p, "mode",
			       json_object_new_string(r->spread ? "spread" : "together"));
	json_object_object_add(p, "crossed_hosts",
			       json_object_new_boolean(json_object_array_length(hosts) > 1));
	json_object_object_add(p, "hosts", hosts);
	json_object_object_add(p, "retried_runs", json_object_new_int(r->retries));
	json_object_object_add(result, "placement", p);
}

static int run_all(struct runner *r, json_object *result, struct built_kernel *built,
		   size_t n_built, const char *base_initrd, const char *accel, struct sl_error *err)
{
	json_object *order = run_order(r->spec);
	json_object_object_add(result, "order", order);
	json_object *variants_out = json_object_new_object();
	json_object_object_add(result, "variants", variants_out);
	json_object_object_foreach(get(r->spec, "variants"), vname, v)
	{
		json_object *vo = json_object_new_object();
		json_object_object_add(vo, "kernel", json_object_get(get(v, "kernel")));
		json_object_object_add(vo, "features", json_object_get(get(v, "features")));
		json_object_object_add(vo, "runs", json_object_new_array());
		json_object_object_add(variants_out, vname, vo);
	}
	int rc = 0;
	r->run_total = (int)json_object_array_length(order);
	for (int i = 0; i < r->run_total; i++) {
		r->run_index = i + 1;
		if (cancelled_cb(r)) {
			rc = error_set(err, ERR_CANCELLED, ECANCELED, "The job was cancelled.");
			break;
		}
		const char *key = json_object_get_string(json_object_array_get_idx(order, i));
		char variant[160];
		snprintf(variant, sizeof(variant), "%s", key);
		char *hash = strrchr(variant, '#');
		int repeat = atoi(hash + 1);
		*hash = '\0';
		json_object *runs = get(get(variants_out, variant), "runs");
		json_object *run = r->hooks && r->hooks->lookup_run
				       ? r->hooks->lookup_run(r->hooks->userdata, key)
				       : NULL;
		if (run) {
			progress(r, "running", -1, "run %d/%d: %s done in an earlier attempt",
				 r->run_index, r->run_total, key);
			json_object_array_add(runs, run);
			continue;
		}
		json_object *vspec = get(get(r->spec, "variants"), variant);
		struct kbuild_artifact *art =
		    built_find(built, n_built, json_object_get_string(get(vspec, "kernel")));
		run = run_placed(r, variant, repeat, key, base_initrd, art, accel, err);
		if (!run) {
			rc = -EIO;
			break;
		}
		const char *st = json_object_get_string(get(run, "status"));
		progress(r, "running", 100.0 * r->run_index / r->run_total, "run %d/%d: %s %s%s%s",
			 r->run_index, r->run_total, key, st, get(run, "reason") ? ": " : "",
			 get(run, "reason") ? json_object_get_string(get(run, "reason")) : "");
		if (r->hooks && r->hooks->run_done)
			r->hooks->run_done(r->hooks->userdata, key, run);
		json_object_array_add(runs, run);
	}
	placement_describe(r, result);
	return rc;
}

/* Everything after the kernels are built: initramfs, accelerator, runs,
 * comparisons. Fills result. */
static int measure(struct runner *r, json_object *result, struct built_kernel *built,
		   size_t n_built, struct sl_error *err)
{
	_cleanup_free_ char *agent = fs_path_join(r->data_dir, "build/agent");
	_cleanup_free_ char *wl = fs_path_join(r->data_dir, "build/workloads");
	struct initramfs_inputs in = {.agent = agent, .workloads_dir = wl};
	_cleanup_free_ char *base_initrd = NULL;
	progress(r, "booting", -1, "assembling the guest initramfs");
	int rc = initramfs_base(r->cache_dir, &in, &base_initrd, err);
	if (rc < 0)
		return rc;

	json_object *acc = get(r->spec, "accelerator");
	const char *want = acc ? json_object_get_string(acc) : "auto";
	if (strcmp(want, "auto") == 0 && r->cfg->accel)
		want = r->cfg->accel;
	struct hostpool *own = NULL;
	r->pool = r->cfg->hostpool;
	if (!r->pool) {
		_cleanup_json_ json_object *one = NULL;
		json_object *hv = r->cfg->hypervisors;
		if (!hv) {
			/* One host, bounded only by guest_slots as before. */
			one = json_object_new_array();
			json_object *h = json_object_new_object();
			json_object_object_add(h, "uri",
					       json_object_new_string(r->cfg->libvirt_uri
									  ? r->cfg->libvirt_uri
									  : HOSTPOOL_LOCAL_URI));
			json_object_object_add(h, "slots", json_object_new_int(HOSTPOOL_MAX_SLOTS));
			json_object_array_add(one, h);
			hv = one;
		}
		rc = hostpool_from_json(hv, "hypervisors", &own, err);
		if (rc < 0)
			return rc;
		r->pool = own;
	}
	/* The accelerator probe boots local files: on the first local host. A
	 * pool of remote hosts only runs TCG unless the job names kvm. */
	int probe_host = -1;
	for (size_t i = 0; i < hostpool_size(r->pool) && probe_host < 0; i++)
		if (hostpool_is_local(r->pool, i))
			probe_host = (int)i;
	char accel[8];
	struct guest_host *host = NULL;
	rc = hostpool_connect(r->pool, probe_host >= 0 ? (size_t)probe_host : 0, &host, NULL, err);
	if (rc >= 0 && probe_host >= 0) {
		progress(r, "booting", -1, "choosing the accelerator (%s)", want);
		rc = accel_resolve(host, r->cache_dir, want, built[0].art->bzimage, base_initrd,
				   accel, err);
	} else if (rc >= 0) {
		snprintf(accel, sizeof(accel), "%s", strcmp(want, "kvm") == 0 ? "kvm" : "tcg");
	}
	json_object *placement = get(r->spec, "placement");
	r->spread = placement && strcmp(json_object_get_string(placement), "spread") == 0;
	const char *labels[HOSTPOOL_MAX_LABELS + 1] = {NULL};
	json_object *jl = get(r->spec, "host_labels");
	for (size_t i = 0; jl && i < json_object_array_length(jl) && i < HOSTPOOL_MAX_LABELS; i++)
		labels[i] = json_object_get_string(json_object_array_get_idx(jl, i));
	r->cons = (struct hostpool_constraints){.accel = accel, .labels = labels};
	r->job_host = -1;
	if (rc >= 0 && !r->spread) {
		rc = r->job_host = hostpool_choose(r->pool, &r->cons, NULL, err);
		if (rc >= 0)
			hostpool_job_placed(r->pool, (size_t)r->job_host, 1);
	}
	if (rc >= 0) {
		json_object_object_add(result, "environment", environment_describe(host, accel));
		rc = run_all(r, result, built, n_built, base_initrd, accel, err);
	}
	if (r->job_host >= 0)
		hostpool_job_placed(r->pool, (size_t)r->job_host, -1);
	r->pool = NULL;
	hostpool_free(own);
	if (rc < 0)
		return rc;

	progress(r, "comparing", -1, "comparing every variant with the baseline");
	json_object *comparisons = NULL, *reasons = NULL;
	char verdict[16];
	rc = compare_result(r->spec, get(result, "variants"), &comparisons, verdict, &reasons, err);
	if (rc < 0)
		return rc;
	json_object_object_add(result, "comparisons", comparisons);
	json_object_object_add(result, "verdict", json_object_new_string(verdict));
	json_object_object_add(result, "verdict_reasons", reasons);
	return 0;
}

int runner_run_job(const struct runner_config *cfg, json_object *spec, const char *job_dir,
		   const struct runner_hooks *hooks, json_object **ret_result, struct sl_error *err)
{
	_cleanup_free_ char *cache_dir =
	    cfg->cache_dir ? strdup(cfg->cache_dir) : fs_default_cache_dir();
	_cleanup_free_ char *data_dir = cfg->data_dir ? strdup(cfg->data_dir) : fs_data_dir();
	struct runner r = {
	    .cfg = cfg,
	    .hooks = hooks,
	    .spec = spec,
	    .job_dir = job_dir,
	    .cache_dir = cache_dir,
	    .data_dir = data_dir,
	};
	char started[32], finished[32];
	now_iso(started);
	int rc = fs_mkdir_p(job_dir, err);
	if (rc < 0)
		return rc;
	_cleanup_json_ json_object *result = json_object_new_object();
	json_object_object_add(result, "schema", json_object_new_string("schedlab.result/v1"));
	json_object_object_add(result, "job", json_object_get(spec));
	json_object *kernels_out = json_object_new_object();
	json_object_object_add(result, "kernels", kernels_out);

	struct built_kernel *built = NULL;
	size_t n_built = 0;
	rc = build_kernels(&r, kernels_out, &built, &n_built, err);
	if (rc >= 0)
		rc = measure(&r, result, built, n_built, err);
	built_free(built, n_built);
	if (rc < 0)
		return rc;
	json_object_object_add(result, "started_at", json_object_new_string(started));
	now_iso(finished);
	json_object_object_add(result, "finished_at", json_object_new_string(finished));
	*ret_result = TAKE_PTR(result);
	return 0;
}
