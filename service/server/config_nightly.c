/* The config's nightly keys: schedules, git_sources, webhooks (see
 * config_nightly.h; docs/service.md "Schedules"). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "job/job.h"
#include "job/source_policy.h"
#include "server/config.h"
#include "util/fs.h"
#include "util/json.h"

#define JOB_FILE_MAX_BYTES (8 * 1024 * 1024)
#define WEBHOOK_URL_MAX	   2048
#define WEBHOOK_SECRET_MAX 256

static void free_schedules(struct service_config *c);
static void free_webhooks(struct service_config *c);

static const char *member_str(json_object *o, const char *key, const char *path, bool required,
			      struct sl_error *err, int *r)
{
	json_object *v = NULL;
	*r = 0;
	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			*r = error_set_path(err, ERR_INVALID, path, "Setting '%s' is missing.",
					    path);
		return NULL;
	}
	if (!json_object_is_type(v, json_type_string)) {
		*r = error_set_path(err, ERR_INVALID, path, "Setting '%s' must be a string.", path);
		return NULL;
	}
	return json_object_get_string(v);
}

/* Replaces the "@REF" of each git: source in the job's kernels (the full
 * form's "kernels" and the shorthand's "base") with ref. A job without a
 * git: source is an error: the ref would mean nothing. */
static int apply_source_ref(json_object *job, const char *ref, const char *path,
			    struct sl_error *err)
{
	json_object *kernels = NULL, *base = NULL;
	json_object *list[64];
	size_t n = 0;
	if (json_object_object_get_ex(job, "kernels", &kernels) &&
	    json_object_is_type(kernels, json_type_object)) {
		json_object_object_foreach(kernels, kname, k)
		{
			(void)kname;
			if (n < ELEMENTSOF(list))
				list[n++] = k;
		}
	}
	if (json_object_object_get_ex(job, "base", &base) && n < ELEMENTSOF(list))
		list[n++] = base;
	int changed = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *src = NULL;
		if (!json_object_is_type(list[i], json_type_object) ||
		    !json_object_object_get_ex(list[i], "source", &src) ||
		    !json_object_is_type(src, json_type_string))
			continue;
		const char *s = json_object_get_string(src);
		if (strncmp(s, "git:", 4) != 0)
			continue;
		const char *at = strrchr(s, '@');
		size_t keep = at ? (size_t)(at - s) : strlen(s);
		_cleanup_free_ char *next = NULL;
		if (asprintf(&next, "%.*s@%s", (int)keep, s, ref) < 0)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		json_object_object_add(list[i], "source", json_object_new_string(next));
		changed++;
	}
	if (!changed)
		return error_set_path(err, ERR_INVALID, path,
				      "Setting '%s' needs a job with a 'git:' kernel source.",
				      path);
	return 0;
}

static int read_job(struct service_config *c, json_object *v, const char *path, json_object **ret,
		    struct sl_error *err)
{
	if (json_object_is_type(v, json_type_object)) {
		/* a deep copy: the config object goes when loading ends */
		json_object *copy = NULL;
		if (json_object_deep_copy(v, &copy, NULL) < 0)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		*ret = copy;
		return 0;
	}
	if (!json_object_is_type(v, json_type_string) || !json_object_get_string_len(v))
		return error_set_path(err, ERR_INVALID, path,
				      "Setting '%s' must be a job object or a job file's path.",
				      path);
	const char *file = json_object_get_string(v);
	_cleanup_free_ char *full =
	    file[0] == '/' || !c->config_dir ? strdup(file) : fs_path_join(c->config_dir, file);
	if (!full)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int r = json_read_file_strict(full, JOB_FILE_MAX_BYTES, "job file", ret, err);
	if (r < 0)
		return error_prefix(err, "Setting '%s'", path);
	if (!json_object_is_type(*ret, json_type_object)) {
		json_object_put(*ret);
		*ret = NULL;
		return error_set_path(err, ERR_INVALID, path,
				      "Setting '%s': the job file must hold a JSON object.", path);
	}
	return 0;
}

