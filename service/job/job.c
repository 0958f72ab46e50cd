/* Job specs: schema validation, the CI shorthand, defaults, cross-references
 * and limits. The output ("expanded spec") is self-contained: local patch
 * files are read and inlined, so the same document can be stored, resumed
 * after a restart and shown in a result. */
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/job.h"
#include "job/source_policy.h"
#include "job/job-internal.h"
#include "util/macro.h"
#include "job/debian_bases.h"
#include "job/jsonschema.h"
#include "job/schema_files.h"
#include "job/suite.h"
#include "job/sched_ext.h"
#include "job/sched_ext_source.h"
#include "util/fs.h"

#define DEFAULT_REPEAT 3

static const struct job_limits default_limits = {
    .max_vcpus = 64,
    .max_repeat = 50,
    .max_patches = 200,
    .max_patch_bytes = 4 * 1024 * 1024,
    /* The default `schedlab test` (the all suite with under-load, 5 to 20
     * rounds of two kernels) may keep a TCG host busy 8.3 h if every
     * workload ran to its timeout (20 x 2 x a 700 s run deadline, plus two
     * builds): the default limit must admit the default job. */
    .max_guest_seconds = 12 * 3600,
    .max_memory_mb = 4096,
    .max_total_vcpus = 64,
};

long long job_budget_s(json_object *expanded)
{
	json_object *rep = json_member(expanded, "repeat");
	long long repeat = json_object_is_type(rep, json_type_object)
			       ? json_member_int(rep, "max", DEFAULT_REPEAT)
			       : json_member_int(expanded, "repeat", DEFAULT_REPEAT);
	json_object *variants = json_member(expanded, "variants");
	json_object *kernels = json_member(expanded, "kernels");
	long long nv = variants ? json_object_object_length(variants) : 0;
	long long nk = kernels ? json_object_object_length(kernels) : 0;
	const char *accel = json_member_string(expanded, "accelerator");
	bool tcg = !accel || strcmp(accel, "kvm") != 0;
	long long one = repeat * nv * job_run_deadline_s(json_member(expanded, "workloads"), tcg) +
			nk * JOB_BUILD_ESTIMATE_S;
	/* A bisecting job (run/bisection.h) may run up to ceil(log2 n) more
	 * jobs of the same shape after it, n its series' patches: each a build
	 * and its candidate's runs, the base's reused (counted whole here); a
	 * per-patch attribution n - 1. */
	json_object *bisect = json_member(expanded, "bisect");
	json_object *per_patch = json_member(expanded, "per_patch");
	bool attribute = per_patch && json_object_get_boolean(per_patch);
	if (!attribute && (!bisect || !json_object_get_boolean(bisect)))
		return one;
	size_t np =
	    json_object_array_length(json_member(json_member(kernels, "patched"), "patches"));
	size_t nb = json_object_array_length(json_member(json_member(kernels, "base"), "patches"));
	/* a per-patch attribution (run/attribution.h) measures every prefix
	 * but the whole: n - 1 more jobs */
	long long steps = 0;
	if (attribute)
		steps = np > nb ? (long long)(np - nb) - 1 : 0;
	else
		while (np > nb && ((size_t)1 << steps) < np - nb)
			steps++;
	return one * (1 + steps);
}

const struct job_limits *job_default_limits(void)
{
	return &default_limits;
}

/* A name that is safe as a file name component: the schema's pattern, checked
 * again here because patch names become file names. */
bool job_safe_name(const char *s)
{
	if (!s || !*s || strlen(s) > 128 || s[0] == '.')
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-' || *p == '+'))
			return false;
	return true;
}

