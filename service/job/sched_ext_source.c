/* A user's own sched_ext scheduler: the job's side; see sched_ext_source.h. */
#include <stdio.h>
#include <string.h>

#include "job/sched_ext_source.h"
#include "job/job-internal.h"
#include "util/hash.h"
#include "util/macro.h"

#define MAX_ARGS    16
#define MAX_ARG_LEN 64

bool sched_ext_source_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n > SCHED_EXT_NAME_MAX || name[0] < 'a' || name[0] > 'z')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

enum sched_ext_source_file sched_ext_source_error_file(const char *name, const char *line)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || !line || strncmp(line, name, n) != 0)
		return SCHED_EXT_FILE_NONE;
	return strncmp(line + n, ".bpf.c:", 7) == 0 ? SCHED_EXT_FILE_BPF
	       : strncmp(line + n, ".c:", 3) == 0   ? SCHED_EXT_FILE_LOADER
						    : SCHED_EXT_FILE_NONE;
}

/* One file of the source: "<key>_path" becomes "<key>" (CLI only). */
static int inline_one(json_object *src, const char *key, bool local_files, const char *base_dir,
		      const char *path, struct sl_error *err)
{
	char pkey[32], where[256];
	snprintf(pkey, sizeof(pkey), "%s_path", key);
	snprintf(where, sizeof(where), "%s.source.%s", path, pkey);
	json_object *p = json_member(src, pkey);
	if (!p)
		return 0;
	if (local_files && json_member(src, key))
		return error_set_path(err, ERR_INVALID, where,
				      "Give either \"%s\" or \"%s\", not both.", key, pkey);
	char how[32];
	snprintf(how, sizeof(how), "as \"%s\"", key);
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r = job_read_local_file(json_object_get_string(p), local_files, base_dir,
				    SCHED_EXT_SOURCE_MAX, where, how, &data, &len, err);
	if (r < 0)
		return r;
	json_object_object_add(src, key, json_object_new_string_len(data, (int)len));
	json_object_object_del(src, pkey);
	return 0;
}

int sched_ext_source_inline(json_object *scx, bool local_files, const char *base_dir,
			    const char *path, struct sl_error *err)
{
	json_object *src = json_member(scx, "source");
	if (!json_object_is_type(src, json_type_object))
		return 0;
	int r = inline_one(src, "bpf", local_files, base_dir, path, err);
	return r < 0 ? r : inline_one(src, "loader", local_files, base_dir, path, err);
}

static int check_file(json_object *src, const char *key, const char *what, const char *path,
		      struct sl_error *err)
{
	char where[256];
	snprintf(where, sizeof(where), "%s.source.%s", path, key);
	json_object *f = json_member(src, key);
	if (!json_object_is_type(f, json_type_string))
		return error_set_path(err, ERR_INVALID, where,
				      "A scheduler of your own needs %s as \"%s\" (the CLI also "
				      "takes \"%s_path\").",
				      what, key, key);
	size_t len = (size_t)json_object_get_string_len(f);
	if (len == 0)
		return error_set_path(err, ERR_INVALID, where, "%s is empty.", what);
	if (len > SCHED_EXT_SOURCE_MAX)
		return error_set_path(err, ERR_TOO_LARGE, where,
				      "%s is larger than the limit of %d bytes.", what,
				      SCHED_EXT_SOURCE_MAX);
	if (strlen(json_object_get_string(f)) != len)
		return error_set_path(err, ERR_INVALID, where, "%s contains NUL bytes.", what);
	return 0;
}

int sched_ext_source_check(json_object *source, json_object *args, const char *path,
			   struct sl_error *err)
{
	char where[256];
	snprintf(where, sizeof(where), "%s.source.name", path);
	json_object *n = json_member(source, "name");
	const char *name =
	    json_object_is_type(n, json_type_string) ? json_object_get_string(n) : NULL;
	if (!sched_ext_source_name_valid(name))
		return error_set_path(err, ERR_INVALID, where,
				      "The scheduler's name must be 1 to %d characters "
				      "[a-z0-9_] starting with a letter (the files are NAME.bpf.c "
				      "and NAME.c).",
				      SCHED_EXT_NAME_MAX);
	int r = check_file(source, "bpf", "The BPF program (NAME.bpf.c)", path, err);
	if (r < 0 || (r = check_file(source, "loader", "The loader (NAME.c)", path, err)) < 0)
		return r;
	size_t na = json_object_is_type(args, json_type_array) ? json_object_array_length(args) : 0;
	if (na > MAX_ARGS) {
		snprintf(where, sizeof(where), "%s.args", path);
		return error_set_path(err, ERR_INVALID, where, "At most %d arguments.", MAX_ARGS);
	}
	for (size_t i = 0; i < na; i++) {
		json_object *a = json_object_array_get_idx(args, i);
		const char *s = json_object_get_string(a);
		size_t len = json_object_is_type(a, json_type_string)
				 ? (size_t)json_object_get_string_len(a)
				 : 0;
		bool ok = len > 0 && len <= MAX_ARG_LEN && strlen(s) == len;
		for (size_t k = 0; ok && k < len; k++)
			ok = s[k] > 0x20 && s[k] < 0x7f;
		if (!ok) {
			snprintf(where, sizeof(where), "%s.args[%zu]", path, i);
			return error_set_path(err, ERR_INVALID, where,
					      "An argument of your loader must be 1 to %d "
					      "printable ASCII characters without spaces.",
					      MAX_ARG_LEN);
		}
	}
	return 0;
}

void sched_ext_source_tag(const char *name, const char *bpf, const char *loader,
			  char out[SCHED_EXT_TAG_LEN + 1])
{
	char hex[HASH_HEX_LEN];
	struct hash_ctx *h = hash_new();
	hash_update_str(h, name); /* length-prefixed: no two inputs share a stream */
	hash_update_str(h, bpf);
	hash_update_str(h, loader);
	hash_final_hex(h, hex); /* frees h */
	memcpy(out, hex, SCHED_EXT_TAG_LEN);
	out[SCHED_EXT_TAG_LEN] = '\0';
}
