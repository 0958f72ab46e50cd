/* cmd_run(): exit codes, signals, output capture and its tail, line
 * callbacks, timeouts that kill the whole process group, cancel, cwd/env,
 * spawn failures and the dry-run recorder. Uses /bin/sh and coreutils. */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <cmocka.h>

#include "util/cmd.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Gone, or a zombie waiting for init to reap it: either way not running. */
static bool pid_dead(int pid)
{
	char path[64], line[256] = {0};
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return true;
	bool got = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	const char *paren = strrchr(line, ')');
	return got && paren && paren[1] == ' ' && paren[2] == 'Z';
}

static void test_exit_codes(void **state)
{
	(void)state;
	struct sl_error err = {0};
	int ex = -1;
	char *const t[] = {"true", NULL};
	assert_int_equal(cmd_run(t, NULL, &ex, NULL, &err), 0);
	assert_int_equal(ex, 0);
	char *const f[] = {"false", NULL};
	assert_int_equal(cmd_run(f, NULL, &ex, NULL, &err), 0);
	assert_int_equal(ex, 1);
	char *const e42[] = {"sh", "-c", "exit 42", NULL};
	assert_int_equal(cmd_run(e42, NULL, &ex, NULL, &err), 0);
	assert_int_equal(ex, 42);
	char *const sig[] = {"sh", "-c", "kill -9 $$", NULL};
	assert_int_equal(cmd_run(sig, NULL, &ex, NULL, &err), 0);
	assert_int_equal(ex, 128 + 9);
}

static void test_spawn_failure(void **state)
{
	(void)state;
	struct sl_error err = {0};
	int ex = -1;
	char *const a[] = {"schedlab-no-such-program", NULL};
	int r = cmd_run(a, NULL, &ex, NULL, &err);
	assert_int_equal(r, -ENOENT);
	assert_int_equal(err.kind, ERR_INTERNAL);
	assert_non_null(strstr(err.message, "'schedlab-no-such-program'"));
	assert_int_equal(ex, -1); /* not written on failure */
}

static void test_capture_both_streams(void **state)
{
	(void)state;
	struct sl_error err = {0};
	struct cmd_opts o = {.log_fd = -1, .capture_max = 4096};
	char *out = NULL;
	int ex;
	char *const a[] = {"sh", "-c", "echo out; echo err >&2; printf last", NULL};
	assert_int_equal(cmd_run(a, &o, &ex, &out, &err), 0);
	assert_int_equal(ex, 0);
	assert_string_equal(out, "out\nerr\nlast");
	free(out);
}

static void test_capture_keeps_tail(void **state)
{
	(void)state;
	struct sl_error err = {0};
	struct cmd_opts o = {.log_fd = -1, .capture_max = 10};
	char *out = NULL;
	char *const a[] = {"sh", "-c", "seq 1 20000", NULL};
	assert_int_equal(cmd_run(a, &o, NULL, &out, &err), 0);
	assert_int_equal(strlen(out), 10);
	assert_string_equal(out, "999\n20000\n");
	free(out);

	/* capture_max 0 keeps nothing but still yields a string */
	struct cmd_opts none = {.log_fd = -1};
	assert_int_equal(cmd_run(a, &none, NULL, &out, &err), 0);
	assert_string_equal(out, "");
	free(out);
}

struct lines {
	int n;
	char last[64];
	size_t longest;
};

static void on_line(void *ud, const char *line)
{
	struct lines *l = ud;
	l->n++;
	snprintf(l->last, sizeof(l->last), "%s", line);
	if (strlen(line) > l->longest)
		l->longest = strlen(line);
}

static void test_on_line(void **state)
{
	(void)state;
	struct sl_error err = {0};
	struct lines l = {0};
	struct cmd_opts o = {.log_fd = -1, .on_line = on_line, .userdata = &l};
	char *const a[] = {"sh", "-c", "seq 1 1000; printf 'no-newline'", NULL};
	assert_int_equal(cmd_run(a, &o, NULL, NULL, &err), 0);
	assert_int_equal(l.n, 1001);
	assert_string_equal(l.last, "no-newline");

	/* an endless line is cut into bounded pieces */
	struct lines big = {0};
	o.userdata = &big;
	char *const b[] = {"sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x", NULL};
	assert_int_equal(cmd_run(b, &o, NULL, NULL, &err), 0);
	assert_true(big.n >= 3);
	assert_true(big.longest <= 64 * 1024);
}