int job_read_local_file(const char *rel, bool local_files, const char *base_dir, size_t max,
			const char *where, const char *how, char **ret, size_t *ret_len,
			struct sl_error *err)
{
	if (!local_files)
		return error_set_path(err, ERR_INVALID, where,
				      "Local file paths are not accepted by the service; send the "
				      "file's content %s.",
				      how);
	_cleanup_free_ char *full =
	    rel[0] == '/' ? strdup(rel) : fs_path_join(base_dir ? base_dir : ".", rel);
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r = full ? fs_read_file(full, max, &data, &len, err)
		     : error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	if (r < 0) {
		snprintf(err->path, sizeof(err->path), "%s", where);
		err->kind = err->kind == ERR_TOO_LARGE ? ERR_TOO_LARGE : ERR_INVALID;
		return r;
	}
	if (strlen(data) != len)
		return error_set_path(err, ERR_INVALID, where, "File '%s' contains NUL bytes.",
				      rel);
	*ret = TAKE_PTR(data);
	*ret_len = len;
	return 0;
}

/* Turns one patch or config item into its expanded form: built-ins stay
 * references, local paths become inline content (CLI only). */
static int expand_file_item(json_object *item, enum job_origin origin, const char *base_dir,
			    const struct job_limits *limits, const char *path, json_object **ret,
			    struct sl_error *err)
{
	json_object *p = json_member(item, "path");
	if (!p) {
		json_object *name = json_member(item, "name");
		if (name && !job_safe_name(json_object_get_string(name)))
			return error_set_path(err, ERR_INVALID, path,
					      "File name '%s' may hold only letters, digits and "
					      "'._-+', and must not start with a dot.",
					      json_object_get_string(name));
		json_object *content = json_member(item, "content");
		if (content &&
		    (size_t)json_object_get_string_len(content) > limits->max_patch_bytes)
			return error_set_path(err, ERR_TOO_LARGE, path,
					      "File '%s' is larger than the limit of %zu bytes.",
					      json_object_get_string(name),
					      limits->max_patch_bytes);
		if (content && strlen(json_object_get_string(content)) !=
				   (size_t)json_object_get_string_len(content)) {
			char where[300];
			snprintf(where, sizeof(where), "%s.content", path);
			return error_set_path(err, ERR_INVALID, where,
					      "File '%s' contains NUL bytes; a patch or config "
					      "fragment must be text.",
					      name ? json_object_get_string(name) : "config");
		}
		*ret = json_object_get(item);
		return 0;
	}
	const char *rel = json_object_get_string(p);
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r =
	    job_read_local_file(rel, origin == JOB_ORIGIN_CLI, base_dir, limits->max_patch_bytes,
				path, "inline or as a multipart upload", &data, &len, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *copy = strdup(rel);
	const char *base = basename(copy);
	if (!job_safe_name(base))
		return error_set_path(err, ERR_INVALID, path,
				      "File name '%s' may hold only letters, digits and '._-+'.",
				      base);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(base));
	json_object_object_add(o, "content", json_object_new_string_len(data, (int)len));
	*ret = o;
	return 0;
}

char *job_source_absolute(const char *src, const char *base_dir)
{
	size_t prefix = strncmp(src, "tarball:", 8) == 0 ? 8 : strncmp(src, "git:", 4) == 0 ? 4 : 0;
	if (prefix == 0 || src[prefix] == '/' || src[prefix] == '\0')
		return strdup(src);
	_cleanup_free_ char *dir = NULL;
	if (base_dir && base_dir[0] == '/')
		dir = strdup(base_dir);
	else {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);
		if (!cwd)
			return NULL;
		dir = base_dir && *base_dir ? fs_path_join(cwd, base_dir) : strdup(cwd);
	}
	if (!dir)
		return NULL;
	/* git:PATH@REF: the ref stays as it is (kbuild_key.c splits at the last '@'). */
	const char *rel = src + prefix;
	const char *at = prefix == 4 ? strrchr(rel, '@') : NULL;
	_cleanup_free_ char *path = at ? strndup(rel, (size_t)(at - rel)) : strdup(rel);
	if (!path)
		return NULL;
	_cleanup_free_ char *full = fs_path_join(dir, path);
	char *out = NULL;
	if (!full || asprintf(&out, "%.*s%s%s", (int)prefix, src, full, at ? at : "") < 0)
		return NULL;
	return out;
}

bool job_name_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > JOB_NAME_MAX || !isalnum((unsigned char)s[0]))
		return false;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
			return false;
	return true;
}

