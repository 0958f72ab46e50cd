/* The service's kernel source allow-list (source_policy.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

#include "job/source_policy.h"

bool job_source_ref_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > JOB_SOURCE_REF_MAX || s[0] == '-' || strstr(s, ".."))
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("._/^~-", *p)))
			return false;
	return true;
}

/* 1 when real is dir or lies below it (both realpaths). */
static bool path_under(const char *real, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(real, dir, n) == 0 && (real[n] == '\0' || real[n] == '/');
}

int job_source_policy_check(const char *source, char *const *git_sources, size_t n_git_sources,
			    const char *path, char **ret_source, struct sl_error *err)
{
	char field[300];
	snprintf(field, sizeof(field), "%s.source", path);
	if (strncmp(source, "git:", 4) != 0)
		return error_set_path(err, ERR_INVALID, field,
				      "The service builds Debian's packaged sources and, when the "
				      "config allows them ('git_sources'), git trees "
				      "('git:/tree@REF'); local tarballs are for the CLI.");
	if (n_git_sources == 0)
		return error_set_path(err, ERR_INVALID, field,
				      "This service allows no git trees: its config has no "
				      "'git_sources'.");
	const char *tree = source + 4, *at = strrchr(tree, '@');
	if (tree[0] != '/' || !at || at == tree || (size_t)(at - tree) >= PATH_MAX ||
	    !job_source_ref_valid(at + 1))
		return error_set_path(err, ERR_INVALID, field,
				      "A git source must look like 'git:/absolute/tree@REF', the "
				      "ref of letters, digits and '._/^~-', not starting with '-' "
				      "and without '..'.");
	_cleanup_free_ char *dir = strndup(tree, (size_t)(at - tree));
	if (!dir)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	_cleanup_free_ char *real = realpath(dir, NULL);
	struct stat st;
	bool allowed = false;
	for (size_t i = 0; real && i < n_git_sources && !allowed; i++)
		allowed = path_under(real, git_sources[i]);
	/* One answer for "missing" and "not allowed": which directories exist
	 * on the host is not the submitter's business. */
	if (!allowed || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
		return error_set_path(err, ERR_INVALID, field,
				      "The git tree of this source is not a directory under the "
				      "config's 'git_sources'.");
	char *out = NULL;
	if (asprintf(&out, "git:%s@%s", real, at + 1) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	*ret_source = out;
	return 0;
}