static void test_log_fd(void **state)
{
	(void)state;
	struct sl_error err = {0};
	char path[] = "/tmp/test_cmd_log.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	struct cmd_opts o = {.log_fd = fd};
	char *const a[] = {"sh", "-c", "echo hello; echo world >&2", NULL};
	assert_int_equal(cmd_run(a, &o, NULL, NULL, &err), 0);
	char buf[64] = {0};
	assert_true(pread(fd, buf, sizeof(buf) - 1, 0) > 0);
	assert_string_equal(buf, "hello\nworld\n");
	close(fd);
	unlink(path);
}

static void test_cwd_env(void **state)
{
	(void)state;
	struct sl_error err = {0};
	char *env[] = {"SCHEDLAB_TEST_X=42", "HOME=/nonexistent-home", NULL};
	struct cmd_opts o = {.log_fd = -1, .capture_max = 256, .cwd = "/", .env_extra = env};
	char *out = NULL;
	char *const a[] = {"sh", "-c", "pwd; echo $SCHEDLAB_TEST_X $HOME", NULL};
	assert_int_equal(cmd_run(a, &o, NULL, &out, &err), 0);
	assert_string_equal(out, "/\n42 /nonexistent-home\n");
	free(out);

	struct cmd_opts bad = {.log_fd = -1, .cwd = "/nonexistent-dir-for-test"};
	assert_true(cmd_run(a, &bad, NULL, NULL, &err) < 0);
	assert_non_null(strstr(err.message, "No such file"));
}

static void test_timeout_kills_group(void **state)
{
	(void)state;
	struct sl_error err = {0};
	char pidfile[] = "/tmp/test_cmd_pid.XXXXXX";
	int fd = mkstemp(pidfile);
	assert_true(fd >= 0);
	close(fd);
	/* The grandchild (sleep) must die with the group, not only sh. */
	char script[512];
	snprintf(script, sizeof(script), "sleep 30 & echo $! > %s; wait", pidfile);
	char *const a[] = {"sh", "-c", script, NULL};
	struct cmd_opts o = {.log_fd = -1, .timeout_s = 1};
	int ex = -1;
	double t0 = now_s();
	int r = cmd_run(a, &o, &ex, NULL, &err);
	double dt = now_s() - t0;
	assert_int_equal(r, -ETIMEDOUT);
	assert_int_equal(err.kind, ERR_TIMEOUT);
	assert_non_null(strstr(err.message, "'sh'"));
	assert_true(dt >= 0.9 && dt < 4.0);
	FILE *f = fopen(pidfile, "r");
	assert_non_null(f);
	int gpid = 0;
	assert_int_equal(fscanf(f, "%d", &gpid), 1);
	fclose(f);
	unlink(pidfile);
	assert_true(gpid > 0);
	usleep(100 * 1000);
	assert_true(pid_dead(gpid));

	/* SIGTERM ignored: SIGKILL follows after the grace period */
	char *const stubborn[] = {"sh", "-c", "trap '' TERM; sleep 30", NULL};
	t0 = now_s();
	r = cmd_run(stubborn, &o, NULL, NULL, &err);
	dt = now_s() - t0;
	assert_int_equal(r, -ETIMEDOUT);
	assert_true(dt >= 5.5 && dt < 9.0);
}

static int cancel_after_three(void *ud)
{
	int *n = ud;
	return ++*n >= 3;
}

static void test_cancel(void **state)
{
	(void)state;
	struct sl_error err = {0};
	int polls = 0;
	struct cmd_opts o = {.log_fd = -1, .cancelled = cancel_after_three, .userdata = &polls};
	char *const a[] = {"sleep", "30", NULL};
	double t0 = now_s();
	int r = cmd_run(a, &o, NULL, NULL, &err);
	assert_int_equal(r, -ECANCELED);
	assert_int_equal(err.kind, ERR_CANCELLED);
	assert_true(now_s() - t0 < 3.0);
}

