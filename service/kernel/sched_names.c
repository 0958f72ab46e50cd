/* Sched feature and tunable names of a kernel tree; see sched_names.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kernel/sched_names.h"
#include "util/fs.h"
#include "util/macro.h"
#include "util/json_get.h"

/* features.h is about 4 KiB and debug.c about 40 KiB in 6.1 and 6.12. */
#define SCHED_SOURCE_MAX (1 << 20)
#define SCHED_NAME_MAX	 64

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static size_t span_of(const char *p, const char *set)
{
	return strspn(p, set);
}

#define UPPER_SET "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
#define LOWER_SET "abcdefghijklmnopqrstuvwxyz0123456789_"

static bool arr_has(json_object *arr, const char *s, size_t n)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		const char *e = json_object_get_string(json_object_array_get_idx(arr, i));
		if (strlen(e) == n && strncmp(e, s, n) == 0)
			return true;
	}
	return false;
}

/* Appends s[0..n) unless it is there already or the list is full. */
static int arr_add(json_object *arr, const char *s, size_t n)
{
	if (arr_has(arr, s, n) || json_object_array_length(arr) >= SCHED_NAMES_MAX)
		return 0;
	json_object_array_add(arr, json_object_new_string_len(s, (int)n));
	return 1;
}

int sched_names_parse_features(const char *text, json_object *arr)
{
	int added = 0;
	for (const char *line = text; line && *line;) {
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, "SCHED_FEAT(", 11) == 0) {
			p = skip_space(p + 11);
			size_t n = span_of(p, UPPER_SET);
			if (n > 0 && n <= SCHED_NAME_MAX && *skip_space(p + n) == ',')
				added += arr_add(arr, p, n);
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return added;
}

/* The debugfs_create_<type> helpers that make a file holding one number. */
static bool numeric_type(const char *t, size_t n)
{
	static const char *const types[] = {"u8", "u16", "u32", "u64", "ulong",	  "size_t",
					    "x8", "x16", "x32", "x64", "atomic_t"};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i]) == n && strncmp(types[i], t, n) == 0)
			return true;
	return false;
}

int sched_names_parse_tunables(const char *text, json_object *arr)
{
	static const char call[] = "debugfs_create_";
	int added = 0;
	for (const char *p = strstr(text, call); p; p = strstr(p, call)) {
		p += sizeof(call) - 1;
		size_t tn = span_of(p, LOWER_SET);
		if (!numeric_type(p, tn))
			continue;
		const char *q = skip_space(p + tn);
		if (*q != '(')
			continue;
		q = skip_space(q + 1);
		if (*q != '"')
			continue; /* #member in a macro, a computed name */
		const char *name = q + 1;
		size_t nn = span_of(name, LOWER_SET);
		if (nn == 0 || nn > SCHED_NAME_MAX || name[nn] != '"')
			continue;
		q = skip_space(name + nn + 1);
		if (*q != ',')
			continue;
		q = skip_space(q + 1);
		/* the mode: octal, writable by its owner (root) */
		size_t mn = span_of(q, "01234567");
		if (mn < 3 || mn > 4 || ((q[mn - 3] - '0') & 2) == 0)
			continue;
		q = skip_space(q + mn);
		if (*q != ',')
			continue;
		q = skip_space(q + 1);
		static const char parent[] = "debugfs_sched";
		if (strncmp(q, parent, sizeof(parent) - 1) != 0 ||
		    *skip_space(q + sizeof(parent) - 1) != ',')
			continue; /* a subdirectory (numa_balancing/, domains/) */
		added += arr_add(arr, name, nn);
	}
	return added;
}

/* Adds key: the names parse() finds in src_dir/rel, when there are any. */
static int add_list(const char *src_dir, const char *rel, const char *key,
		    int (*parse)(const char *, json_object *), json_object *meta,
		    struct sl_error *err)
{
	_cleanup_free_ char *text = NULL;
	struct sl_error inner = {0};
	/* an untrusted patch may have made it a symlink (git diffs can) */
	struct fs_untrusted u = {
	    .what = "kernel source file", .max = SCHED_SOURCE_MAX, .reader_uid = -1};
	int r = fs_read_untrusted(src_dir, rel, &u, &text, NULL, &inner);
	if (r < 0) {
		if (inner.kind == ERR_NOT_FOUND)
			return 0;
		if (err)
			*err = inner;
		return r;
	}
	json_object *arr = json_object_new_array();
	if (parse(text, arr) > 0)
		json_object_object_add(meta, key, arr);
	else
		json_object_put(arr);
	return 0;
}

int sched_names_from_tree(const char *src_dir, json_object *meta, struct sl_error *err)
{
	int r = add_list(src_dir, "kernel/sched/features.h", "sched_features",
			 sched_names_parse_features, meta, err);
	if (r < 0)
		return r;
	return add_list(src_dir, "kernel/sched/debug.c", "sched_tunables",
			sched_names_parse_tunables, meta, err);
}

/* "a, b, c" of arr, cut to fit out (with "..." when cut). */
static void join_names(json_object *arr, char *out, size_t size)
{
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(arr, i));
		int w = snprintf(out + used, size - used, "%s%s", i ? ", " : "", s);
		if (w < 0 || (size_t)w >= size - used) {
			if (size >= 4)
				memcpy(out + size - 4, "...", 4);
			return;
		}
		used += (size_t)w;
	}
}

/* "'base' (debian:linux-source-6.12, 6.12.118)" */
static void kernel_label(json_object *meta, const char *kernel_name, char *out, size_t size)
{
	json_object *src = NULL, *ver = NULL;
	json_object_object_get_ex(meta, "source", &src);
	json_object_object_get_ex(meta, "source_version", &ver);
	snprintf(out, size, "'%.64s' (%.80s%s%.32s)", kernel_name,
		 src ? json_object_get_string(src) : "?", ver ? ", " : "",
		 ver ? json_object_get_string(ver) : "");
}

int sched_names_check(json_object *meta, const struct job_variant *v, const char *kernel_name,
		      struct sl_error *err)
{
	char path[256], label[200], names[640];
	json_object *features = json_member_array(meta, "sched_features");
	json_object *tunables = json_member_array(meta, "sched_tunables");
	for (size_t i = 0; features && i < v->n_features; i++) {
		const char *f = v->features[i];
		const char *name = strncmp(f, "NO_", 3) == 0 ? f + 3 : f;
		if (arr_has(features, name, strlen(name)))
			continue;
		snprintf(path, sizeof(path), "$.variants.%.64s.features[%zu]", v->name, i);
		kernel_label(meta, kernel_name, label, sizeof(label));
		join_names(features, names, sizeof(names));
		return error_set_path(err, ERR_INVALID, path,
				      "Variant '%s' sets the sched feature '%.64s', which kernel "
				      "%s does not have; its features are: %s.",
				      v->name, name, label, names);
	}
	for (size_t i = 0; tunables && i < v->n_sched_tunables; i++) {
		const char *name = v->sched_tunables[i].name;
		if (arr_has(tunables, name, strlen(name)))
			continue;
		snprintf(path, sizeof(path), "$.variants.%.64s.sched_tunables.%.64s", v->name,
			 name);
		kernel_label(meta, kernel_name, label, sizeof(label));
		join_names(tunables, names, sizeof(names));
		return error_set_path(err, ERR_INVALID, path,
				      "Variant '%s' sets the sched tunable '%.64s', which kernel "
				      "%s does not have; its tunables are: %s.",
				      v->name, name, label, names);
	}
	return 0;
}