static int expand_kernel(json_object *k, enum job_origin origin, const char *base_dir,
			 const struct job_limits *limits, const char *path, int *n_patches,
			 json_object **ret, struct sl_error *err)
{
	char sub[256];
	_cleanup_json_ json_object *out = json_object_new_object();
	json_object *src = json_member(k, "source");
	/* A CLI job's local source means the same tree from any directory;
	 * the service refuses local sources below. */
	const char *src_s = src ? json_object_get_string(src) : "debian:linux-source-6.1";
	_cleanup_free_ char *source =
	    origin == JOB_ORIGIN_CLI ? job_source_absolute(src_s, base_dir) : strdup(src_s);
	if (!source)
		return error_set(err, ERR_INTERNAL, ENOMEM,
				 "Cannot make kernel source '%s' an absolute path.",
				 json_object_get_string(src));
	json_object_object_add(out, "source", json_object_new_string(source));
	if (origin != JOB_ORIGIN_CLI && src &&
	    !strncmp(json_object_get_string(src), "debian:", 7) &&
	    !debian_base_builtin(json_object_get_string(src))) {
		snprintf(sub, sizeof(sub), "%s.source", path);
		return error_set_path(err, ERR_INVALID, sub,
				      "The service builds only Debian's packaged sources "
				      "(%s) and allow-listed git trees; local tarballs are "
				      "for the CLI.",
				      debian_base_list());
	}
	if (origin != JOB_ORIGIN_CLI && src && strncmp(json_object_get_string(src), "debian:", 7)) {
		_cleanup_free_ char *checked = NULL; /* allow-listed git trees (source_policy.c) */
		int r = job_source_policy_check(source, limits->git_sources, limits->n_git_sources,
						path, &checked, err);
		if (r < 0)
			return r;
		json_object_object_add(out, "source", json_object_new_string(checked));
	}
	json_object *patches = json_object_new_array();
	json_object_object_add(out, "patches", patches);
	json_object *in = json_member(k, "patches");
	size_t n = in ? json_object_array_length(in) : 0;
	for (size_t i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s.patches[%zu]", path, i);
		json_object *item = NULL;
		int r = expand_file_item(json_object_array_get_idx(in, i), origin, base_dir, limits,
					 sub, &item, err);
		if (r < 0)
			return r;
		json_object_array_add(patches, item);
		if (++*n_patches > limits->max_patches)
			return error_set_path(err, ERR_TOO_LARGE, sub,
					      "A job may carry at most %d patches.",
					      limits->max_patches);
	}
	json_object *cfg = json_member(k, "config");
	json_object *cfg_out = NULL;
	if (cfg) {
		snprintf(sub, sizeof(sub), "%s.config", path);
		int r = expand_file_item(cfg, origin, base_dir, limits, sub, &cfg_out, err);
		if (r < 0)
			return r;
	} else {
		cfg_out = json_object_new_object();
		json_object_object_add(cfg_out, "builtin",
				       json_object_new_string(debian_base_default_config(src_s)));
	}
	json_object_object_add(out, "config", cfg_out);
	json_object *debug = json_member(k, "debug");
	if (debug)
		json_object_object_add(out, "debug", json_object_get(debug));
	json_object *schedstat = json_member(k, "schedstat");
	if (schedstat && json_object_get_boolean(schedstat))
		json_object_object_add(out, "schedstat", json_object_new_boolean(1));
	*ret = TAKE_PTR(out);
	return 0;
}

/* The debug preset variant v asks for: its own "debug", else the suite's. */
static const char *variant_debug_wanted(json_object *v, const char *suite_debug)
{
	const char *d = json_member_string(v, "debug");
	return d ? d : suite_debug;
}

/* Gives each variant that asks for a debug preset (its own "debug" or the
 * debug suite's) a debug build of its kernel, and marks every variant with
 * the preset its kernel has. A kernel every one of whose variants asks for
 * preset D is itself made a debug kernel ("debug": D): the shorthand's
 * base and patched under --debug or the debug suite. A kernel that other
 * variants boot normally keeps its name, and the debug ones boot a copy
 * named "<kernel>-<D>" added to kernels (one build each, whatever the
 * number of variants). variants and kernels are the expanded objects. */