static void test_dry_run(void **state)
{
	(void)state;
	struct sl_error err = {0};
	cmd_dry_run_begin();
	char *const a[] = {"make", "-j2", "O=/tmp/obj dir", "CC=ccache gcc", NULL};
	struct cmd_opts o = {.log_fd = -1, .cwd = "/src"};
	int ex = -1;
	char *out = NULL;
	assert_int_equal(cmd_run(a, &o, &ex, &out, &err), 0);
	assert_int_equal(ex, 0);
	assert_string_equal(out, "");
	free(out);
	char *const b[] = {"echo", "it's", "", NULL};
	assert_int_equal(cmd_run(b, NULL, NULL, NULL, &err), 0);
	/* nothing ran: rm would fail on the missing path otherwise */
	char *const c[] = {"false", NULL};
	assert_int_equal(cmd_run(c, NULL, &ex, NULL, &err), 0);
	assert_int_equal(ex, 0);
	char *text = cmd_dry_run_end();
	assert_string_equal(text, "cd /src && make -j2 'O=/tmp/obj dir' 'CC=ccache gcc'\n"
				  "echo 'it'\\''s' ''\n"
				  "false\n");
	free(text);
	/* after the end commands really run again */
	assert_int_equal(cmd_run(c, NULL, &ex, NULL, &err), 0);
	assert_int_equal(ex, 1);
}

struct dry_seen {
	int calls;
	char cwd[64];
	char lines[256];
};

/* Fails `patch --dry-run`, prints two lines for it; everything else exits 0. */
static int dry_hook(void *userdata, char *const argv[], const char *cwd, char **ret_output)
{
	struct dry_seen *seen = userdata;
	seen->calls++;
	snprintf(seen->cwd, sizeof(seen->cwd), "%s", cwd ? cwd : "");
	if (strcmp(argv[0], "patch") != 0 || !argv[1] || strcmp(argv[1], "--dry-run") != 0)
		return 0;
	*ret_output = strdup("checking file a.c\nHunk #1 FAILED at 3.");
	return 1;
}

static void dry_on_line(void *userdata, const char *line)
{
	struct dry_seen *seen = userdata;
	strncat(seen->lines, line, sizeof(seen->lines) - strlen(seen->lines) - 2);
	strcat(seen->lines, "|");
}

static void test_dry_run_hook(void **state)
{
	(void)state;
	struct sl_error err = {0};
	struct dry_seen seen = {0};
	assert_false(cmd_dry_run_active());
	cmd_dry_run_begin();
	cmd_dry_run_set_hook(dry_hook, &seen);
	assert_true(cmd_dry_run_active());
	char *const p[] = {"patch", "--dry-run", "-i", "x.patch", NULL};
	struct cmd_opts o = {.log_fd = -1,
			     .cwd = "/src",
			     .capture_max = 16,
			     .on_line = dry_on_line,
			     .userdata = &seen};
	int ex = -1;
	char *out = NULL;
	assert_int_equal(cmd_run(p, &o, &ex, &out, &err), 0);
	assert_int_equal(ex, 1);
	/* the tail of the output, capture_max bytes */
	assert_string_equal(out, " #1 FAILED at 3.");
	assert_string_equal(seen.lines, "checking file a.c|Hunk #1 FAILED at 3.|");
	assert_string_equal(seen.cwd, "/src");
	free(out);
	char *const q[] = {"patch", "-i", "x.patch", NULL};
	assert_int_equal(cmd_run(q, NULL, &ex, &out, &err), 0);
	assert_int_equal(ex, 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(seen.calls, 2);
	char *text = cmd_dry_run_end();
	assert_string_equal(text, "cd /src && patch --dry-run -i x.patch\npatch -i x.patch\n");
	free(text);
	assert_false(cmd_dry_run_active());
	/* the end clears the hook: a new dry run answers 0 again */
	cmd_dry_run_begin();
	assert_int_equal(cmd_run(p, NULL, &ex, NULL, &err), 0);
	assert_int_equal(ex, 0);
	assert_int_equal(seen.calls, 2);
	free(cmd_dry_run_end());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exit_codes),
	    cmocka_unit_test(test_spawn_failure),
	    cmocka_unit_test(test_capture_both_streams),
	    cmocka_unit_test(test_capture_keeps_tail),
	    cmocka_unit_test(test_on_line),
	    cmocka_unit_test(test_log_fd),
	    cmocka_unit_test(test_cwd_env),
	    cmocka_unit_test(test_timeout_kills_group),
	    cmocka_unit_test(test_cancel),
	    cmocka_unit_test(test_dry_run),
	    cmocka_unit_test(test_dry_run_hook),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
