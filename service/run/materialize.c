/* A job's kernel as files the kernel stage can build. See materialize.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "job/debian_bases.h"
#include "run/materialize.h"
#include "util/fs.h"

/* The tree whose debug presets an inline-config kernel without built-in
 * series uses. */
#define MATERIALIZE_DEFAULT_TREE "linux-6.1"

/* Writes an inline file under dir as NNNN-name (an unnamed config: NNNN-config). */
static int write_inline(const char *dir, int index, const struct job_file *f, char **ret_path,
			struct sl_error *err)
{
	char fname[200];
	snprintf(fname, sizeof(fname), "%04d-%s", index, f->name ? f->name : "config");
	_cleanup_free_ char *path = fs_path_join(dir, fname);
	int r = fs_write_file_atomic(path, f->content, f->content_len, err);
	if (r < 0)
		return r;
	*ret_path = TAKE_PTR(path);
	return 0;
}

/* The debug preset's fragment: guest-kernel/<tree>/debug-<preset>.config,
 * <tree> the built-in config's name, else the first built-in series', else
 * the default tree (job.h). */
static int set_debug(struct kernel_spec *s, const struct job_kernel *k, const char *gk,
		     struct sl_error *err)
{
	const char *tree = k->config.kind == JOB_FILE_BUILTIN ? k->config.builtin : NULL;
	for (size_t i = 0; !tree && i < k->n_patches; i++)
		if (k->patches[i].kind == JOB_FILE_BUILTIN)
			tree = k->patches[i].builtin;
	_cleanup_free_ char *dir = fs_path_join(gk, tree ? tree : MATERIALIZE_DEFAULT_TREE);
	_cleanup_free_ char *file = NULL;
	if (asprintf(&file, "%s/debug-%s.config", dir, k->debug) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	char field[300];
	snprintf(field, sizeof(field), "$.kernels.%s.debug", k->name);
	return kernel_spec_set_debug(s, k->debug, NULL, file, field, err);
}

/* Options that add to a kernel's fragment: the fragment at *cfg_path with
 * the option's lines appended, written to dir as NAME.config; *cfg_path
 * becomes that file. Only the content is in the kernel's cache key, so every
 * such kernel of one fragment is one build, and no other kernel's key
 * changes. */
#define MATERIALIZE_SCHEDSTAT                                                                      \
	"# \"schedstat\": true (docs/workloads.md \"schedstat\")\nCONFIG_SCHEDSTATS=y\n"           \
	"# each exiting task's run delay, sent to the agent over taskstats (generic\n"             \
	"# netlink: NET, no network device)\nCONFIG_NET=y\nCONFIG_TASKSTATS=y\n"                   \
	"CONFIG_TASK_DELAY_ACCT=y\n"
/* guest.numa: the guest learns its nodes from ACPI's SRAT (docs/guests.md
 * "NUMA"); NUMA_BALANCING stays off, its page migrations would be noise. */
#define MATERIALIZE_NUMA                                                                           \
	"# guest.numa (docs/guests.md \"NUMA\")\nCONFIG_NUMA=y\nCONFIG_X86_64_ACPI_NUMA=y\n"       \
	"CONFIG_ACPI_NUMA=y\n# CONFIG_NUMA_BALANCING is not set\n"

static int add_fragment(const char *dir, const char *name, const char *lines, char **cfg_path,
			struct sl_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = fs_read_file(*cfg_path, KBUILD_MAX_CONFIG_BYTES, &text, &len, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *out = NULL, *file = NULL;
	if (asprintf(&out, "%s%s%s", text, len && text[len - 1] != '\n' ? "\n" : "", lines) < 0 ||
	    asprintf(&file, "%s.config", name) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	_cleanup_free_ char *path = fs_path_join(dir, file);
	r = fs_write_file_atomic(path, out, strlen(out), err);
	if (r < 0)
		return r;
	free(*cfg_path);
	*cfg_path = TAKE_PTR(path);
	return 0;
}

int materialize_kernel(const struct job_kernel *k, const char *job_dir, const char *data_dir,
		       struct kernel_spec **ret, struct sl_error *err)
{
	const char *kname = k->name;
	_cleanup_free_ char *kdir0 = fs_path_join(job_dir, "kernels");
	_cleanup_free_ char *kdir_rel = fs_path_join(kdir0, kname);
	int ret_code = fs_mkdir_p(kdir_rel, err);
	if (ret_code < 0)
		return ret_code;
	_cleanup_free_ char *kdir = realpath(kdir_rel, NULL);
	if (!kdir)
		return error_set(err, ERR_INTERNAL, errno, "Cannot resolve the directory '%s': %s.",
				 kdir_rel, strerror(errno));
	_cleanup_free_ char *gk = fs_path_join(data_dir, "guest-kernel");
	struct kernel_spec *s = NULL;
	ret_code = kernel_spec_new(k->source, NULL, &s, err);
	if (ret_code < 0)
		return ret_code;
	/* The trusted base (kernel_spec.base): the built-in series and config
	 * alone; kept only when some input turns out to be inline. */
	ret_code = kernel_spec_new(k->source, NULL, &s->base, err);
	if (ret_code < 0) {
		kernel_spec_free(s);
		return ret_code;
	}
	for (size_t i = 0; i < k->n_patches; i++) {
		const struct job_file *item = &k->patches[i];
		char field[300];
		snprintf(field, sizeof(field), "$.kernels.%s.patches[%zu]", kname, i);
		if (item->kind == JOB_FILE_BUILTIN) {
			const char *name = item->builtin;
			_cleanup_free_ char *dir = fs_path_join(gk, name);
			_cleanup_free_ char *file = fs_path_join(dir, "series");
			ret_code = kernel_spec_add_series(s, NULL, file, field, err);
			if (ret_code == 0)
				ret_code = kernel_spec_add_series(s->base, NULL, file, field, err);
			if (ret_code < 0)
				error_prefix(err, "Built-in series '%s' cannot be used", name);
		} else {
			_cleanup_free_ char *path = NULL;
			s->untrusted = true;
			ret_code = write_inline(kdir, (int)i + 1, item, &path, err);
			if (ret_code == 0)
				ret_code = kernel_spec_add_patch(s, NULL, path, field, err);
		}
		if (ret_code < 0) {
			kernel_spec_free(s);
			return ret_code;
		}
	}
	_cleanup_free_ char *cfg_path = NULL, *base_cfg = NULL;
	if (k->config.kind == JOB_FILE_BUILTIN) {
		_cleanup_free_ char *dir = fs_path_join(gk, k->config.builtin);
		cfg_path = fs_path_join(dir, "schedlab.config");
		base_cfg = strdup(cfg_path);
	} else {
		/* a fragment's strings reach make (auto.conf) as code does; the
		 * base gets the built-in fragment a kernel without "config" gets */
		s->untrusted = true;
		ret_code = write_inline(kdir, 0, &k->config, &cfg_path, err);
		_cleanup_free_ char *dir = fs_path_join(gk, debian_base_default_config(k->source));
		base_cfg = fs_path_join(dir, "schedlab.config");
	}
	if (ret_code == 0 && !base_cfg)
		ret_code = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	/* schedstat and NUMA add to the kernel's own fragment; its base stays the
	 * built-in one (the base only matters to untrusted builds) */
	if (ret_code == 0 && k->schedstat)
		ret_code = add_fragment(kdir, "schedstat", MATERIALIZE_SCHEDSTAT, &cfg_path, err);
	if (ret_code == 0 && k->numa)
		ret_code = add_fragment(kdir, "numa", MATERIALIZE_NUMA, &cfg_path, err);
	if (ret_code == 0)
		ret_code = kernel_spec_set_config(s, NULL, cfg_path, "config", err);
	if (ret_code == 0)
		ret_code = kernel_spec_set_config(s->base, NULL, base_cfg, "config", err);
	if (ret_code == 0 && k->debug)
		ret_code = set_debug(s, k, gk, err);
	if (ret_code == 0 && k->debug)
		ret_code = set_debug(s->base, k, gk, err);
	if (ret_code < 0) {
		kernel_spec_free(s);
		return ret_code;
	}
	if (!s->untrusted) {
		kernel_spec_free(s->base);
		s->base = NULL;
	}
	*ret = s;
	return 0;
}
