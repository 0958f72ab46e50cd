/* The scripted guest of fake_guest.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "helpers/fake_guest.h"
#include "guest/guest.h"
#include "kernel/kbuild.h"
#include "run/runner-internal.h"
#include "util/fs.h"

void fake_guest_begin(struct fake_guest *fg)
{
	memset(fg, 0, sizeof(*fg));
	pthread_mutex_init(&fg->lock, NULL);
	snprintf(fg->tmpdir, sizeof(fg->tmpdir), "/tmp/fake-guest-XXXXXX");
	if (!mkdtemp(fg->tmpdir))
		abort();
	runner_set_guest_hook(fake_guest_run, fg);
	runner_set_kernel_hook(fake_guest_kernel, fg);
}

void fake_guest_end(struct fake_guest *fg)
{
	runner_set_guest_hook(NULL, NULL);
	runner_set_kernel_hook(NULL, NULL);
	fs_rm_rf(fg->tmpdir, NULL);
	pthread_mutex_destroy(&fg->lock);
}

static size_t variant_slot(struct fake_guest *fg, const char *variant)
{
	for (size_t i = 0; i < fg->n_variants; i++)
		if (strcmp(fg->variants[i].name, variant) == 0)
			return i;
	if (fg->n_variants == FAKE_GUEST_MAX_VARIANTS)
		abort();
	size_t i = fg->n_variants++;
	snprintf(fg->variants[i].name, sizeof(fg->variants[i].name), "%s", variant);
	fg->variants[i].seconds = 1.0;
	fg->variants[i].spread_pct = 2.0;
	return i;
}

void fake_guest_variant(struct fake_guest *fg, const char *variant, double seconds,
			double spread_pct)
{
	pthread_mutex_lock(&fg->lock);
	size_t i = variant_slot(fg, variant);
	fg->variants[i].seconds = seconds;
	fg->variants[i].spread_pct = spread_pct;
	pthread_mutex_unlock(&fg->lock);
}

void fake_guest_script(struct fake_guest *fg, const char *key, enum fake_guest_kind kind)
{
	pthread_mutex_lock(&fg->lock);
	if (fg->n_steps == FAKE_GUEST_MAX_STEPS)
		abort();
	size_t i = fg->n_steps++;
	snprintf(fg->steps[i].key, sizeof(fg->steps[i].key), "%s", key ? key : "");
	fg->steps[i].kind = kind;
	pthread_mutex_unlock(&fg->lock);
}

const char *fake_guest_seen(struct fake_guest *fg)
{
	static char buf[FAKE_GUEST_MAX_SEEN * (RUN_KEY_STRLEN + 1)];
	size_t len = 0;
	buf[0] = '\0';
	pthread_mutex_lock(&fg->lock);
	for (size_t i = 0; i < fg->n_seen; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? " " : "",
					fg->seen[i]);
	pthread_mutex_unlock(&fg->lock);
	return buf;
}

static json_object *frame(const char *kind, json_object *payload)
{
	json_object *f = json_object_new_object();
	json_object_object_add(f, "kind", json_object_new_string(kind));
	json_object_object_add(f, "payload", payload);
	return f;
}

/* What the agent sends for a job of one hackbench workload: its workload
 * frame (the tool's stdout, which metrics/hackbench.c parses) and the
 * summary (agent/ writes both; run_record_fill reads them). */
static json_object *agent_frames(double seconds)
{
	char out[256];
	snprintf(out, sizeof(out),
		 "Running in process mode with 2 groups using 10 file descriptors each (== 40 "
		 "tasks)\nEach sender will pass 100 messages of 100 bytes\nTime: %.4f\n",
		 seconds);
	json_object *w = json_object_new_object();
	json_object_object_add(w, "index", json_object_new_int(0));
	json_object_object_add(w, "exit_code", json_object_new_int(0));
	json_object_object_add(w, "timed_out", json_object_new_boolean(false));
	json_object_object_add(w, "stdout", json_object_new_string(out));
	json_object_object_add(w, "stderr", json_object_new_string(""));
	json_object *frames = json_object_new_array();
	json_object_array_add(frames, frame("workload", w));
	json_object_array_add(
	    frames, frame("summary", json_tokener_parse("{\"uname\":\"6.1.0\",\"features\":{"
							"\"requested\":[],\"applied\":[],"
							"\"errors\":[]},\"errors\":[]}")));
	return frames;
}

/* The scripted kind of key's run: its own one-shot step, else the next
 * step for any run, else ok. Called with the lock held. */
static enum fake_guest_kind next_kind(struct fake_guest *fg, const char *key)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < fg->n_steps; i++) {
			if (fg->steps[i].used)
				continue;
			const char *want = fg->steps[i].key;
			if (pass == 0 ? strcmp(want, key) == 0 : want[0] == '\0') {
				fg->steps[i].used = true;
				return fg->steps[i].kind;
			}
		}
	return FAKE_GUEST_OK;
}