static int expand_debug(json_object *variants, json_object *kernels, const char *suite_debug,
			struct sl_error *err)
{
	char path[256];
	json_object_object_foreach(variants, vname, v)
	{
		/* copies: the variant's members are replaced below */
		char want_buf[64], kname[80];
		const char *want = variant_debug_wanted(v, suite_debug);
		if (want)
			snprintf(want_buf, sizeof(want_buf), "%s", want);
		want = want ? want_buf : NULL;
		snprintf(kname, sizeof(kname), "%s", json_member_string(v, "kernel"));
		json_object *k = json_member(kernels, kname);
		const char *has = json_member_string(k, "debug");
		snprintf(path, sizeof(path), "$.variants.%s.debug", vname);
		if (!want || (has && strcmp(has, want) == 0)) {
			if (has)
				json_object_object_add(v, "debug", json_object_new_string(has));
			continue;
		}
		if (has)
			return error_set_path(err, ERR_INVALID, path,
					      "Variant '%s' asks for debug preset '%s' but its "
					      "kernel '%s' is built with '%s'.",
					      vname, want, kname, has);
		bool all_want = true;
		json_object_object_foreach(variants, oname, o)
		{
			(void)oname;
			const char *ow = variant_debug_wanted(o, suite_debug);
			if (strcmp(json_member_string(o, "kernel"), kname) == 0 &&
			    (!ow || strcmp(ow, want) != 0))
				all_want = false;
		}
		json_object_object_add(v, "debug", json_object_new_string(want));
		if (all_want) {
			json_object_object_add(k, "debug", json_object_new_string(want));
			continue;
		}
		char dname[160];
		int n = snprintf(dname, sizeof(dname), "%s-%s", kname, want);
		if (n < 0 || n > JOB_NAME_MAX)
			return error_set_path(err, ERR_INVALID, path,
					      "The debug build of kernel '%s' would be named "
					      "'%s-%s', longer than %d characters; give the kernel "
					      "a shorter name.",
					      kname, kname, want, JOB_NAME_MAX);
		json_object *dk = NULL;
		json_object_deep_copy(k, &dk, NULL);
		json_object_object_add(dk, "debug", json_object_new_string(want));
		json_object *existing = json_member(kernels, dname);
		if (existing && !json_object_equal(existing, dk)) {
			json_object_put(dk);
			return error_set_path(err, ERR_INVALID, path,
					      "The debug build of kernel '%s' would be named '%s', "
					      "which the job uses for another kernel.",
					      kname, dname);
		}
		if (existing)
			json_object_put(dk);
		else
			json_object_object_add(kernels, dname, dk);
		json_object_object_add(v, "kernel", json_object_new_string(dname));
	}
	return 0;
}

/* CI shorthand {base, patches} -> kernels base/patched, variants baseline/patched. */
static json_object *expand_shorthand(json_object *spec)
{
	json_object *full = json_object_new_object();
	json_object_object_foreach(spec, key, val)
	{
		if (strcmp(key, "base") && strcmp(key, "patches"))
			json_object_object_add(full, key, json_object_get(val));
	}
	json_object *base = json_member(spec, "base");
	json_object *kernels = json_object_new_object();
	json_object_object_add(kernels, "base", json_object_get(base));
	json_object *patched = NULL;
	json_object_deep_copy(base, &patched, NULL);
	json_object *patches = json_member(patched, "patches");
	if (!patches) {
		patches = json_object_new_array();
		json_object_object_add(patched, "patches", patches);
	}
	json_object *extra = json_member(spec, "patches");
	for (size_t i = 0; extra && i < json_object_array_length(extra); i++)
		json_object_array_add(patches,
				      json_object_get(json_object_array_get_idx(extra, i)));
	json_object_object_add(kernels, "patched", patched);
	json_object_object_add(full, "kernels", kernels);

	json_object *variants = json_object_new_object();
	json_object *vb = json_object_new_object();
	json_object_object_add(vb, "kernel", json_object_new_string("base"));
	json_object *vp = json_object_new_object();
	json_object_object_add(vp, "kernel", json_object_new_string("patched"));
	json_object_object_add(variants, "baseline", vb);
	json_object_object_add(variants, "patched", vp);
	json_object_object_add(full, "variants", variants);
	json_object_object_add(full, "baseline", json_object_new_string("baseline"));
	return full;
}

