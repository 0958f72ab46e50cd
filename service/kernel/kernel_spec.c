/* Kernel specs and series files (see kernel_spec.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel/kernel_spec.h"
#include "util/fs.h"
#include "util/macro.h"

void kernel_spec_free(struct kernel_spec *s)
{
	if (!s)
		return;
	free(s->source);
	strv_free(s->patches);
	free(s->config);
	free(s->debug);
	free(s->debug_config);
	kernel_spec_free(s->base);
	free(s);
}

static void kernel_spec_freep(struct kernel_spec **s)
{
	kernel_spec_free(*s);
}

/* Joins a relative path onto base and checks that it names a regular file;
 * *ret is the canonical absolute path. */
static int resolve_file(const char *base_dir, const char *p, const char *field, char **ret,
			struct sl_error *err)
{
	if (!*p || strlen(p) >= PATH_MAX)
		return error_set_path(err, ERR_INVALID, field,
				      "The path in '%s' is empty or too long.", field);
	_cleanup_free_ char *joined =
	    p[0] == '/' || !base_dir ? strdup(p) : fs_path_join(base_dir, p);
	if (!joined)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	char real[PATH_MAX];
	struct stat st;
	if (!realpath(joined, real) || stat(real, &st) < 0) {
		int e = errno;
		error_set_path(err, e == ENOENT ? ERR_NOT_FOUND : ERR_INVALID, field,
			       "The file '%s' named in '%s' cannot be used: %s.", joined, field,
			       strerror(e));
		err->errnum = e;
		return -e;
	}
	if (!S_ISREG(st.st_mode))
		return error_set_path(err, ERR_INVALID, field,
				      "The path '%s' named in '%s' is not a regular file.", joined,
				      field);
	*ret = strdup(real);
	if (!*ret)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	return 0;
}

