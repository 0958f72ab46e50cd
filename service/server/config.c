/* The service configuration; see service_config.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "server/config.h"
#include "guest/hostpool.h"
#include "kernel/kbuild.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/parse.h"

#define CONFIG_MAX_BYTES  (1024 * 1024)
#define CONFIG_MAX_TOKENS 256

/* ---- quotas and retention: the defaults (reasons in docs/service.md) ---- */
#define QUOTA_DEFAULT_QUEUED_PER_TOKEN	    20
#define QUOTA_DEFAULT_QUEUED_TOTAL	    200
#define QUOTA_DEFAULT_GUEST_SECONDS_PER_DAY (4LL * 24 * 3600)
#define QUOTA_DEFAULT_BYTES_PER_TOKEN	    (1024LL * 1024 * 1024)
#define QUOTA_DEFAULT_RETRY_AFTER_S	    60
#define RETENTION_DEFAULT_MAX_AGE_S	    (30LL * 24 * 3600)
/* ---- disk (docs/service.md "Disk and memory budgets") ---- */
/* A kernel build takes about 1.5 GB of tree and 1 GB of objects; below
 * this much free space a build could run the disk full half-way. */
#define DISK_DEFAULT_MIN_FREE_BYTES (2ULL << 30)
#define DISK_DEFAULT_WAIT_MAX_S	    3600
/* ---- retention timer (retention_timer.c; docs/service.md) ---- */
#define RETENTION_DEFAULT_INTERVAL_S 3600
#define RETENTION_MAX_INTERVAL_S     (7L * 24 * 3600)

int service_config_new(struct service_config **ret_config, struct sl_error *err)
{
	struct service_config *c = calloc(1, sizeof(*c));
	if (!c)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	c->listen = strdup("127.0.0.1:8080");
	c->max_body_bytes = 8 * 1024 * 1024;
	c->limits = *job_default_limits();
	c->workers = 2;
	c->build_slots = 1;
	c->build_sandbox = true;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	c->guest_slots = cores >= 4 ? (int)(cores / 2) : 1;
	c->min_free_bytes = DISK_DEFAULT_MIN_FREE_BYTES;
	c->disk_wait_max_s = DISK_DEFAULT_WAIT_MAX_S;
	c->max_connections = 512;
	c->max_connections_per_ip = 32;
	c->request_deadline_s = 30;
	c->idle_timeout_s = 60;
	c->max_streams_per_token = 16;
	c->http_threads = 4;
	c->quotas = (struct service_quotas){
	    .max_queued_per_token = QUOTA_DEFAULT_QUEUED_PER_TOKEN,
	    .max_queued_total = QUOTA_DEFAULT_QUEUED_TOTAL,
	    .guest_seconds_per_day = QUOTA_DEFAULT_GUEST_SECONDS_PER_DAY,
	    .max_bytes_per_token = QUOTA_DEFAULT_BYTES_PER_TOKEN,
	    .retry_after_s = QUOTA_DEFAULT_RETRY_AFTER_S,
	};
	c->retention = (struct service_retention){
	    .finished_max_age_s = RETENTION_DEFAULT_MAX_AGE_S,
	    .drop_results = false,
	    .interval_s = RETENTION_DEFAULT_INTERVAL_S,
	};
	*ret_config = c;
	return 0;
}

void service_config_free(struct service_config *c)
{
	if (!c)
		return;
	free(c->listen);
	/* The digests are not secrets the way tokens are, but wipe them anyway. */
	if (c->tokens)
		explicit_bzero(c->tokens, c->n_tokens * sizeof(*c->tokens));
	free(c->tokens);
	free(c->cache_dir);
	free(c->libvirt_uri);
	free(c->accelerator);
	hostpool_free(c->hostpool);
	config_nightly_free(c);
	free(c->tls_cert);
	if (c->tls_key)
		explicit_bzero(c->tls_key, strlen(c->tls_key));
	free(c->tls_key);
	free(c);
}

/* A setting's value v, checked against what the setting takes; every error
 * names the setting by its path ("limits.max_jobs"). */
static int setting_int(json_object *v, const char *path, long min, long max, long *ret,
		       struct sl_error *err)
{
	if (!json_object_is_type(v, json_type_int))
		return error_set_path(err, ERR_INVALID, path, "Setting '%s' must be an integer.",
				      path);
	int64_t n = json_object_get_int64(v);
	if (n < min || n > max)
		return error_set_path(err, ERR_INVALID, path,
				      "Setting '%s' is %lld, outside %ld..%ld.", path, (long long)n,
				      min, max);
	*ret = (long)n;
	return 0;
}

