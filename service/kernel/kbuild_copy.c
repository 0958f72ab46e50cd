/* Copies into and out of a kernel build: the host's own files (a job's
 * patch into applied/, a cached kernel into a scratch directory) and what a
 * sandboxed build left in its object directory (util/fs.h fs_untrusted);
 * and what a tree or a cached kernel holds: its patch list, its .config's
 * options. Below it only the log: the rest of kernel/ reads builds here. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel/kbuild-internal.h"
#include "kernel/kbuild.h"
#include "util/fs.h"
#include "util/sandbox.h"

int kbuild_copy_file(const char *from, const char *to, struct sl_error *err)
{
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot open '%s': %s.", from,
				 strerror(errno));
	_cleanup_close_ int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot create '%s': %s.", to,
				 strerror(errno));
	char buf[65536];
	for (;;) {
		ssize_t k = read(in, buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return error_set(err, ERR_INTERNAL, errno, "Cannot read '%s': %s.", from,
					 strerror(errno));
		if (k == 0)
			break;
		for (ssize_t off = 0; off < k;) {
			ssize_t w = write(out, buf + off, (size_t)(k - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return error_set(err, ERR_INTERNAL, errno, "Cannot write '%s': %s.",
						 to, strerror(errno));
			off += w;
		}
	}
	return 0;
}

long kbuild_reader_uid(bool sandbox, bool as_root)
{
	/* without the sandbox, or not as root, the build ran as this process's
	 * own user: no file it left is one that user could not read */
	return sandbox && as_root ? SANDBOX_UID : -1;
}

struct fs_untrusted kbuild_untrusted(const struct kbuild_sandbox *sb, const char *what, size_t max)
{
	return (struct fs_untrusted){
	    .what = what, .max = max, .reader_uid = kbuild_reader_uid(sb->on, sb->as_root)};
}

int kbuild_copy_output(const struct kbuild_sandbox *sb, const char *root, const char *rel,
		       const char *what, size_t max, const char *to, mode_t mode,
		       struct sl_error *err)
{
	struct fs_untrusted u = kbuild_untrusted(sb, what, max);
	int r = fs_copy_untrusted(root, rel, &u, to, mode, err);
	if (r < 0 && err && err->kind == ERR_BUILD && !err->code[0])
		snprintf(err->code, sizeof(err->code), "build_failed");
	return r;
}

int kbuild_tree_patches_in_common(const char *tree, const struct key_inputs *k, size_t *ret_listed)
{
	_cleanup_free_ char *list = fs_path_join(tree, "applied/list");
	_cleanup_free_ char *text = NULL;
	struct sl_error ignored;
	*ret_listed = 0;
	if (fs_read_file(list, 1024 * 1024, &text, NULL, &ignored) < 0)
		return fs_exists(list) ? -1 : 0;
	int same = 0;
	bool differs = false;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t i = (*ret_listed)++;
		differs = differs || i >= k->npatches || strcmp(l, k->patch_sha[i]) != 0;
		same += !differs;
	}
	return same;
}

bool kbuild_tree_has_patches(const char *tree, const struct key_inputs *k)
{
	size_t listed;
	/* a patch step a crash cut short: the list may not say what is there */
	_cleanup_free_ char *step = fs_path_join(tree, "applied/step");
	if (fs_exists(step))
		return false;
	int same = kbuild_tree_patches_in_common(tree, k, &listed);
	return same >= 0 && (size_t)same == k->npatches && listed == k->npatches;
}

bool kbuild_config_text_has(const char *text, const char *opt)
{
	char line[128];
	snprintf(line, sizeof(line), "\n%s\n", opt);
	return strncmp(text, line + 1, strlen(line + 1)) == 0 || strstr(text, line);
}

/* Whether the .config at config_path (a cached kernel's copy) sets opt. */
static bool config_has(const char *config_path, const char *opt)
{
	_cleanup_free_ char *text = NULL;
	struct sl_error ignored;
	if (!config_path ||
	    fs_read_file(config_path, KBUILD_MAX_DOTCONFIG_BYTES, &text, NULL, &ignored) < 0)
		return false;
	return kbuild_config_text_has(text, opt);
}

bool kbuild_config_has_scx(const char *config_path)
{
	return config_has(config_path, "CONFIG_SCHED_CLASS_EXT=y");
}