static int apply_schedule(struct service_config *c, json_object *e, size_t i,
			  struct service_schedule *s, struct sl_error *err)
{
	char path[96];
	int r;
	snprintf(path, sizeof(path), "schedules[%zu]", i);
	if (!json_object_is_type(e, json_type_object))
		return error_set_path(err, ERR_INVALID, path, "Setting '%s' must be an object.",
				      path);
	json_object_object_foreach(e, key, val)
	{
		(void)val;
		if (strcmp(key, "name") && strcmp(key, "job") && strcmp(key, "at") &&
		    strcmp(key, "source_ref")) {
			snprintf(path, sizeof(path), "schedules[%zu].%.32s", i, key);
			return error_set_path(err, ERR_INVALID, path, "Unknown setting '%s'.",
					      path);
		}
	}
	snprintf(path, sizeof(path), "schedules[%zu].name", i);
	const char *name = member_str(e, "name", path, true, err, &r);
	if (r < 0)
		return r;
	if (!job_name_valid(name))
		return error_set_path(err, ERR_INVALID, path,
				      "Setting '%s' must be 1-%d of letters, digits, '.', '_' and "
				      "'-', not starting with '.' or '-'.",
				      path, SCHEDULE_NAME_MAX);
	for (size_t j = 0; j < i; j++)
		if (strcmp(c->schedules[j].name, name) == 0)
			return error_set_path(err, ERR_INVALID, path,
					      "Setting '%s': schedule '%s' is named twice.", path,
					      name);
	s->name = strdup(name);
	snprintf(path, sizeof(path), "schedules[%zu].at", i);
	const char *at = member_str(e, "at", path, true, err, &r);
	if (r < 0 || (r = cron_parse(at, path, &s->cron, err)) < 0)
		return r;
	s->at = strdup(at);
	snprintf(path, sizeof(path), "schedules[%zu].job", i);
	json_object *job = NULL;
	if (!json_object_object_get_ex(e, "job", &job))
		return error_set_path(err, ERR_INVALID, path, "Setting '%s' is missing.", path);
	if ((r = read_job(c, job, path, &s->job, err)) < 0)
		return r;
	/* The schedule's name is the job's name, so the trend's series. */
	json_object_object_add(s->job, "name", json_object_new_string(s->name));
	snprintf(path, sizeof(path), "schedules[%zu].source_ref", i);
	const char *ref = member_str(e, "source_ref", path, false, err, &r);
	if (r < 0)
		return r;
	if (ref) {
		if (!job_source_ref_valid(ref))
			return error_set_path(
			    err, ERR_INVALID, path,
			    "Setting '%s' must be a git ref of 1-%d of letters, "
			    "digits and '._/^~-', not starting with '-' and without "
			    "'..'.",
			    path, JOB_SOURCE_REF_MAX);
		if ((r = apply_source_ref(s->job, ref, path, err)) < 0)
			return r;
		s->source_ref = strdup(ref);
	}
	return 0;
}

static int apply_schedules(struct service_config *c, json_object *v, struct sl_error *err)
{
	if (!json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) > CONFIG_MAX_SCHEDULES)
		return error_set_path(err, ERR_INVALID, "schedules",
				      "Setting 'schedules' must be an array of at most %d "
				      "schedules.",
				      CONFIG_MAX_SCHEDULES);
	free_schedules(c);
	size_t n = json_object_array_length(v);
	c->schedules = calloc(n ? n : 1, sizeof(*c->schedules));
	if (!c->schedules)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < n; i++) {
		c->n_schedules = i + 1; /* freed with c, whatever fails */
		int r =
		    apply_schedule(c, json_object_array_get_idx(v, i), i, &c->schedules[i], err);
		if (r < 0)
			return r;
	}
	c->n_schedules = n;
	return 0;
}

static int apply_git_sources(struct service_config *c, json_object *v, struct sl_error *err)
{
	if (!json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) > CONFIG_MAX_GIT_SOURCES)
		return error_set_path(err, ERR_INVALID, "git_sources",
				      "Setting 'git_sources' must be an array of at most %d "
				      "directories.",
				      CONFIG_MAX_GIT_SOURCES);
	size_t n = json_object_array_length(v);
	for (size_t i = 0; i < c->n_git_sources; i++)
		free(c->git_sources[i]);
	free(c->git_sources);
	c->n_git_sources = 0;
	c->git_sources = calloc(n ? n : 1, sizeof(*c->git_sources));
	if (!c->git_sources)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < n; i++) {
		char path[48];
		snprintf(path, sizeof(path), "git_sources[%zu]", i);
		json_object *e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string) ||
		    json_object_get_string(e)[0] != '/')
			return error_set_path(err, ERR_INVALID, path,
					      "Setting '%s' must be an absolute directory path.",
					      path);
		/* Resolved once here: symlinks and ".." in the setting are the
		 * operator's, and what is allowed is where they lead. */
		char *real = realpath(json_object_get_string(e), NULL);
		struct stat st;
		if (!real || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
			free(real);
			return error_set_path(err, ERR_INVALID, path,
					      "Setting '%s' ('%s') is not an existing directory.",
					      path, json_object_get_string(e));
		}
		c->git_sources[c->n_git_sources++] = real;
	}
	return 0;
}