static int setting_str(json_object *v, const char *path, char **ret, struct sl_error *err)
{
	if (!json_object_is_type(v, json_type_string))
		return error_set_path(err, ERR_INVALID, path, "Setting '%s' must be a string.",
				      path);
	char *copy = strdup(json_object_get_string(v));
	if (!copy)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	free(*ret);
	*ret = copy;
	return 0;
}

static int apply_limits(struct service_config *c, json_object *o, struct sl_error *err)
{
	if (!json_object_is_type(o, json_type_object))
		return error_set_path(err, ERR_INVALID, "limits",
				      "Setting 'limits' must be an object.");
	json_object_object_foreach(o, key, v)
	{
		char path[96];
		snprintf(path, sizeof(path), "limits.%s", key);
		long n;
		int r;
		if (strcmp(key, "max_body_bytes") == 0) {
			if ((r = setting_int(v, path, 1024, 1L << 30, &n, err)) < 0)
				return r;
			c->max_body_bytes = (size_t)n;
		} else if (strcmp(key, "max_vcpus") == 0) {
			if ((r = setting_int(v, path, 1, 1024, &n, err)) < 0)
				return r;
			c->limits.max_vcpus = (int)n;
		} else if (strcmp(key, "max_repeat") == 0) {
			if ((r = setting_int(v, path, 1, 10000, &n, err)) < 0)
				return r;
			c->limits.max_repeat = (int)n;
		} else if (strcmp(key, "max_patches") == 0) {
			if ((r = setting_int(v, path, 0, 100000, &n, err)) < 0)
				return r;
			c->limits.max_patches = (int)n;
		} else if (strcmp(key, "max_patch_bytes") == 0) {
			if ((r = setting_int(v, path, 1, 1L << 30, &n, err)) < 0)
				return r;
			c->limits.max_patch_bytes = (size_t)n;
		} else if (strcmp(key, "max_guest_seconds") == 0) {
			if ((r = setting_int(v, path, 1, INT_MAX, &n, err)) < 0)
				return r;
			c->limits.max_guest_seconds = (int)n;
		} else if (strcmp(key, "max_memory_mb") == 0) {
			if ((r = setting_int(v, path, 128, 1 << 20, &n, err)) < 0)
				return r;
			c->limits.max_memory_mb = (int)n;
		} else if (strcmp(key, "max_total_vcpus") == 0) {
			if ((r = setting_int(v, path, 1, 1 << 16, &n, err)) < 0)
				return r;
			c->limits.max_total_vcpus = (int)n;
		} else
			return error_set_path(err, ERR_INVALID, path, "Unknown setting '%s'.",
					      path);
	}
	return 0;
}

/* A token's owner name: "name" (1..64 of letters, digits, '._-@'), unique,
 * or "sha256:" and the first 12 digits of its digest. */
