/* util/fs_untrusted: what the host takes from a directory a sandboxed
 * build could write. A FIFO fails at once (an alarm turns a blocking open
 * into a failure instead of a hung test), a symlink to a device or to a
 * root-only file is refused and nothing is copied, a hard link to a file the
 * build's user cannot read is refused, an oversized file is refused, and a
 * symlinked directory on the way is refused with openat2 and with the
 * per-component fallback. Every error names the file and the reason. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/fs.h"

struct fx {
	char dir[64];
	char *tree; /* what the build could write */
	char *out;  /* the host's copy */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_fs_untrusted.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->tree = fs_path_join(f->dir, "obj");
	f->out = fs_path_join(f->dir, "bzImage.copy");
	char *boot = fs_path_join(f->tree, "arch/x86/boot");
	struct sl_error err = {0};
	assert_int_equal(fs_mkdir_p(boot, &err), 0);
	free(boot);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	struct sl_error err;
	fs_untrusted_force_fallback(false);
	fs_rm_rf(f->dir, &err);
	free(f->tree);
	free(f->out);
	free(f);
	return 0;
}

static const struct fs_untrusted kimage = {
    .what = "kernel image", .max = 1 << 20, .reader_uid = -1};

/* fs_copy_untrusted of tree/rel in a child with a 5 s alarm: a call that
 * blocks is killed by SIGALRM and fails the test. The child's message is
 * in msg. Returns the call's result (0 or -errno). */
static int copy_bounded(struct fx *f, const char *rel, const struct fs_untrusted *u, char *msg,
			size_t len)
{
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		alarm(5);
		struct sl_error err = {0};
		int r = fs_copy_untrusted(f->tree, rel, u, f->out, 0644, &err);
		dprintf(pfd[1], "%s", r < 0 ? err.message : "");
		_exit(r < 0 ? -r : 0);
	}
	close(pfd[1]);
	ssize_t n = read(pfd[0], msg, len - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("copying '%s' blocked until SIGALRM (signal %d)", rel, WTERMSIG(status));
	assert_true(WIFEXITED(status));
	return -WEXITSTATUS(status);
}

static char *tree_path(struct fx *f, const char *rel)
{
	return fs_path_join(f->tree, rel);
}

static void test_regular_copied(void **state)
{
	struct fx *f = *state;
	char *p = tree_path(f, "arch/x86/boot/bzImage");
	FILE *fp = fopen(p, "w");
	fputs("kernel", fp);
	fclose(fp);
	char msg[1024];
	assert_int_equal(copy_bounded(f, "arch/x86/boot/bzImage", &kimage, msg, sizeof(msg)), 0);
	struct stat st;
	assert_int_equal(stat(f->out, &st), 0);
	assert_int_equal(st.st_size, 6);
	assert_int_equal(st.st_mode & 07777, 0644);
	char *data = NULL;
	struct sl_error err = {0};
	assert_int_equal(
	    fs_read_untrusted(f->tree, "arch/x86/boot/bzImage", &kimage, &data, NULL, &err), 0);
	assert_string_equal(data, "kernel");
	free(data);
	free(p);
}

static void test_fifo_fails_fast(void **state)
{
	struct fx *f = *state;
	char *p = tree_path(f, "arch/x86/boot/bzImage");
	assert_int_equal(mkfifo(p, 0666), 0);
	char msg[1024];
	int r = copy_bounded(f, "arch/x86/boot/bzImage", &kimage, msg, sizeof(msg));
	assert_int_equal(r, -EINVAL);
	assert_non_null(strstr(msg, "kernel image"));
	assert_non_null(strstr(msg, "arch/x86/boot/bzImage"));
	assert_non_null(strstr(msg, "not a regular file (a FIFO)"));
	assert_false(fs_exists(f->out));
	free(p);
}

static void test_symlink_to_device(void **state)
{
	struct fx *f = *state;
	char *p = tree_path(f, "arch/x86/boot/bzImage");
	assert_int_equal(symlink("/dev/zero", p), 0);
	char msg[1024];
	assert_int_equal(copy_bounded(f, "arch/x86/boot/bzImage", &kimage, msg, sizeof(msg)),
			 -ELOOP);
	assert_non_null(strstr(msg, "arch/x86/boot/bzImage"));
	assert_non_null(strstr(msg, "symbolic link"));
	assert_false(fs_exists(f->out));
	free(p);
}