/* suite_shares (borrowed, may be NULL): the uid_shares a suite gives every
 * variant that sets none. */
static int expand_variants(json_object *in, json_object *kernels, const char *baseline,
			   json_object *suite_shares, json_object **ret, struct sl_error *err)
{
	char path[256];
	_cleanup_json_ json_object *out = json_object_new_object();
	bool have_baseline = false;
	json_object_object_foreach(in, name, v)
	{
		snprintf(path, sizeof(path), "$.variants.%s", name);
		if (!job_safe_name(name))
			return error_set_path(err, ERR_INVALID, path,
					      "Variant name '%s' may hold only letters, digits and "
					      "'._-'.",
					      name);
		const char *kernel = json_member_string(v, "kernel");
		if (!kernel || !json_member(kernels, kernel))
			return error_set_path(err, ERR_INVALID, path,
					      "Variant '%s' names kernel '%s', which the job does "
					      "not define.",
					      name, kernel ? kernel : "");
		json_object *copy = NULL;
		json_object_deep_copy(v, &copy, NULL);
		if (!json_member(copy, "features"))
			json_object_object_add(copy, "features", json_object_new_array());
		if (suite_shares && !json_member(copy, "uid_shares")) {
			json_object *shares = NULL;
			json_object_deep_copy(suite_shares, &shares, NULL);
			json_object_object_add(copy, "uid_shares", shares);
		}
		json_object_object_add(out, name, copy);
		if (strcmp(name, baseline) == 0)
			have_baseline = true;
	}
	if (!have_baseline)
		return error_set_path(err, ERR_INVALID, "$.baseline",
				      "The baseline variant '%s' is not among the job's variants.",
				      baseline);
	if (json_object_object_length(out) < 2)
		return error_set_path(err, ERR_INVALID, "$.variants",
				      "A job needs the baseline and at least one other variant to "
				      "compare with it.");
	*ret = TAKE_PTR(out);
	return 0;
}

/* repeat: n boots per variant, or {"min", "max"} for adaptive repeats
 * (compare/sequential.h), bounded by limits, into out; the job's budget
 * counts the maximum. suite: a suite gives the default. */
static int expand_repeat(json_object *full, bool suite, const struct job_limits *limits,
			 json_object *out, struct sl_error *err)
{
	json_object *rep_in = json_member(full, "repeat");
	int repeat_min, repeat;
	if (json_object_is_type(rep_in, json_type_object)) {
		repeat_min = json_member_int(rep_in, "min", DEFAULT_REPEAT);
		repeat = json_member_int(rep_in, "max", repeat_min);
	} else
		repeat_min = repeat =
		    json_member_int(full, "repeat", suite ? SUITE_DEFAULT_REPEAT : DEFAULT_REPEAT);
	if (repeat_min < 1 || repeat > limits->max_repeat)
		return error_set_path(err, ERR_INVALID, "$.repeat",
				      "repeat must be between 1 and %d, not %d.",
				      limits->max_repeat, repeat_min < 1 ? repeat_min : repeat);
	if (repeat < repeat_min)
		return error_set_path(err, ERR_INVALID, "$.repeat.max",
				      "repeat.max (%d) must not be below repeat.min (%d).", repeat,
				      repeat_min);
	if (json_object_is_type(rep_in, json_type_object)) {
		json_object *rep = json_object_new_object();
		json_object_object_add(rep, "min", json_object_new_int(repeat_min));
		json_object_object_add(rep, "max", json_object_new_int(repeat));
		json_object_object_add(out, "repeat", rep);
	} else
		json_object_object_add(out, "repeat", json_object_new_int(repeat));
	return 0;
}

/* Scale-out (hostpool.h) and a shorthand's bisection (run/bisection.h),
 * copied from full into out; commits are checked against spec's patches. */