static int token_name(json_object *e, const char *path, struct service_token *t, size_t i,
		      struct sl_error *err)
{
	json_object *name = NULL;
	if (!json_object_object_get_ex(e, "name", &name)) {
		snprintf(t[i].name, sizeof(t[i].name), "sha256:%.12s", t[i].sha256);
		return 0;
	}
	const char *s =
	    json_object_is_type(name, json_type_string) ? json_object_get_string(name) : "";
	size_t n = strlen(s);
	bool ok = n >= 1 && n <= SERVICE_TOKEN_NAME_MAX;
	for (size_t k = 0; ok && k < n; k++)
		ok = (s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') ||
		     (s[k] >= '0' && s[k] <= '9') || strchr("._-@", s[k]);
	if (!ok)
		return error_set_path(err, ERR_INVALID, path,
				      "Setting '%s.name' must be 1 to %d letters, digits or "
				      "'._-@'.",
				      path, SERVICE_TOKEN_NAME_MAX);
	for (size_t k = 0; k < i; k++)
		if (strcmp(t[k].name, s) == 0)
			return error_set_path(err, ERR_INVALID, path,
					      "Token name '%s' in '%s' is used twice.", s, path);
	snprintf(t[i].name, sizeof(t[i].name), "%s", s);
	return 0;
}

/* ---- the "quotas" and "retention" blocks (admission.c, store retention) ---- */

static int apply_quotas(struct service_config *c, json_object *o, struct sl_error *err)
{
	if (!json_object_is_type(o, json_type_object))
		return error_set_path(err, ERR_INVALID, "quotas",
				      "Setting 'quotas' must be an object.");
	json_object_object_foreach(o, key, v)
	{
		char path[96];
		snprintf(path, sizeof(path), "quotas.%s", key);
		long n;
		int r = 0;
		if (strcmp(key, "max_queued_per_token") == 0) {
			if ((r = setting_int(v, path, 0, 1000000, &n, err)) >= 0)
				c->quotas.max_queued_per_token = (int)n;
		} else if (strcmp(key, "max_queued_total") == 0) {
			if ((r = setting_int(v, path, 0, 1000000, &n, err)) >= 0)
				c->quotas.max_queued_total = (int)n;
		} else if (strcmp(key, "guest_seconds_per_day") == 0) {
			if ((r = setting_int(v, path, 0, LONG_MAX, &n, err)) >= 0)
				c->quotas.guest_seconds_per_day = n;
		} else if (strcmp(key, "max_bytes_per_token") == 0) {
			if ((r = setting_int(v, path, 0, LONG_MAX, &n, err)) >= 0)
				c->quotas.max_bytes_per_token = n;
		} else if (strcmp(key, "retry_after_s") == 0) {
			if ((r = setting_int(v, path, 1, 86400, &n, err)) >= 0)
				c->quotas.retry_after_s = (int)n;
		} else
			r = error_set_path(err, ERR_INVALID, path, "Unknown setting '%s'.", path);
		if (r < 0)
			return r;
	}
	return 0;
}

static int apply_retention(struct service_config *c, json_object *o, struct sl_error *err)
{
	if (!json_object_is_type(o, json_type_object))
		return error_set_path(err, ERR_INVALID, "retention",
				      "Setting 'retention' must be an object.");
	json_object_object_foreach(o, key, v)
	{
		char path[96];
		snprintf(path, sizeof(path), "retention.%s", key);
		long n;
		int r = 0;
		if (strcmp(key, "finished_max_age_s") == 0) {
			if ((r = setting_int(v, path, 0, LONG_MAX, &n, err)) >= 0)
				c->retention.finished_max_age_s = n;
		} else if (strcmp(key, "interval_s") == 0) {
			if ((r = setting_int(v, path, 0, RETENTION_MAX_INTERVAL_S, &n, err)) >= 0)
				c->retention.interval_s = n;
		} else if (strcmp(key, "drop_results") == 0) {
			if (!json_object_is_type(v, json_type_boolean))
				r = error_set_path(err, ERR_INVALID, path,
						   "Setting '%s' must be true or false.", path);
			else
				c->retention.drop_results = json_object_get_boolean(v);
		} else
			r = error_set_path(err, ERR_INVALID, path, "Unknown setting '%s'.", path);
		if (r < 0)
			return r;
	}
	return 0;
}

static int apply_tokens(struct service_config *c, json_object *o, struct sl_error *err)
{
	if (!json_object_is_type(o, json_type_array))
		return error_set_path(err, ERR_INVALID, "tokens",
				      "Setting 'tokens' must be an array.");
	size_t n = json_object_array_length(o);
	if (n > CONFIG_MAX_TOKENS)
		return error_set_path(err, ERR_INVALID, "tokens", "More than %d tokens.",
				      CONFIG_MAX_TOKENS);
	struct service_token *t = calloc(n ? n : 1, sizeof(*t));
	if (!t)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(o, i), *tok = NULL, *roles = NULL;
		char path[64];
		snprintf(path, sizeof(path), "tokens[%zu]", i);
		if (!json_object_is_type(e, json_type_object) ||
		    !json_object_object_get_ex(e, "token", &tok) ||
		    !json_object_is_type(tok, json_type_string) ||
		    json_object_get_string_len(tok) < 16) {
			free(t);
			return error_set_path(
			    err, ERR_INVALID, path,
			    "Setting '%s' needs a \"token\" string of at least 16 "
			    "characters.",
			    path);
		}
		hash_buf_hex(json_object_get_string(tok), (size_t)json_object_get_string_len(tok),
			     t[i].sha256);
		if (token_name(e, path, t, i, err) < 0) {
			free(t);
			return -EINVAL;
		}
		if (!json_object_object_get_ex(e, "roles", &roles)) {
			t[i].roles = SERVICE_ROLE_SUBMIT | SERVICE_ROLE_READ;
			continue;
		}
		size_t nr = json_object_is_type(roles, json_type_array)
				? json_object_array_length(roles)
				: 0;
		if (!json_object_is_type(roles, json_type_array)) {
			free(t);
			return error_set_path(err, ERR_INVALID, path,
					      "Setting '%s.roles' must be an array.", path);
		}
		for (size_t k = 0; k < nr; k++) {
			const char *role =
			    json_object_get_string(json_object_array_get_idx(roles, k));
			if (role && strcmp(role, "submit") == 0)
				t[i].roles |= SERVICE_ROLE_SUBMIT;
			else if (role && strcmp(role, "read") == 0)
				t[i].roles |= SERVICE_ROLE_READ;
			else if (role && strcmp(role, "admin") == 0)
				t[i].roles |= SERVICE_ROLE_ADMIN;
			else {
				free(t);
				return error_set_path(
				    err, ERR_INVALID, path,
				    "Role '%s' in '%s' is not submit, read or admin.",
				    role ? role : "", path);
			}
		}
	}
	free(c->tokens);
	c->tokens = t;
	c->n_tokens = n;
	return 0;
}

