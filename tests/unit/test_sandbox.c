/* util/sandbox: the bubblewrap command line, for a caller that is root
 * (setpriv drops to SANDBOX_UID before bwrap's user namespace) and one that
 * is not, with its binds, the reachable parents of the binds, the clean
 * environment, the filter and the limits; a real sandbox_run() (where bwrap
 * is installed): its uid, capabilities, no nested user namespace, the
 * seccomp filter's EPERM, no /usr/local; and the cgroup's files. The
 * hostile builds are tests/e2e/18-build-sandbox.sh's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/cmd.h"
#include "util/fs.h"
#include "util/macro.h"
#include "util/sandbox.h"
#include "util/sandbox_cgroup.h"

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
	/* the host's own software is not in there, nor on PATH */
	assert_true(find(v, "--tmpfs", "/usr/local") > 0 || access("/usr/local", F_OK) != 0);
	assert_true(find(v, "PATH", "/usr/bin:/bin") > 0);
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

/* Not root: bwrap's user namespace maps the caller's uid, with the filter;
 * no setpriv, no second bwrap. */
static void test_user(void **state)
{
	(void)state;
	char **v = wrap(false);
	assert_common(v);
	assert_true(find(v, "--unshare-user", NULL) > 0);
	assert_true(find(v, "--disable-userns", NULL) > 0);
	assert_true(find(v, "--seccomp", "3") > 0);
	assert_int_equal(find(v, "setpriv", NULL), -1);
	assert_int_equal(find(v + 1, "bwrap", NULL), -1);
	strv_free(v);
}

/* Root: the outer bwrap (root reaches the binds), prlimit, setpriv drops
 * to SANDBOX_UID, then an inner bwrap makes the user namespace that maps
 * SANDBOX_UID (not the host's 0, exempt from RLIMIT_NPROC), forbids more,
 * and loads the filter. */