static int expand_scale_out(json_object *spec, json_object *full, json_object *out,
			    struct sl_error *err)
{
	json_object *placement = json_member(full, "placement");
	json_object *host_labels = json_member(full, "host_labels");
	if (placement)
		json_object_object_add(out, "placement", json_object_get(placement));
	if (host_labels)
		json_object_object_add(out, "host_labels", json_object_get(host_labels));
	/* A shorthand's bisection (run/bisection.h): whether a worker bisects
	 * a failing series, and the commits its patches were made of, one per
	 * patch (the schema bounds them; the count must match). */
	json_object *bisect = json_member(full, "bisect");
	json_object *commits = json_member(full, "commits");
	if (commits && json_object_array_length(commits) !=
			   json_object_array_length(json_member(spec, "patches")))
		return error_set_path(err, ERR_INVALID, "$.commits",
				      "'commits' must name one commit per patch: %zu commits, "
				      "%zu patches.",
				      json_object_array_length(commits),
				      json_object_array_length(json_member(spec, "patches")));
	if (bisect)
		json_object_object_add(out, "bisect", json_object_get(bisect));
	json_object *per_patch = json_member(full, "per_patch");
	if (per_patch)
		json_object_object_add(out, "per_patch", json_object_get(per_patch));
	if (commits)
		json_object_object_add(out, "commits", json_object_get(commits));
	return 0;
}

int job_expand_json(json_object *spec, enum job_origin origin, const char *base_dir,
		    const struct job_limits *limits, json_object **ret_expanded,
		    struct sl_error *err)
{
	if (!limits)
		limits = &default_limits;
	if (!spec || !json_object_is_type(spec, json_type_object))
		return error_set_path(err, ERR_INVALID, "$", "A job must be a JSON object.");

	int r = schema_validate("job", spec, err);
	if (r < 0)
		return r;

	_cleanup_json_ json_object *full =
	    json_member(spec, "base") ? expand_shorthand(spec) : json_object_get(spec);
	_cleanup_json_ json_object *out = json_object_new_object();
	json_object_object_add(out, "name", json_object_get(json_member(full, "name")));
	if (json_member(full, "description"))
		json_object_object_add(out, "description",
				       json_object_get(json_member(full, "description")));

	/* Kernels. */
	json_object *kernels = json_object_new_object();
	json_object_object_add(out, "kernels", kernels);
	int n_patches = 0;
	json_object_object_foreach(json_member(full, "kernels"), kname, k)
	{
		char path[192];
		snprintf(path, sizeof(path), "$.kernels.%s", kname);
		if (!job_safe_name(kname))
			return error_set_path(err, ERR_INVALID, path,
					      "Kernel name '%s' may hold only letters, digits and "
					      "'._-'.",
					      kname);
		json_object *ko = NULL;
		r = expand_kernel(k, origin, base_dir, limits, path, &n_patches, &ko, err);
		if (r < 0)
			return r;
		json_object_object_add(kernels, kname, ko);
	}

	/* Guest shape. */
	int vcpus = 0;
	r = job_expand_guest(json_member(full, "guest"), limits, out, &vcpus, err);
	if (r < 0)
		return r;

	/* A suite (suite.h): its workloads when the job lists none, its variant
	 * settings where a variant sets none. The schema checks the name. */
	const char *suite = json_member_string(full, "suite");
	if (suite && !suite_known(suite))
		return error_set_path(err, ERR_INVALID, "$.suite",
				      "Suite '%s' is not one of 'rt', 'latency', 'fair', 'all' or "
				      "'debug'.",
				      suite);
	if (suite)
		json_object_object_add(out, "suite", json_object_new_string(suite));
	_cleanup_json_ json_object *suite_shares = suite ? suite_uid_shares(suite) : NULL;