/* ---- connections and TLS ---- */

/* Reads the PEM file a "tls_cert"/"tls_key" setting names into *ret. The
 * error names the setting, not the file's contents. */
static int setting_pem(json_object *v, const char *key, char **ret, struct sl_error *err)
{
	_cleanup_free_ char *path = NULL;
	int r = setting_str(v, key, &path, err);
	if (r < 0)
		return r;
	char *data = NULL;
	size_t len = 0;
	if (fs_read_file(path, 1024 * 1024, &data, &len, NULL) < 0)
		return error_set_path(err, ERR_INVALID, key,
				      "Setting '%s': the file cannot be read (missing, unreadable "
				      "or over 1 MiB).",
				      key);
	if (len == 0 || !strstr(data, "-----BEGIN ")) {
		if (data)
			explicit_bzero(data, len);
		free(data);
		return error_set_path(err, ERR_INVALID, key,
				      "Setting '%s': the file is not PEM text.", key);
	}
	if (*ret)
		explicit_bzero(*ret, strlen(*ret));
	free(*ret);
	*ret = data;
	return 0;
}

/* The disk settings; *ret_known false for any other key. */
static int apply_disk_key(struct service_config *c, const char *key, json_object *v,
			  bool *ret_known, struct sl_error *err)
{
	long n = 0;
	int r = 0;
	*ret_known = true;
	if (strcmp(key, "cache_max_bytes") == 0) {
		/* 0 turns the bound off; unset, kbuild's default applies */
		if ((r = setting_int(v, key, 0, 1L << 62, &n, err)) >= 0)
			c->cache_max_bytes = n ? (unsigned long long)n : KBUILD_CACHE_UNLIMITED;
	} else if (strcmp(key, "min_free_bytes") == 0) {
		if ((r = setting_int(v, key, 0, 1L << 62, &n, err)) >= 0)
			c->min_free_bytes = (unsigned long long)n;
	} else if (strcmp(key, "disk_wait_max_s") == 0) {
		if ((r = setting_int(v, key, 0, 7L * 86400, &n, err)) >= 0)
			c->disk_wait_max_s = (int)n;
	} else
		*ret_known = false;
	return r;
}

/* The connection settings; *ret_known false for any other key. */
static int apply_connection_key(struct service_config *c, const char *key, json_object *v,
				bool *ret_known, struct sl_error *err)
{
	static const struct {
		const char *key;
		long min, max;
		size_t off;
	} ints[] = {
	    {"max_connections", 8, 65536, offsetof(struct service_config, max_connections)},
	    {"max_connections_per_ip", 1, 65536,
	     offsetof(struct service_config, max_connections_per_ip)},
	    {"request_deadline_s", 1, 3600, offsetof(struct service_config, request_deadline_s)},
	    {"idle_timeout_s", 1, 3600, offsetof(struct service_config, idle_timeout_s)},
	    {"max_streams_per_token", 1, 65536,
	     offsetof(struct service_config, max_streams_per_token)},
	    {"http_threads", 1, 64, offsetof(struct service_config, http_threads)},
	};
	*ret_known = true;
	for (size_t i = 0; i < ELEMENTSOF(ints); i++) {
		if (strcmp(key, ints[i].key) != 0)
			continue;
		long n;
		int r = setting_int(v, key, ints[i].min, ints[i].max, &n, err);
		if (r >= 0)
			*(int *)((char *)c + ints[i].off) = (int)n;
		return r;
	}
	if (strcmp(key, "tls_cert") == 0)
		return setting_pem(v, key, &c->tls_cert, err);
	if (strcmp(key, "tls_key") == 0)
		return setting_pem(v, key, &c->tls_key, err);
	*ret_known = false;
	return 0;
}