/* A root-only file of the host (here one the test makes, mode 0600). */
static char *secret_file(struct fx *f)
{
	char *secret = fs_path_join(f->dir, "secret");
	int fd = open(secret, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "root only\n", 10), 10);
	close(fd);
	return secret;
}

static void test_symlink_to_root_only(void **state)
{
	struct fx *f = *state;
	char *secret = secret_file(f);
	char *p = tree_path(f, ".config");
	assert_int_equal(symlink(secret, p), 0);
	const struct fs_untrusted u = {
	    .what = "kernel .config", .max = 1 << 20, .reader_uid = 65534};
	char msg[1024];
	assert_int_equal(copy_bounded(f, ".config", &u, msg, sizeof(msg)), -ELOOP);
	assert_non_null(strstr(msg, "kernel .config"));
	assert_non_null(strstr(msg, "symbolic link"));
	assert_false(fs_exists(f->out));
	free(p);
	free(secret);
}

/* A hard link needs no symlink: the check is that the build's user could
 * read the file at all (fs.protected_hardlinks stops most of these; the
 * host may not set it). */
static void test_hard_link_to_unreadable(void **state)
{
	struct fx *f = *state;
	char *secret = secret_file(f);
	char *p = tree_path(f, ".config");
	assert_int_equal(link(secret, p), 0);
	if (geteuid() != 0)
		assert_int_equal(chown(p, geteuid(), getegid()), 0);
	const struct fs_untrusted u = {
	    .what = "kernel .config", .max = 1 << 20, .reader_uid = (long)geteuid() + 1};
	char msg[1024];
	assert_int_equal(copy_bounded(f, ".config", &u, msg, sizeof(msg)), -EACCES);
	assert_non_null(strstr(msg, "not readable by the build's user"));
	assert_non_null(strstr(msg, ".config"));
	assert_false(fs_exists(f->out));
	free(p);
	free(secret);
}

static void test_oversized(void **state)
{
	struct fx *f = *state;
	char *p = tree_path(f, "arch/x86/boot/bzImage");
	int fd = open(p, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (2 << 20)), 0); /* sparse: cheap */
	close(fd);
	char msg[1024];
	assert_int_equal(copy_bounded(f, "arch/x86/boot/bzImage", &kimage, msg, sizeof(msg)),
			 -EFBIG);
	assert_non_null(strstr(msg, "2097152 bytes, more than its limit of 1048576"));
	assert_non_null(strstr(msg, "kernel image"));
	assert_false(fs_exists(f->out));
	free(p);
}

/* arch/ a symlink to a directory elsewhere holding a "bzImage": refused
 * both ways the path is resolved. */
static void test_symlinked_directory(void **state)
{
	struct fx *f = *state;
	char *elsewhere = fs_path_join(f->dir, "elsewhere/x86/boot");
	struct sl_error err = {0};
	assert_int_equal(fs_mkdir_p(elsewhere, &err), 0);
	char *bz = fs_path_join(elsewhere, "bzImage");
	FILE *fp = fopen(bz, "w");
	fputs("not the build's", fp);
	fclose(fp);
	char *arch = tree_path(f, "arch");
	assert_int_equal(fs_rm_rf(arch, &err), 0);
	char *target = fs_path_join(f->dir, "elsewhere");
	assert_int_equal(symlink(target, arch), 0);
	for (int fallback = 0; fallback < 2; fallback++) {
		fs_untrusted_force_fallback(fallback);
		char msg[1024];
		assert_int_equal(
		    copy_bounded(f, "arch/x86/boot/bzImage", &kimage, msg, sizeof(msg)), -ELOOP);
		assert_non_null(strstr(msg, "symbolic link or lies under one"));
		assert_false(fs_exists(f->out));
	}
	/* and ".." is not a way around it */
	char msg[1024];
	assert_int_equal(
	    copy_bounded(f, "../elsewhere/x86/boot/bzImage", &kimage, msg, sizeof(msg)), -EINVAL);
	free(target);
	free(arch);
	free(bz);
	free(elsewhere);
}

/* The fallback opens a plain file through plain directories too. */
static void test_fallback_regular(void **state)
{
	fs_untrusted_force_fallback(true);
	test_regular_copied(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_regular_copied, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fallback_regular, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fifo_fails_fast, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_symlink_to_device, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_symlink_to_root_only, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hard_link_to_unreadable, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_oversized, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_symlinked_directory, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