/* Appends p (taking it, also on failure) to the NULL-terminated vector *v. */
static int patches_push(char ***v, char *p, struct sl_error *err)
{
	size_t n = 0;
	while (*v && (*v)[n])
		n++;
	if (n >= KBUILD_MAX_PATCHES) {
		free(p);
		return error_set_path(err, ERR_TOO_LARGE, "patches",
				      "A kernel spec may name at most %d patches.",
				      KBUILD_MAX_PATCHES);
	}
	char **nv = realloc(*v, (n + 2) * sizeof(char *));
	if (!nv) {
		free(p);
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	*v = nv;
	nv[n++] = p;
	nv[n] = NULL;
	return 0;
}

int kernel_series_read(const char *series, char ***ret_patches, struct sl_error *err)
{
	_cleanup_free_ char *data = NULL;
	int r = fs_read_file(series, KBUILD_MAX_SERIES_BYTES, &data, NULL, err);
	if (r < 0)
		return error_prefix(err, "Cannot read the series file");
	_cleanup_free_ char *dir = strdup(series);
	if (!dir)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	_cleanup_strv_free_ char **v = NULL;
	char *save = NULL;
	unsigned lineno = 0;
	for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		size_t len = strlen(line);
		while (len > 0 &&
		       (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len)
			continue;
		/* quilt series may carry options like "-p1"; only -p1 is supported */
		char *sp = strpbrk(line, " \t");
		if (sp) {
			*sp++ = '\0';
			while (*sp == ' ' || *sp == '\t')
				sp++;
			if (strcmp(sp, "-p1") != 0)
				return error_set_path(err, ERR_INVALID, "series",
						      "Series file '%s' line %u has an unsupported "
						      "option '%s' (only -p1).",
						      series, lineno, sp);
		}
		char *p = NULL;
		r = resolve_file(dir, line, "series", &p, err);
		if (r < 0)
			return error_prefix(err, "Series file '%s' line %u", series, lineno);
		r = patches_push(&v, p, err);
		if (r < 0)
			return r;
	}
	if (!v) {
		v = calloc(1, sizeof(char *));
		if (!v)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	*ret_patches = TAKE_PTR(v);
	return 0;
}

/* Sets s->source; a relative tarball path is relative to base_dir. */
static int spec_set_source(struct kernel_spec *s, const char *src, const char *base_dir,
			   struct sl_error *err)
{
	free(s->source);
	s->source = NULL;
	if (strncmp(src, "tarball:", 8) == 0 && src[8] != '/') {
		_cleanup_free_ char *abs = NULL;
		int r = resolve_file(base_dir, src + 8, "$.source", &abs, err);
		if (r < 0)
			return r;
		if (asprintf(&s->source, "tarball:%s", abs) < 0) {
			s->source = NULL;
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		}
	} else if (!(s->source = strdup(src)))
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	return 0;
}

int kernel_spec_new(const char *source, const char *base_dir, struct kernel_spec **ret,
		    struct sl_error *err)
{
	_cleanup_(kernel_spec_freep) struct kernel_spec *s = calloc(1, sizeof(*s));
	if (!s || !(s->patches = calloc(1, sizeof(char *))))
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int r = spec_set_source(s, source, base_dir, err);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(s);
	return 0;
}

int kernel_spec_add_patch(struct kernel_spec *s, const char *base_dir, const char *path,
			  const char *field, struct sl_error *err)
{
	char *p = NULL;
	int r = resolve_file(base_dir, path, field, &p, err);
	if (r < 0)
		return r;
	return patches_push(&s->patches, p, err);
}

int kernel_spec_add_series(struct kernel_spec *s, const char *base_dir, const char *series,
			   const char *field, struct sl_error *err)
{
	_cleanup_free_ char *file = NULL;
	int r = resolve_file(base_dir, series, field, &file, err);
	if (r < 0)
		return r;
	_cleanup_strv_free_ char **v = NULL;
	r = kernel_series_read(file, &v, err);
	if (r < 0)
		return r;
	for (size_t i = 0; v[i]; i++) {
		char *p = strdup(v[i]);
		if (!p)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		r = patches_push(&s->patches, p, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int kernel_spec_set_config(struct kernel_spec *s, const char *base_dir, const char *path,
			   const char *field, struct sl_error *err)
{
	free(s->config);
	s->config = NULL;
	return resolve_file(base_dir, path, field, &s->config, err);
}

int kernel_spec_set_debug(struct kernel_spec *s, const char *name, const char *base_dir,
			  const char *path, const char *field, struct sl_error *err)
{
	size_t n = strlen(name);
	if (n == 0 || n > KBUILD_DEBUG_NAME_MAX ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
		return error_set_path(err, ERR_INVALID, field,
				      "The debug preset's name in '%s' must be 1 to %d lowercase "
				      "letters, digits or '-'.",
				      field, KBUILD_DEBUG_NAME_MAX);
	_cleanup_free_ char *def = NULL;
	if (!path) {
		if (!s->config)
			return error_set_path(err, ERR_INVALID, field,
					      "A debug preset needs the spec's config fragment "
					      "first: its fragment is found beside it.");
		_cleanup_free_ char *dir = strdup(s->config);
		if (!dir)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		if (asprintf(&def, "%s/debug-%s.config", dir, name) < 0) {
			def = NULL;
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		}
		path = def;
	}
	_cleanup_free_ char *file = NULL;
	int r = resolve_file(base_dir, path, field, &file, err);
	if (r < 0)
		return error_prefix(err, "Debug preset '%s'", name);
	char *nm = strdup(name);
	if (!nm)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	free(s->debug);
	free(s->debug_config);
	s->debug = nm;
	s->debug_config = TAKE_PTR(file);
	return 0;
}

int kernel_spec_from_json(json_object *spec, const char *base_dir, struct kernel_spec **ret,
			  struct sl_error *err)
{
	if (!spec || !json_object_is_type(spec, json_type_object))
		return error_set_path(err, ERR_INVALID, "$",
				      "A kernel spec must be a JSON object.");
	_cleanup_(kernel_spec_freep) struct kernel_spec *s = calloc(1, sizeof(*s));
	if (!s || !(s->patches = calloc(1, sizeof(char *))))
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int r;
	const char *debug = NULL, *debug_config = NULL, *series = NULL;

	json_object_object_foreach(spec, key, val)
	{
		if (strcmp(key, "source") == 0) {
			if (!json_object_is_type(val, json_type_string))
				return error_set_path(
				    err, ERR_INVALID, "$.source",
				    "The kernel spec's 'source' must be a string.");
			r = spec_set_source(s, json_object_get_string(val), base_dir, err);
		} else if (strcmp(key, "patches") == 0) {
			if (!json_object_is_type(val, json_type_array))
				return error_set_path(err, ERR_INVALID, "$.patches",
						      "The kernel spec's 'patches' must be an "
						      "array of paths.");
			size_t len = json_object_array_length(val);
			r = 0;
			for (size_t i = 0; i < len && r >= 0; i++) {
				json_object *e = json_object_array_get_idx(val, i);
				char field[64];
				snprintf(field, sizeof(field), "$.patches[%zu]", i);
				if (!json_object_is_type(e, json_type_string))
					return error_set_path(err, ERR_INVALID, field,
							      "'%s' must be a path string.", field);
				r = kernel_spec_add_patch(s, base_dir, json_object_get_string(e),
							  field, err);
			}
		} else if (strcmp(key, "series") == 0) {
			if (!json_object_is_type(val, json_type_string))
				return error_set_path(err, ERR_INVALID, "$.series",
						      "The kernel spec's 'series' must be a path.");
			series = json_object_get_string(val);
			r = kernel_spec_add_series(s, base_dir, series, "$.series", err);
		} else if (strcmp(key, "config") == 0) {
			if (!json_object_is_type(val, json_type_string))
				return error_set_path(err, ERR_INVALID, "$.config",
						      "The kernel spec's 'config' must be a path.");
			r = kernel_spec_set_config(s, base_dir, json_object_get_string(val),
						   "$.config", err);
		} else if (strcmp(key, "debug") == 0 || strcmp(key, "debug_config") == 0) {
			if (!json_object_is_type(val, json_type_string))
				return error_set_path(err, ERR_INVALID, key,
						      "The kernel spec's '%s' must be a string.",
						      key);
			if (strcmp(key, "debug") == 0)
				debug = json_object_get_string(val);
			else
				debug_config = json_object_get_string(val);
			r = 0;
		} else if (strcmp(key, "untrusted") == 0) {
			if (!json_object_is_type(val, json_type_boolean))
				return error_set_path(err, ERR_INVALID, "$.untrusted",
						      "The kernel spec's 'untrusted' must be true "
						      "or false.");
			s->untrusted = json_object_get_boolean(val);
			r = 0;
		} else
			return error_set_path(err, ERR_INVALID, key,
					      "Unknown field '%s' in the kernel spec (known: "
					      "source, patches, series, config, debug, "
					      "debug_config, untrusted).",
					      key);
		if (r < 0)
			return r;
	}
	if (!s->source)
		return error_set_path(err, ERR_INVALID, "$.source",
				      "The kernel spec has no 'source'.");
	if (!s->config)
		return error_set_path(err, ERR_INVALID, "$.config",
				      "The kernel spec has no 'config' fragment.");
	if (debug_config && !debug)
		return error_set_path(err, ERR_INVALID, "$.debug_config",
				      "The kernel spec has 'debug_config' but no 'debug' name.");
	if (debug &&
	    (r = kernel_spec_set_debug(s, debug, base_dir, debug_config, "$.debug", err)) < 0)
		return r;
	/* an untrusted spec's base: itself without "patches" */
	if (s->untrusted) {
		r = kernel_spec_new(s->source, NULL, &s->base, err);
		if (r >= 0 && series)
			r = kernel_spec_add_series(s->base, base_dir, series, "$.series", err);
		if (r >= 0)
			r = kernel_spec_set_config(s->base, NULL, s->config, "$.config", err);
		if (r >= 0 && s->debug)
			r = kernel_spec_set_debug(s->base, s->debug, NULL, s->debug_config,
						  "$.debug", err);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(s);
	return 0;
}