int fake_guest_run(void *userdata, const struct run_key *k, struct guest_host *h,
		   const struct guest_spec *spec, struct guest_outcome **ret, struct sl_error *err)
{
	(void)h;
	struct fake_guest *fg = userdata;
	char key[RUN_KEY_STRLEN];
	run_key_format(k, key);
	if (!spec->kernel || !fs_exists(spec->kernel) || !spec->initrd || !fs_exists(spec->initrd))
		return error_set(err, ERR_INTERNAL, ENOENT,
				 "fake guest: run '%s' got no kernel or initrd file.", key);
	pthread_mutex_lock(&fg->lock);
	if (fg->n_seen < FAKE_GUEST_MAX_SEEN)
		snprintf(fg->seen[fg->n_seen++], RUN_KEY_STRLEN, "%s", key);
	enum fake_guest_kind kind = next_kind(fg, key);
	size_t v = variant_slot(fg, k->variant);
	/* -spread .. +spread in five steps, a different one for each run */
	double s = fg->variants[v].seconds * (1.0 + fg->variants[v].spread_pct / 100.0 *
							(fg->variants[v].runs++ % 5 - 2) / 2.0);
	pthread_mutex_unlock(&fg->lock);

	struct guest_outcome *o = calloc(1, sizeof(*o));
	if (!o)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	static const char *const status[] = {
	    [FAKE_GUEST_OK] = "ok",	      [FAKE_GUEST_HUNG] = "hung",
	    [FAKE_GUEST_CRASHED] = "crashed", [FAKE_GUEST_ERROR] = "error",
	    [FAKE_GUEST_NOISY] = "ok",
	};
	static const char *const reason[] = {
	    [FAKE_GUEST_HUNG] = "The deadline passed (fake guest).",
	    [FAKE_GUEST_CRASHED] = "The guest crashed without a panic line (fake guest).",
	    [FAKE_GUEST_ERROR] = "The guest stopped without a summary frame (fake guest).",
	    [FAKE_GUEST_NOISY] = NULL,
	};
	snprintf(o->status, sizeof(o->status), "%s", status[kind]);
	o->reason = reason[kind] ? strdup(reason[kind]) : NULL;
	o->events = json_object_new_array();
	o->console_tail = strdup("[    0.000000] Linux version 6.1.0 (fake guest)\n");
	o->frames = kind == FAKE_GUEST_OK || kind == FAKE_GUEST_NOISY ? agent_frames(s)
								      : json_object_new_array();
	o->create_s = 0.1;
	o->boot_s = o->agent_start_s = 1.0;
	o->total_s = 2.0;
	/* interference.h's figures: a quiet host, or one that starved the
	 * vCPUs while other processes kept its CPUs busy (noise_mark_run) */
	o->interference = json_object_new_object();
	json_object_object_add(o->interference, "vcpu_wait_pct",
			       json_object_new_double(kind == FAKE_GUEST_NOISY ? 60.0 : 0.5));
	json_object_object_add(o->interference, "others_busy_pct",
			       json_object_new_double(kind == FAKE_GUEST_NOISY ? 90.0 : 1.0));
	snprintf(o->accel, sizeof(o->accel), "%s", spec->accel ? spec->accel : "tcg");
	snprintf(o->domain, sizeof(o->domain), "%s%s", GUEST_DOMAIN_PREFIX, spec->run_id);
	*ret = o;
	return 0;
}

int fake_guest_kernel(void *userdata, const char *name, struct kbuild_artifact **ret,
		      struct sl_error *err)
{
	struct fake_guest *fg = userdata;
	struct kbuild_artifact *a = calloc(1, sizeof(*a));
	if (!a)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	/* a key of the name's own: each kernel its own artifact */
	snprintf(a->key, sizeof(a->key), "%064zx", strlen(name));
	a->dir = fs_path_join(fg->tmpdir, name);
	a->bzimage = fs_path_join(a->dir, "bzImage");
	a->config = fs_path_join(a->dir, "config");
	a->log = fs_path_join(a->dir, "build.log");
	a->meta_path = fs_path_join(a->dir, "meta.json");
	a->meta = json_object_new_object();
	json_object_object_add(a->meta, "key", json_object_new_string(a->key));
	json_object_object_add(a->meta, "source", json_object_new_string("fake"));
	a->cached = true;
	if (fs_mkdir_p(a->dir, err) < 0 ||
	    fs_write_file_atomic(a->bzimage, "not a kernel\n", 13, err) < 0 ||
	    fs_write_file_atomic(a->config, "CONFIG_SCHED_DEBUG=y\n", 21, err) < 0) {
		kbuild_artifact_free(a);
		return -EIO;
	}
	*ret = a;
	return 0;
}