int service_config_apply(struct service_config *c, json_object *o, struct sl_error *err)
{
	if (!json_object_is_type(o, json_type_object))
		return error_set(err, ERR_INVALID, EINVAL,
				 "The configuration must be a JSON object.");
	json_object_object_foreach(o, key, v)
	{
		long n;
		int r = 0;
		if (strcmp(key, "listen") == 0)
			r = setting_str(v, key, &c->listen, err);
		else if (strcmp(key, "tokens") == 0)
			r = apply_tokens(c, v, err);
		else if (strcmp(key, "limits") == 0)
			r = apply_limits(c, v, err);
		else if (strcmp(key, "quotas") == 0)
			r = apply_quotas(c, v, err);
		else if (strcmp(key, "retention") == 0)
			r = apply_retention(c, v, err);
		else if (strcmp(key, "workers") == 0) {
			/* 0: jobs are accepted and queued, none is run (maintenance) */
			if ((r = setting_int(v, key, 0, 64, &n, err)) >= 0)
				c->workers = (int)n;
		} else if (strcmp(key, "build_slots") == 0) {
			if ((r = setting_int(v, key, 1, 64, &n, err)) >= 0)
				c->build_slots = (int)n;
		}
		/* Kernel builds: the sandbox and the time limit. */
		else if (strcmp(key, "build_sandbox") == 0) {
			if (!json_object_is_type(v, json_type_boolean))
				r = error_set_path(
				    err, ERR_INVALID, key,
				    "Setting 'build_sandbox' must be true or false.");
			else
				c->build_sandbox = json_object_get_boolean(v);
		} else if (strcmp(key, "build_timeout_s") == 0) {
			if ((r = setting_int(v, key, 1, 86400, &n, err)) >= 0)
				c->build_timeout_s = (int)n;
		} else if (strcmp(key, "guest_slots") == 0) {
			if ((r = setting_int(v, key, 1, 256, &n, err)) >= 0)
				c->guest_slots = (int)n;
		} else if (strcmp(key, "cache_dir") == 0)
			r = setting_str(v, key, &c->cache_dir, err);
		else if (strcmp(key, "libvirt_uri") == 0)
			r = setting_str(v, key, &c->libvirt_uri, err);
		else if (strcmp(key, "accelerator") == 0) {
			if ((r = setting_str(v, key, &c->accelerator, err)) >= 0 &&
			    strcmp(c->accelerator, "auto") != 0 &&
			    strcmp(c->accelerator, "kvm") != 0 &&
			    strcmp(c->accelerator, "tcg") != 0)
				r = error_set_path(
				    err, ERR_INVALID, key,
				    "Setting 'accelerator' is '%s', not auto, kvm or "
				    "tcg.",
				    c->accelerator);
		} else if (strcmp(key, "hypervisors") == 0) {
			struct hostpool *p = NULL;
			if ((r = hostpool_from_json(v, key, &p, err)) >= 0) {
				hostpool_free(c->hostpool);
				c->hostpool = p;
			}
		} else {
			bool known;
			/* Nightly: schedules, git_sources, webhooks (config_nightly.c). */
			r = config_nightly_apply(c, key, v, &known, err);
			if (r >= 0 && !known)
				r = apply_connection_key(c, key, v, &known, err);
			if (r >= 0 && !known)
				r = apply_disk_key(c, key, v, &known, err);
			if (r >= 0 && !known)
				r = error_set_path(err, ERR_INVALID, key, "Unknown setting '%s'.",
						   key);
		}
		if (r < 0)
			return r;
	}
	/* libmicrohttpd splits the connection limit among its threads. */
	if (c->max_connections < c->http_threads)
		return error_set_path(
		    err, ERR_INVALID, "max_connections",
		    "Setting 'max_connections' (%d) is below 'http_threads' (%d).",
		    c->max_connections, c->http_threads);
	if (!c->tls_cert != !c->tls_key)
		return error_set_path(err, ERR_INVALID, c->tls_cert ? "tls_key" : "tls_cert",
				      "Settings 'tls_cert' and 'tls_key' go together: set both or "
				      "neither.");
	return config_nightly_finish(c, err);
}