	/* Variants and baseline. */
	json_object *bl = json_member(full, "baseline");
	const char *baseline = bl ? json_object_get_string(bl) : "baseline";
	json_object *variants = NULL;
	r = expand_variants(json_member(full, "variants"), kernels, baseline, suite_shares,
			    &variants, err);
	if (r >= 0)
		r = expand_debug(variants, kernels, suite_debug_preset(suite), err);
	if (r < 0) {
		json_object_put(variants);
		return r;
	}
	json_object_object_add(out, "variants", variants);
	json_object_object_add(out, "baseline", json_object_new_string(baseline));
	json_object_object_foreach(variants, vname, v)
	{
		json_object *scx = json_member(v, "sched_ext");
		char path[256];
		snprintf(path, sizeof(path), "$.variants.%s.sched_ext", vname);
		if (scx && ((r = sched_ext_source_inline(scx, origin == JOB_ORIGIN_CLI, base_dir,
							 path, err)) < 0 ||
			    (r = sched_ext_check(scx, path, vcpus, err)) < 0))
			return r;
	}

	/* Workloads, repeat, gates. The job's own workloads replace a suite's. */
	_cleanup_json_ json_object *wl_in = json_object_get(json_member(full, "workloads"));
	if (!wl_in && suite)
		wl_in = suite_workloads(suite);
	if (!wl_in)
		return error_set_path(err, ERR_INVALID, "$.workloads",
				      "A job needs 'workloads' or a 'suite' ('rt', 'latency', "
				      "'fair', 'all' or 'debug').");
	json_object *workloads = NULL;
	int wl_seconds = 0;
	r = job_expand_workloads(wl_in, &workloads, &wl_seconds, err);
	if (r < 0)
		return r;
	json_object_object_add(out, "workloads", workloads);
	r = expand_repeat(full, suite != NULL, limits, out, err);
	if (r < 0)
		return r;
	json_object *np = json_member(full, "noise_policy");
	json_object_object_add(out, "noise_policy",
			       np ? json_object_get(np) : json_object_new_string("exclude"));
	/* Left out when not given: the runner then takes the default or the
	 * host's calibrated limit, and the result's repeats record which. */
	json_object *nl = json_member(full, "noise_limit_pct");
	if (nl)
		json_object_object_add(out, "noise_limit_pct", json_object_get(nl));
	json_object *alpha = json_member(full, "alpha");
	json_object_object_add(
	    out, "alpha", alpha ? json_object_get(alpha) : json_object_new_double_s(0.05, "0.05"));
	json_object *gates = NULL;
	bool opted_out = false;
	r = job_expand_gates(full, workloads, suite_gates_metrics(suite), &gates, &opted_out, err);
	if (r < 0)
		return r;
	json_object_object_add(out, "gates", gates);
	if (opted_out || json_object_array_length(gates) == 0)
		json_object_object_add(out, "gates_opt_out", json_object_new_boolean(opted_out));
	json_object *accel = json_member(full, "accelerator");
	json_object_object_add(
	    out, "accelerator",
	    json_object_new_string(accel ? json_object_get_string(accel) : "auto"));

	r = expand_scale_out(spec, full, out, err);
	if (r < 0)
		return r;

	(void)wl_seconds;
	long long budget = job_budget_s(out);
	if (budget > limits->max_guest_seconds)
		return error_set_path(
		    err, ERR_INVALID, "$.repeat",
		    "The job could keep the host busy for up to %lld s (repeat x variants x "
		    "the run deadline of %d s + %d s boot + each workload's timeout + %d s, "
		    "plus %d s per kernel build), over the limit of %d s.",
		    budget, job_run_deadline_s(workloads, true), BOOT_ALLOWANCE_TCG_S,
		    WORKLOAD_SLACK_S, JOB_BUILD_ESTIMATE_S, limits->max_guest_seconds);
	long long total_vcpus = (long long)vcpus * json_object_object_length(variants);
	if (total_vcpus > limits->max_total_vcpus)
		return error_set_path(err, ERR_INVALID, "$.guest.vcpus",
				      "The job's guests would have %lld vCPUs at once (vcpus %d x "
				      "%d variants), over the limit of %d.",
				      total_vcpus, vcpus, json_object_object_length(variants),
				      limits->max_total_vcpus);

	*ret_expanded = TAKE_PTR(out);
	return 0;
}
