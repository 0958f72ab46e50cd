/* The accelerator probe and its per-host cache: see accel.h. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "guest/accel.h"
#include "util/fs.h"
#include "util/json.h"

static pthread_mutex_t accel_lock = PTHREAD_MUTEX_INITIALIZER;

int accel_probe(struct guest_host *h, const char *kernel, const char *initrd, char ret[8],
		char **ret_reason, struct sl_error *err)
{
	struct guest_outcome *o = NULL;
	struct sl_error perr = {0};
	char id[64];
	char *reason = NULL;

	snprintf(id, sizeof(id), "accel-probe-%d-%ld", (int)getpid(), (long)time(NULL));
	struct guest_spec s = {
	    .run_id = id,
	    .kernel = kernel,
	    .initrd = initrd,
	    .vcpus = 1,
	    .memory_mb = 256,
	    .accel = "kvm",
	    .deadline_s = ACCEL_PROBE_TIMEOUT_S,
	    .probe = true,
	};
	int r = guest_run(h, &s, &o, &perr);
	if (r < 0 && perr.kind != ERR_INFRA) {
		if (err)
			*err = perr;
		return r;
	}
	if (r < 0) {
		/* No KVM domain at all (no /dev/kvm, no kvm domain type). */
		strcpy(ret, "tcg");
		if (asprintf(&reason, "A KVM guest could not start: %s", perr.message) < 0)
			reason = NULL;
	} else if (strcmp(o->status, "ok") == 0) {
		strcpy(ret, "kvm");
		if (asprintf(&reason, "A KVM guest printed its kernel banner within %.1f s.",
			     o->total_s) < 0)
			reason = NULL;
	} else {
		strcpy(ret, "tcg");
		if (asprintf(&reason,
			     "A KVM guest printed nothing within %d s (status '%s'); KVM does "
			     "not run normal kernels on this host.",
			     ACCEL_PROBE_TIMEOUT_S, o->status) < 0)
			reason = NULL;
	}
	guest_outcome_free(o);
	if (ret_reason)
		*ret_reason = reason;
	else
		free(reason);
	return 0;
}

static char *cache_key(struct guest_host *h)
{
	char qemu[32] = "?", lv[32] = "?";
	struct utsname u;
	char *key = NULL;
	guest_host_versions(h, qemu, lv, NULL);
	if (uname(&u) < 0)
		strcpy(u.release, "?");
	if (asprintf(&key, "%s|qemu %s|host %s", guest_host_uri(h), qemu, u.release) < 0)
		return NULL;
	return key;
}

int accel_resolve(struct guest_host *h, const char *cache_dir, const char *requested,
		  const char *kernel, const char *initrd, char ret[8], struct sl_error *err)
{
	if (requested && (strcmp(requested, "kvm") == 0 || strcmp(requested, "tcg") == 0)) {
		snprintf(ret, 8, "%s", requested);
		return 0;
	}
	if (requested && strcmp(requested, "auto") != 0)
		return error_set_path(err, ERR_INVALID, "accelerator",
				      "The accelerator '%s' is not 'auto', 'kvm' or 'tcg'.",
				      requested);

	_cleanup_free_ char *key = cache_key(h);
	_cleanup_free_ char *path = fs_path_join(cache_dir, "accel.json");
	_cleanup_json_ json_object *j = NULL;
	if (!key)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");

	/* One probe at a time in this process: parallel runs share its answer. */
	pthread_mutex_lock(&accel_lock);
	/* A cache that cannot be read or parsed costs a probe, nothing more. */
	if (json_read_file_strict(path, 64 * 1024, "accelerator cache", &j, NULL) == 0) {
		const char *k = json_object_get_string(json_object_object_get(j, "key"));
		const char *a = json_object_get_string(json_object_object_get(j, "accelerator"));
		if (k && a && strcmp(k, key) == 0 &&
		    (strcmp(a, "kvm") == 0 || strcmp(a, "tcg") == 0)) {
			snprintf(ret, 8, "%s", a);
			pthread_mutex_unlock(&accel_lock);
			return 0;
		}
	}
	if (!kernel || !initrd) {
		pthread_mutex_unlock(&accel_lock);
		return error_set(err, ERR_INVALID, EINVAL,
				 "The accelerator is 'auto' and this host was never probed, but no "
				 "kernel was given to probe with.");
	}
	char a[8];
	_cleanup_free_ char *reason = NULL;
	int r = accel_probe(h, kernel, initrd, a, &reason, err);
	if (r >= 0) {
		_cleanup_json_ json_object *c = json_object_new_object();
		json_object_object_add(c, "key", json_object_new_string(key));
		json_object_object_add(c, "accelerator", json_object_new_string(a));
		json_object_object_add(c, "reason", json_object_new_string(reason ? reason : ""));
		json_object_object_add(c, "probed_at", json_object_new_int64(time(NULL)));
		const char *out = json_object_to_json_string_ext(c, JSON_C_TO_STRING_PRETTY);
		/* A cache that cannot be written costs a probe next time, nothing more. */
		if (fs_mkdir_p(cache_dir, NULL) == 0)
			fs_write_file_atomic(path, out, strlen(out), NULL);
		snprintf(ret, 8, "%s", a);
	}
	pthread_mutex_unlock(&accel_lock);
	return r;
}