static void test_root(void **state)
{
	(void)state;
	char **v = wrap(true);
	assert_common(v);
	int pl = find(v, "prlimit", NULL);
	int sp = find(v, "setpriv", NULL);
	int inner = find(v + 1, "bwrap", NULL) + 1;
	assert_true(pl > 0 && sp > pl && inner > sp);
	assert_int_equal(find(v, "--unshare-user", NULL),
			 find(v + inner, "--unshare-user", NULL) + inner);
	char uid[32];
	snprintf(uid, sizeof(uid), "--reuid=%d", SANDBOX_UID);
	assert_true(find(v, uid, NULL) > sp);
	assert_true(find(v, "--clear-groups", NULL) > sp);
	assert_true(find(v, "--bounding-set=-all", NULL) > sp);
	assert_true(find(v, "--no-new-privs", NULL) > sp);
	snprintf(uid, sizeof(uid), "%d", SANDBOX_UID);
	assert_true(find(v, "--uid", uid) > inner);
	assert_true(find(v, "--gid", uid) > inner);
	assert_true(find(v, "--disable-userns", NULL) > inner);
	assert_true(find(v, "--seccomp", "3") > inner);
	assert_true(find(v, "--dev-bind", "/") > inner);
	assert_true(find(v, "make", NULL) > inner);
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

/* The command's output of a real sandbox_run(), with the directory dir
 * bound writable; NULL (test skipped) without bwrap. */
static char *run_inside(const char *dir, const char *script, bool as_root, bool no_seccomp,
			struct sandbox_report *rep)
{
	struct sandbox_bind binds[] = {{dir, true, NULL}};
	struct sandbox_spec sp = {.binds = binds,
				  .n_binds = 1,
				  .chdir = dir,
				  .as_root = as_root,
				  .nproc = 64,
				  .mem_bytes = 1ULL << 30,
				  .cpus = 1,
				  .no_seccomp = no_seccomp};
	char *argv[] = {"sh", "-c", (char *)script, NULL};
	struct cmd_opts co = {.timeout_s = 30, .capture_max = 64 * 1024};
	char *out = NULL;
	int ex = -1;
	struct sl_error err = {0};
	int r = sandbox_run(&sp, argv, &co, &ex, &out, rep, &err);
	if (r < 0)
		print_message("sandbox_run: %s\n", err.message);
	assert_int_equal(r, 0);
	if (ex != 0)
		print_message("exit %d:\n%s", ex, out);
	assert_int_equal(ex, 0);
	return out;
}

/* What holds inside: not uid 0, no capabilities, no user namespace of its
 * own, EPERM from the filter's calls (keyctl, an AF_INET socket), no
 * /usr/local; a bind below a 0700 directory (as root's ~/.cache is)
 * written. Without the filter the same calls do not fail
 * with EPERM, so the test sees the filter and not something else. */
static void test_run_holds(void **state)
{
	(void)state;
	struct sl_error err = {0};
	if (sandbox_check("-", &err) < 0)
		skip();
	bool as_root = geteuid() == 0;
	char top[] = "/tmp/test-sandbox-XXXXXX";
	assert_non_null(mkdtemp(top));
	char dir[64];
	snprintf(dir, sizeof(dir), "%s/work", top);
	assert_int_equal(mkdir(dir, 0755), 0);
	if (as_root)
		assert_int_equal(chown(dir, SANDBOX_UID, SANDBOX_UID), 0);
	static const char script[] =
	    "id -u; grep CapEff /proc/self/status;"
	    "unshare -Ur true 2>/dev/null && echo userns=yes || echo userns=no;"
	    "python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); "
	    "l.syscall(250, 0, 0, 0, 0, 0); print(\"keyctl errno\", ctypes.get_errno())';"
	    "python3 -c 'import socket\ntry:\n socket.socket(); print(\"inet ok\")\n"
	    "except OSError as e: print(\"inet errno\", e.errno)';"
	    "echo usrlocal=$(ls -A /usr/local | wc -l); echo x >written;"
	    "echo x >/dev/null && echo devnull=ok; echo x >/tmp/t && echo tmp=ok";
	struct sandbox_report rep = {0};
	if (as_root)
		assert_int_equal(chmod(top, 0700), 0);
	_cleanup_free_ char *out = run_inside(dir, script, as_root, false, &rep);
	char want[64];
	snprintf(want, sizeof(want), "%d\n", as_root ? SANDBOX_UID : (int)geteuid());
	assert_true(strncmp(out, want, strlen(want)) == 0);
	assert_non_null(strstr(out, "CapEff:\t0000000000000000"));
	assert_non_null(strstr(out, "userns=no"));
	assert_non_null(strstr(out, "keyctl errno 1\n"));
	assert_non_null(strstr(out, "inet errno 1\n"));
	assert_non_null(strstr(out, "usrlocal=0"));
	/* what a build needs still works: /dev/null, the private /tmp */
	assert_non_null(strstr(out, "devnull=ok"));
	assert_non_null(strstr(out, "tmp=ok"));
	assert_true(rep.ran && rep.seccomp);
	/* the cgroup: a limit only where it was written, else the reason */
	assert_true(rep.cgroup_held ? strncmp(rep.cgroup, "memory.max=", 11) == 0
				    : strncmp(rep.cgroup, "unavailable: ", 13) == 0);
	char written[96];
	snprintf(written, sizeof(written), "%s/written", dir);
	assert_int_equal(access(written, F_OK), 0);
	_cleanup_free_ char *plain = run_inside(dir, script, as_root, true, &rep);
	assert_null(strstr(plain, "keyctl errno 1\n"));
	assert_non_null(strstr(plain, "inet ok"));
	assert_false(rep.seccomp);
	fs_rm_rf(top, &err);
}

/* The cgroup's limit files, in a plain directory standing for a delegated
 * one; and the reason on a host without (never a claim). */
static void test_cgroup_files(void **state)
{
	(void)state;
	char base[] = "/tmp/test-sandbox-cg-XXXXXX";
	assert_non_null(mkdtemp(base));
	struct sandbox_cgroup_limits lim = {.mem_bytes = 8ULL << 30, .pids = 512, .cpus = 2};
	char dir[4096];
	struct sl_error err = {0};
	assert_int_equal(sandbox_cgroup_make(base, "b1", &lim, dir, sizeof(dir), &err), 0);
	static const char *const files[][2] = {
	    {"memory.max", "8589934592"}, {"pids.max", "512"}, {"cpu.max", "200000 100000"}};
	for (size_t i = 0; i < 3; i++) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
		_cleanup_free_ char *text = NULL;
		assert_int_equal(fs_read_file(path, 64, &text, NULL, &err), 0);
		assert_string_equal(text, files[i][1]);
	}
	/* a name taken: an error naming the directory, nothing claimed */
	assert_true(sandbox_cgroup_make(base, "b1", &lim, dir, sizeof(dir), &err) < 0);
	assert_non_null(strstr(err.message, "b1"));
	sandbox_cgroup_remove(dir);
	assert_int_not_equal(access(dir, F_OK), 0);
	/* not a cgroup v2 directory: the reason says so */
	setenv("SCHEDLAB_BUILD_CGROUP", base, 1);
	char got[4096], reason[300] = "";
	assert_int_equal(sandbox_cgroup_base(got, sizeof(got), reason, sizeof(reason)), -1);
	assert_non_null(strstr(reason, "not on a cgroup v2 hierarchy"));
	unsetenv("SCHEDLAB_BUILD_CGROUP");
	fs_rm_rf(base, &err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_user),      cmocka_unit_test(test_root),
	    cmocka_unit_test(test_bind_at),   cmocka_unit_test(test_check_names_package),
	    cmocka_unit_test(test_run_holds), cmocka_unit_test(test_cgroup_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
