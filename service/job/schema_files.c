/* Loading and caching the schemas in results-schema/. See schema.h. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "job/schema_files.h"
#include "util/fs.h"

#define SCHEMA_MAX_BYTES (1024 * 1024)

static pthread_mutex_t schema_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *const schema_names[] = {"job", "result"};
static json_object *schema_cache[ELEMENTSOF(schema_names)];

int schema_read_json_file(const char *path, size_t max_bytes, json_object **ret,
			  struct sl_error *err)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r = fs_read_file(path, max_bytes, &data, &len, err);
	if (r < 0)
		return r;
	if (strlen(data) != len)
		return error_set_path(err, ERR_INVALID, path,
				      "'%s' contains a NUL byte, so it is not JSON.", path);

	json_tokener *tok = json_tokener_new();
	if (!tok)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory parsing '%s'.", path);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *obj = json_tokener_parse_ex(tok, data, (int)len + 1);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t off = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (jerr != json_tokener_success) {
		json_object_put(obj);
		int line = 1, col = 1;
		for (size_t i = 0; i < off && i < len; i++) {
			if (data[i] == '\n') {
				line++;
				col = 1;
			} else
				col++;
		}
		return error_set_path(err, ERR_INVALID, path,
				      "'%s' is not valid JSON: %s at line %d, column %d.", path,
				      json_tokener_error_desc(jerr), line, col);
	}
	/* The strict tokener stops after the first value; anything but space after it is junk. */
	for (size_t i = off; i < len; i++)
		if (!strchr(" \t\r\n", data[i]) && data[i] != '\0') {
			json_object_put(obj);
			return error_set_path(err, ERR_INVALID, path,
					      "'%s' has data after its JSON value (at byte %zu).",
					      path, i);
		}
	*ret = obj;
	return 0;
}

int schema_load(const char *name, json_object **ret, struct sl_error *err)
{
	size_t idx = ELEMENTSOF(schema_names);
	for (size_t i = 0; i < ELEMENTSOF(schema_names); i++)
		if (name && strcmp(name, schema_names[i]) == 0)
			idx = i;
	if (idx == ELEMENTSOF(schema_names))
		return error_set(
		    err, ERR_INVALID, 0,
		    "There is no schema named '%s'; the schemas are 'job' and 'result'.",
		    name ? name : "");

	int r = 0;
	pthread_mutex_lock(&schema_lock);
	if (!schema_cache[idx]) {
		_cleanup_free_ char *dir = fs_data_dir();
		_cleanup_free_ char *sub = fs_path_join(dir, "results-schema");
		_cleanup_free_ char *file = NULL;
		if (asprintf(&file, "%s/%s.schema.json", sub, name) < 0) {
			r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			goto out;
		}
		json_object *s = NULL;
		r = schema_read_json_file(file, SCHEMA_MAX_BYTES, &s, err);
		if (r < 0) {
			if (err)
				err->kind = ERR_INTERNAL;
			error_prefix(err, "Cannot load the %s schema", name);
			goto out;
		}
		schema_cache[idx] = s;
	}
	json_object *copy = NULL;
	if (json_object_deep_copy(schema_cache[idx], &copy, NULL) < 0) {
		r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory copying the %s schema.",
			      name);
		goto out;
	}
	*ret = copy;
out:
	pthread_mutex_unlock(&schema_lock);
	return r;
}
