/* The kernel's .config: tinyconfig, the spec's fragment merged on top,
 * olddefconfig, and then a check that Kconfig kept every option the fragment
 * asked for (an option with unmet dependencies is dropped silently). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kbuild-internal.h"
#include "util/fs.h"

/* One fragment line: "CONFIG_X=value", "# CONFIG_X is not set", a comment or
 * blank; a value may be followed by "# why". Returns 1 for an entry, 0 for
 * nothing, -EINVAL for anything else. */
static int config_parse_line(const char *line, struct config_entry *e)
{
	while (*line == ' ' || *line == '\t')
		line++;
	size_t nlen;
	if (strncmp(line, "# CONFIG_", 9) == 0) {
		nlen = strspn(line + 2,
			      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		/* "# CONFIG_ is not set" names no option (the fuzzer found it taken
		 * for one named "CONFIG_") */
		if (nlen <= 7 || nlen >= sizeof(e->name) ||
		    strncmp(line + 2 + nlen, " is not set", 11) != 0)
			return 0; /* an ordinary comment that starts with CONFIG_ */
		snprintf(e->name, sizeof(e->name), "%.*s", (int)nlen, line + 2);
		snprintf(e->value, sizeof(e->value), "n");
		return 1;
	}
	if (*line == '#' || *line == '\0' || *line == '\r')
		return 0;
	if (strncmp(line, "CONFIG_", 7) != 0)
		return -EINVAL;
	nlen = strspn(line, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
	if (nlen <= 7 || nlen >= sizeof(e->name) || line[nlen] != '=')
		return -EINVAL;
	snprintf(e->name, sizeof(e->name), "%.*s", (int)nlen, line);
	const char *v = line + nlen + 1, *end;
	if (*v == '"') {
		end = v + 1;
		while (*end && *end != '"') {
			if (*end == '\\' && end[1])
				end++;
			end++;
		}
		if (*end != '"')
			return -EINVAL;
		end++;
	} else
		end = v + strcspn(v, " \t#\r");
	if ((size_t)(end - v) >= sizeof(e->value) || end == v)
		return -EINVAL;
	snprintf(e->value, sizeof(e->value), "%.*s", (int)(end - v), v);
	const char *rest = end + strspn(end, " \t\r");
	if (*rest && *rest != '#')
		return -EINVAL;
	return 1;
}

int kernel_config_parse(const char *text, const char *what, bool strict, struct config_entry **ret,
			size_t *ret_n, struct sl_error *err)
{
	struct config_entry *v = NULL;
	size_t n = 0;
	unsigned lineno = 0;
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		lineno++;
		char buf[1024];
		if (len >= sizeof(buf)) {
			free(v);
			return error_set(err, ERR_INVALID, EINVAL,
					 "Config '%s' line %u is too long.", what, lineno);
		}
		memcpy(buf, line, len);
		buf[len] = '\0';
		struct config_entry e;
		int r = config_parse_line(buf, &e);
		if (r < 0 && strict) {
			free(v);
			return error_set(err, ERR_INVALID, EINVAL,
					 "Config fragment '%s' line %u is not 'CONFIG_NAME=value' "
					 "or '# CONFIG_NAME is not set': '%.80s'.",
					 what, lineno, buf);
		}
		if (r > 0) {
			if (n >= KBUILD_MAX_CONFIG_LINES * 4) {
				free(v);
				return error_set(err, ERR_TOO_LARGE, E2BIG,
						 "Config '%s' has too many options.", what);
			}
			struct config_entry *nv = realloc(v, (n + 1) * sizeof(*v));
			if (!nv) {
				free(v);
				return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			}
			v = nv;
			v[n++] = e;
		}
		line = nl ? nl + 1 : NULL;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static const char *config_lookup(const struct config_entry *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return v[i].value;
	return "n";
}

/* Reads and parses one fragment file, each entry marked as from it. */
static int config_read_file(const char *path, struct config_entry **ret, size_t *ret_n,
			    struct sl_error *err)
{
	_cleanup_free_ char *text = NULL;
	int r = fs_read_file(path, KBUILD_MAX_CONFIG_BYTES, &text, NULL, err);
	if (r < 0)
		return r;
	_cleanup_free_ struct config_entry *v = NULL;
	size_t n = 0;
	r = kernel_config_parse(text, kbuild_base_name(path), true, &v, &n, err);
	if (r < 0)
		return r;
	if (n > KBUILD_MAX_CONFIG_LINES)
		return error_set(err, ERR_TOO_LARGE, E2BIG,
				 "Config fragment '%s' has more than %d options.",
				 kbuild_base_name(path), KBUILD_MAX_CONFIG_LINES);
	for (size_t i = 0; i < n; i++)
		v[i].from = kbuild_base_name(path);
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

int kernel_config_read_fragment(const struct kernel_spec *s, struct config_entry **ret,
				size_t *ret_n, struct sl_error *err)
{
	_cleanup_free_ struct config_entry *v = NULL, *d = NULL;
	size_t n = 0, nd = 0;
	int r = config_read_file(s->config, &v, &n, err);
	if (r < 0)
		return r;
	if (s->debug && s->debug_config) {
		r = config_read_file(s->debug_config, &d, &nd, err);
		if (r < 0)
			return r;
		struct config_entry *nv = realloc(v, (n + nd + 1) * sizeof(*v));
		if (!nv)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		v = nv;
		for (size_t i = 0; i < nd; i++) {
			size_t j = 0;
			while (j < n && strcmp(v[j].name, d[i].name) != 0)
				j++;
			v[j] = d[i]; /* the debug preset's value wins */
			if (j == n)
				n++;
		}
	}
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

/* tinyconfig, then the fragment on top (and a debug kernel's preset on top
 * of that), then olddefconfig; then every option asked for must have the
 * asked value. */
int kernel_config_apply(struct build_ctx *b, struct sl_error *err)
{
	_cleanup_free_ struct config_entry *frag = NULL;
	size_t nfrag = 0;
	int r = kernel_config_read_fragment(b->s, &frag, &nfrag, err);
	if (r < 0)
		return r;

	_cleanup_free_ char *oarg = NULL;
	if (asprintf(&oarg, "O=%s", kbuild_obj_seen(b)) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int ex = 0;
	kbuild_log(&b->log, "configuring: tinyconfig + '%s'%s%s (%zu options)",
		   kbuild_base_name(b->s->config), b->s->debug ? " + " : "",
		   b->s->debug ? kbuild_base_name(b->s->debug_config) : "", nfrag);
	char *const tiny[] = {"make", "-s", oarg, "tinyconfig", NULL};
	r = kbuild_run_step(b, KBUILD_SANDBOX_MAKE, tiny, b->tree.src, KBUILD_STEP_TIMEOUT_S, &ex,
			    NULL, err);
	if (r >= 0 && ex != 0)
		r = error_set(err, ERR_BUILD, EIO, "'make tinyconfig' failed (exit %d): %s", ex,
			      b->log.last_error);
	if (r < 0)
		return r;

	/* Merge: the fragment's options replace the same ones in .config. */
	_cleanup_free_ char *dotconfig = fs_path_join(b->tree.obj, ".config");
	_cleanup_free_ char *base = NULL;
	size_t base_len = 0;
	/* make wrote it in the sandbox */
	struct fs_untrusted u =
	    kbuild_untrusted(&b->sandbox, "kernel .config", KBUILD_MAX_DOTCONFIG_BYTES);
	r = fs_read_untrusted(b->tree.obj, ".config", &u, &base, &base_len, err);
	if (r < 0)
		return r;
	size_t cap = base_len + nfrag * 700 + 64;
	_cleanup_free_ char *merged = malloc(cap);
	if (!merged)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	size_t mlen = 0;
	for (const char *line = base; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
		char buf[1024];
		snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1),
			 line);
		buf[strcspn(buf, "\n")] = '\0';
		struct config_entry e;
		bool replaced = false;
		if (config_parse_line(buf, &e) > 0)
			for (size_t i = 0; i < nfrag; i++)
				if (strcmp(frag[i].name, e.name) == 0) {
					replaced = true;
					break;
				}
		if (!replaced) {
			memcpy(merged + mlen, line, len);
			mlen += len;
			if (line[len - 1] != '\n')
				merged[mlen++] = '\n';
		}
		line = nl ? nl + 1 : NULL;
	}
	for (size_t i = 0; i < nfrag; i++) {
		int k = strcmp(frag[i].value, "n") == 0
			    ? snprintf(merged + mlen, cap - mlen, "# %s is not set\n", frag[i].name)
			    : snprintf(merged + mlen, cap - mlen, "%s=%s\n", frag[i].name,
				       frag[i].value);
		mlen += (size_t)k;
	}
	r = fs_write_file_atomic(dotconfig, merged, mlen, err);
	if (r < 0 || (r = kbuild_sandbox_own(&b->sandbox, dotconfig, err)) < 0)
		return r;
	char *const old[] = {"make", "-s", oarg, "olddefconfig", NULL};
	r = kbuild_run_step(b, KBUILD_SANDBOX_MAKE, old, b->tree.src, KBUILD_STEP_TIMEOUT_S, &ex,
			    NULL, err);
	if (r >= 0 && ex != 0)
		r = error_set(err, ERR_BUILD, EIO, "'make olddefconfig' failed (exit %d): %s", ex,
			      b->log.last_error);
	if (r < 0)
		return r;

	_cleanup_free_ char *final = NULL;
	r = fs_read_untrusted(b->tree.obj, ".config", &u, &final, NULL, err);
	if (r < 0)
		return r;
	_cleanup_free_ struct config_entry *got = NULL;
	size_t ngot = 0;
	r = kernel_config_parse(final, ".config", false, &got, &ngot, err);
	if (r < 0)
		return r;
	int bad = 0;
	char first[700] = "";
	for (size_t i = 0; i < nfrag; i++) {
		const char *actual = config_lookup(got, ngot, frag[i].name);
		if (strcmp(actual, frag[i].value) == 0)
			continue;
		char asked[700];
		if (strcmp(frag[i].value, "n") == 0)
			snprintf(asked, sizeof(asked), "# %s is not set", frag[i].name);
		else
			snprintf(asked, sizeof(asked), "%s=%s", frag[i].name, frag[i].value);
		char msg[900];
		if (strcmp(actual, "n") == 0)
			kbuild_trunc_printf(
			    msg, sizeof(msg),
			    "config option '%s' from '%s' was dropped by Kconfig (unmet "
			    "dependencies?)",
			    asked, frag[i].from);
		else
			kbuild_trunc_printf(
			    msg, sizeof(msg),
			    "config option '%s' from '%s' became '%s=%s' after Kconfig "
			    "(unmet dependencies, a range or a choice?)",
			    asked, frag[i].from, frag[i].name, actual);
		kbuild_log(&b->log, "%s", msg);
		if (!bad++) {
			kbuild_trunc_printf(first, sizeof(first), "%s", msg);
			kbuild_trunc_printf(b->failed_option, sizeof(b->failed_option), "%s",
					    frag[i].name);
		}
	}
	if (bad) {
		r = error_set(err, ERR_BUILD, EINVAL, "%s%s.", first,
			      bad > 1 ? " (and more: see the build log)" : "");
		snprintf(err->code, sizeof(err->code), "config_option_dropped");
		return r;
	}
	return 0;
}
