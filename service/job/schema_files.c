/* Loading and caching the schemas in results-schema/. See schema.h. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "job/schema_files.h"
#include "job/jsonschema.h"
#include "util/fs.h"
#include "util/json.h"

#define SCHEMA_MAX_BYTES (1024 * 1024)

static pthread_mutex_t schema_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *const schema_names[] = {"job", "result"};
static json_object *schema_cache[ELEMENTSOF(schema_names)];

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
		r = json_read_file_strict(file, SCHEMA_MAX_BYTES, "schema file", &s, err);
		if (r < 0) {
			if (err)
				err->kind = ERR_INTERNAL;
			error_prefix(err, "Cannot load the %s schema", name);
			goto out;
		}
		/* Checked once here, so schema_validate() need not each time. */
		r = jsonschema_check_schema(s, err);
		if (r < 0) {
			json_object_put(s);
			error_prefix(err, "The %s schema '%s' is broken", name, file);
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

int schema_validate(const char *name, json_object *instance, struct sl_error *err)
{
	_cleanup_json_ json_object *schema = NULL;
	int r = schema_load(name, &schema, err);
	return r < 0 ? r : jsonschema_validate_checked(schema, instance, err);
}