static int apply_webhooks(struct service_config *c, json_object *v, struct sl_error *err)
{
	if (!json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) > CONFIG_MAX_WEBHOOKS)
		return error_set_path(err, ERR_INVALID, "webhooks",
				      "Setting 'webhooks' must be an array of at most %d "
				      "webhooks.",
				      CONFIG_MAX_WEBHOOKS);
	size_t n = json_object_array_length(v);
	free_webhooks(c);
	c->webhooks = calloc(n ? n : 1, sizeof(*c->webhooks));
	if (!c->webhooks)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	for (size_t i = 0; i < n; i++) {
		char path[48];
		int r;
		json_object *e = json_object_array_get_idx(v, i);
		snprintf(path, sizeof(path), "webhooks[%zu]", i);
		if (!json_object_is_type(e, json_type_object))
			return error_set_path(err, ERR_INVALID, path,
					      "Setting '%s' must be an object.", path);
		json_object_object_foreach(e, key, val)
		{
			(void)val;
			if (strcmp(key, "url") && strcmp(key, "secret")) {
				snprintf(path, sizeof(path), "webhooks[%zu].%.16s", i, key);
				return error_set_path(err, ERR_INVALID, path,
						      "Unknown setting '%s'.", path);
			}
		}
		struct service_webhook *w = &c->webhooks[i];
		c->n_webhooks = i + 1;
		snprintf(path, sizeof(path), "webhooks[%zu].url", i);
		const char *url = member_str(e, "url", path, true, err, &r);
		if (r < 0)
			return r;
		if (strlen(url) > WEBHOOK_URL_MAX ||
		    (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) ||
		    strpbrk(url, " \t\r\n"))
			return error_set_path(
			    err, ERR_INVALID, path,
			    "Setting '%s' must be an http:// or https:// URL of at "
			    "most %d characters.",
			    path, WEBHOOK_URL_MAX);
		w->url = strdup(url);
		snprintf(path, sizeof(path), "webhooks[%zu].secret", i);
		const char *secret = member_str(e, "secret", path, false, err, &r);
		if (r < 0)
			return r;
		if (secret && (!secret[0] || strlen(secret) > WEBHOOK_SECRET_MAX))
			return error_set_path(err, ERR_INVALID, path,
					      "Setting '%s' must be 1-%d characters.", path,
					      WEBHOOK_SECRET_MAX);
		w->secret = secret ? strdup(secret) : NULL;
	}
	return 0;
}

int config_nightly_apply(struct service_config *c, const char *key, json_object *v, bool *ret_known,
			 struct sl_error *err)
{
	*ret_known = true;
	if (strcmp(key, "schedules") == 0)
		return apply_schedules(c, v, err);
	if (strcmp(key, "git_sources") == 0)
		return apply_git_sources(c, v, err);
	if (strcmp(key, "webhooks") == 0)
		return apply_webhooks(c, v, err);
	/* From change point to culprit.  */
	if (strcmp(key, "bisect_change_points") == 0) {
		if (!json_object_is_type(v, json_type_boolean))
			return error_set_path(err, ERR_INVALID, key,
					      "Setting 'bisect_change_points' must be true or "
					      "false.");
		c->bisect_change_points = json_object_get_boolean(v);
		return 0;
	}
	*ret_known = false;
	return 0;
}

int config_nightly_finish(struct service_config *c, struct sl_error *err)
{
	c->limits.git_sources = c->git_sources;
	c->limits.n_git_sources = c->n_git_sources;
	for (size_t i = 0; i < c->n_schedules; i++) {
		_cleanup_json_ json_object *expanded = NULL;
		int r = job_expand_json(c->schedules[i].job, JOB_ORIGIN_SERVICE, NULL, &c->limits,
					&expanded, err);
		if (r < 0)
			return error_prefix(err, "Setting 'schedules[%zu].job'", i);
	}
	return 0;
}

static void free_schedules(struct service_config *c)
{
	for (size_t i = 0; i < c->n_schedules; i++) {
		free(c->schedules[i].name);
		json_object_put(c->schedules[i].job);
		free(c->schedules[i].at);
		free(c->schedules[i].source_ref);
	}
	free(c->schedules);
	c->schedules = NULL;
	c->n_schedules = 0;
}

static void free_webhooks(struct service_config *c)
{
	for (size_t i = 0; i < c->n_webhooks; i++) {
		free(c->webhooks[i].url);
		if (c->webhooks[i].secret)
			explicit_bzero(c->webhooks[i].secret, strlen(c->webhooks[i].secret));
		free(c->webhooks[i].secret);
	}
	free(c->webhooks);
	c->webhooks = NULL;
	c->n_webhooks = 0;
}

void config_nightly_free(struct service_config *c)
{
	free_schedules(c);
	for (size_t i = 0; i < c->n_git_sources; i++)
		free(c->git_sources[i]);
	free(c->git_sources);
	c->git_sources = NULL;
	c->n_git_sources = 0;
	free_webhooks(c);
	free(c->config_dir);
	c->config_dir = NULL;
}