int service_config_load(const char *path, struct service_config **ret_config, struct sl_error *err)
{
	_cleanup_json_ json_object *o = NULL;
	struct service_config *c = NULL;
	int r = service_config_new(&c, err);
	if (r < 0)
		return r;
	if ((r = json_read_file_strict(path, CONFIG_MAX_BYTES, "configuration", &o, err)) < 0)
		goto fail;
	/* Schedules' job files are relative to the config's directory. */
	{
		_cleanup_free_ char *copy = strdup(path);
		const char *slash = copy ? strrchr(copy, '/') : NULL;
		c->config_dir = !copy	? NULL
				: slash ? strndup(copy, (size_t)(slash - copy) + (slash == copy))
					: strdup(".");
	}
	if ((r = service_config_apply(c, o, err)) < 0) {
		error_prefix(err, "Configuration '%s'", path);
		goto fail;
	}
	*ret_config = c;
	return 0;
fail:
	service_config_free(c);
	return r;
}

int service_config_parse_listen(const char *listen, struct sockaddr_storage *ret_addr,
				socklen_t *ret_len, bool *ret_loopback, struct sl_error *err)
{
	char host[64];
	const char *port_s;
	if (listen[0] == '[') {
		const char *end = strchr(listen, ']');
		if (!end || end[1] != ':' || (size_t)(end - listen - 1) >= sizeof(host))
			goto bad;
		memcpy(host, listen + 1, (size_t)(end - listen - 1));
		host[end - listen - 1] = '\0';
		port_s = end + 2;
	} else {
		const char *colon = strrchr(listen, ':');
		if (!colon || (size_t)(colon - listen) >= sizeof(host))
			goto bad;
		memcpy(host, listen, (size_t)(colon - listen));
		host[colon - listen] = '\0';
		port_s = colon + 1;
	}
	long port;
	if (parse_int(port_s, 0, 65535, &port) < 0)
		goto bad;
	memset(ret_addr, 0, sizeof(*ret_addr));
	struct sockaddr_in *a4 = (struct sockaddr_in *)ret_addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ret_addr;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*ret_len = sizeof(*a4);
		*ret_loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*ret_len = sizeof(*a6);
		*ret_loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
		return 0;
	}
bad:
	return error_set_path(err, ERR_INVALID, "listen",
			      "Listen address '%s' is not IPV4:PORT or [IPV6]:PORT.", listen);
}

const struct service_token *service_config_token_find(const struct service_config *c,
						      const char *token)
{
	if (!token)
		return NULL;
	char digest[HASH_HEX_LEN];
	/* Comparing digests of equal length removes the length leak; the loop
	 * visits every token and every byte whatever matches. */
	hash_buf_hex(token, strlen(token), digest);
	size_t found = 0; /* index + 1 of the match; digests are unique in practice */
	for (size_t i = 0; i < c->n_tokens; i++) {
		unsigned char diff = 0;
		for (size_t k = 0; k < HASH_HEX_LEN - 1; k++)
			diff |= (unsigned char)(digest[k] ^ c->tokens[i].sha256[k]);
		/* 1 when diff is 0, 0 otherwise, without a branch on diff. */
		size_t match = ((unsigned)diff - 1u) >> 8 & 1u;
		found |= (i + 1) & ((size_t)0 - match);
	}
	return found ? &c->tokens[found - 1] : NULL;
}

unsigned service_config_token_roles(const struct service_config *c, const char *token)
{
	const struct service_token *t = service_config_token_find(c, token);
	return t ? t->roles : 0;
}

unsigned service_config_token_match(const struct service_config *c, const char *token,
				    int *ret_index)
{
	const struct service_token *t = service_config_token_find(c, token);
	*ret_index = t ? (int)(t - c->tokens) : -1;
	return t ? t->roles : 0;
}
