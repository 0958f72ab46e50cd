/* util/sandbox: the bubblewrap command line, for a caller that is root
 * (setpriv drops to SANDBOX_UID) and one that is not (a user namespace),
 * with its binds, the reachable parents of the binds, the clean
 * environment and the limits. What the sandbox holds when it runs is
 * tests/e2e/18-build-sandbox.sh's job. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "util/macro.h"
#include "util/sandbox.h"

/* The index of the first argument equal to a (and, when b is not NULL,
 * followed by b), or -1. */
static int find(char **v, const char *a, const char *b)
{
	for (int i = 0; v[i]; i++)
		if (strcmp(v[i], a) == 0 && (!b || (v[i + 1] && strcmp(v[i + 1], b) == 0)))
			return i;
	return -1;
}

static char **wrap(bool as_root)
{
	static const struct sandbox_bind binds[] = {
	    {"/cache/trees/t1/src", false, NULL},
	    {"/cache/trees/t1/obj", true, NULL},
	    {"/cache/ccache", false, NULL},
	};
	char *env[] = {"LC_ALL=C", "CCACHE_READONLY=1", NULL};
	struct sandbox_spec sp = {
	    .binds = binds,
	    .n_binds = 3,
	    .chdir = "/cache/trees/t1/src",
	    .env = env,
	    .as_root = as_root,
	    .cpu_s = 60,
	    .as_bytes = 1ULL << 30,
	    .fsize_bytes = 1ULL << 20,
	    .nproc = 64,
	};
	char *argv[] = {"make", "-s", "CC=ccache gcc", "--", "bzImage", NULL};
	char **v = NULL;
	struct sl_error err = {0};
	assert_int_equal(sandbox_argv(&sp, argv, &v, &err), 0);
	return v;
}

static void assert_common(char **v)
{
	assert_string_equal(v[0], "bwrap");
	for (size_t i = 0; i < 4; i++) {
		static const char *const ns[] = {"--unshare-net", "--unshare-pid", "--unshare-ipc",
						 "--unshare-uts"};
		assert_true(find(v, ns[i], NULL) > 0);
	}
	assert_true(find(v, "--die-with-parent", NULL) > 0);
	assert_true(find(v, "--clearenv", NULL) > 0);
	assert_true(find(v, "--setenv", "CCACHE_READONLY") > 0);
	assert_true(find(v, "--setenv", "HOME") > 0);
	/* the binds: src read-only, obj writable, ccache read-only */
	assert_true(find(v, "--ro-bind", "/cache/trees/t1/src") > 0);
	assert_true(find(v, "--bind", "/cache/trees/t1/obj") > 0);
	assert_true(find(v, "--ro-bind", "/cache/ccache") > 0);
	assert_int_equal(find(v, "--bind", "/cache/trees/t1/src"), -1);
	/* their parents are made reachable, once each; not the binds themselves */
	assert_true(find(v, "--dir", "/cache") > 0);
	assert_true(find(v, "--dir", "/cache/trees/t1") > 0);
	assert_int_equal(find(v, "--dir", "/cache/trees/t1/src"), -1);
	int first = find(v, "--dir", "/cache/trees");
	assert_true(first > 0);
	assert_int_equal(find(v + first + 1, "--dir", "/cache/trees"), -1);
	/* nothing of the host's /etc but its linker files */
	assert_int_equal(find(v, "--ro-bind", "/etc"), -1);
	assert_true(find(v, "--ro-bind-try", "/etc/ld.so.cache") > 0);
	assert_true(find(v, "--tmpfs", "/tmp") > 0);
	assert_true(find(v, "--chdir", "/cache/trees/t1/src") > 0);
	/* the limits, then the command as given after the last "--" */
	int pl = find(v, "prlimit", NULL);
	assert_true(pl > find(v, "--", NULL));
	assert_true(find(v, "--cpu=60", NULL) > pl);
	assert_true(find(v, "--as=1073741824", NULL) > pl);
	assert_true(find(v, "--fsize=1048576", NULL) > pl);
	assert_true(find(v, "--nproc=64", NULL) > pl);
	int last = -1;
	for (int i = 0; v[i]; i++)
		if (strcmp(v[i], "--") == 0 && i < find(v, "make", NULL))
			last = i;
	assert_string_equal(v[last + 1], "make");
	assert_string_equal(v[last + 3], "CC=ccache gcc");
	assert_string_equal(v[last + 4], "--");
	assert_string_equal(v[last + 5], "bzImage");
	assert_null(v[last + 6]);
}

/* Not root: bwrap's user namespace; no setpriv. */
static void test_user(void **state)
{
	(void)state;
	char **v = wrap(false);
	assert_common(v);
	assert_true(find(v, "--unshare-user", NULL) > 0);
	assert_true(find(v, "--disable-userns", NULL) > 0);
	assert_int_equal(find(v, "setpriv", NULL), -1);
	strv_free(v);
}

/* Root: no user namespace (its uid 0 would be exempt from RLIMIT_NPROC);
 * setpriv drops to SANDBOX_UID and every capability after prlimit. */
static void test_root(void **state)
{
	(void)state;
	char **v = wrap(true);
	assert_common(v);
	assert_int_equal(find(v, "--unshare-user", NULL), -1);
	int sp = find(v, "setpriv", NULL);
	assert_true(sp > find(v, "prlimit", NULL));
	char uid[32];
	snprintf(uid, sizeof(uid), "--reuid=%d", SANDBOX_UID);
	assert_true(find(v, uid, NULL) > sp);
	assert_true(find(v, "--clear-groups", NULL) > sp);
	assert_true(find(v, "--bounding-set=-all", NULL) > sp);
	assert_true(find(v, "--no-new-privs", NULL) > sp);
	assert_true(find(v, "make", NULL) > sp);
	strv_free(v);
}

/* A bind at another path (an untrusted build's copy of obj/ where obj/
 * would be): bound there, its parents made there, the source's not. */
static void test_bind_at(void **state)
{
	(void)state;
	static const struct sandbox_bind binds[] = {
	    {"/cache/trees/t1/src", false, NULL},
	    {"/cache/trees/t1/obj-untrusted", true, "/cache/trees/t1/obj"},
	    {"/cache/x/copy", true, "/elsewhere/obj"},
	};
	struct sandbox_spec sp = {.binds = binds, .n_binds = 3};
	char *argv[] = {"make", NULL};
	char **v = NULL;
	struct sl_error err = {0};
	assert_int_equal(sandbox_argv(&sp, argv, &v, &err), 0);
	int b = find(v, "--bind", "/cache/trees/t1/obj-untrusted");
	assert_true(b > 0);
	assert_string_equal(v[b + 2], "/cache/trees/t1/obj");
	b = find(v, "--bind", "/cache/x/copy");
	assert_true(b > 0);
	assert_string_equal(v[b + 2], "/elsewhere/obj");
	assert_true(find(v, "--dir", "/elsewhere") > 0);
	assert_int_equal(find(v, "--dir", "/cache/x"), -1);
	strv_free(v);
}

/* Without bwrap in PATH the error names the package and the way around. */
static void test_check_names_package(void **state)
{
	(void)state;
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;
	setenv("PATH", "/nonexistent-dir", 1);
	struct sl_error err = {0};
	assert_true(sandbox_check("use --no-sandbox", &err) < 0);
	assert_non_null(strstr(err.message, "bubblewrap"));
	assert_non_null(strstr(err.message, "use --no-sandbox"));
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_user),
	    cmocka_unit_test(test_root),
	    cmocka_unit_test(test_bind_at),
	    cmocka_unit_test(test_check_names_package),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
