/* Submit-time checks of an expanded job; see submit_checks.h. */
#include <errno.h>
#include <string.h>

#include "server/submit_checks.h"
#include "kernel/kbuild.h"
#include "util/fs.h"

/* guest-kernel/<name>/<file> exists. name passed the schema's name
 * pattern; refuse anything path-like again all the same. */
static bool builtin_exists(const char *data_dir, const char *name, const char *file)
{
	if (!name || !name[0] || name[0] == '.' || strchr(name, '/'))
		return false;
	_cleanup_free_ char *gk = fs_path_join(data_dir, "guest-kernel");
	_cleanup_free_ char *dir = fs_path_join(gk, name);
	_cleanup_free_ char *path = fs_path_join(dir, file);
	return path && fs_exists(path);
}

static int check_kernel(const char *kname, json_object *k, const char *data_dir,
			struct sl_error *err)
{
	char path[320];
	json_object *v = NULL;
	if (json_object_object_get_ex(k, "source", &v)) {
		const char *src = json_object_get_string(v);
		struct sl_error inner = {0};
		snprintf(path, sizeof(path), "$.kernels.%.64s.source", kname);
		if (kbuild_source_check(src, &inner) < 0)
			return error_set_path(err, ERR_INVALID, path,
					      "Kernel source '%.80s' is not available on this "
					      "service: it builds Debian's linux-source packages "
					      "that are installed on its host.",
					      src);
	}
	json_object *patches = NULL;
	if (json_object_object_get_ex(k, "patches", &patches) &&
	    json_object_is_type(patches, json_type_array))
		for (size_t i = 0; i < json_object_array_length(patches); i++) {
			json_object *series = NULL;
			if (!json_object_object_get_ex(json_object_array_get_idx(patches, i),
						       "series", &series))
				continue;
			snprintf(path, sizeof(path), "$.kernels.%.64s.patches[%zu].series", kname,
				 i);
			if (!builtin_exists(data_dir, json_object_get_string(series), "series"))
				return error_set_path(err, ERR_INVALID, path,
						      "There is no built-in patch series '%.80s' "
						      "(e.g. 'linux-6.1').",
						      json_object_get_string(series));
		}
	json_object *cfg = NULL, *builtin = NULL;
	if (json_object_object_get_ex(k, "config", &cfg) &&
	    json_object_object_get_ex(cfg, "builtin", &builtin)) {
		snprintf(path, sizeof(path), "$.kernels.%.64s.config.builtin", kname);
		if (!builtin_exists(data_dir, json_object_get_string(builtin), "schedlab.config"))
			return error_set_path(err, ERR_INVALID, path,
					      "There is no built-in kernel config '%.80s' (e.g. "
					      "'linux-6.1').",
					      json_object_get_string(builtin));
	}
	return 0;
}

int submit_checks(json_object *expanded, const char *data_dir, struct sl_error *err)
{
	_cleanup_free_ char *own = data_dir ? NULL : fs_data_dir();
	if (!data_dir)
		data_dir = own;
	if (!data_dir)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	json_object *kernels = NULL;
	if (!json_object_object_get_ex(expanded, "kernels", &kernels) ||
	    !json_object_is_type(kernels, json_type_object))
		return 0;
	json_object_object_foreach(kernels, kname, k)
	{
		int r = check_kernel(kname, k, data_dir, err);
		if (r < 0)
			return r;
	}
	return 0;
}
