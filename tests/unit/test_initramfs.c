/* The initramfs builder: the archive's real entries (read back with
 * libarchive), the content-keyed cache, and the appended plan archive. */
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <cmocka.h>

#include "kernel/initramfs.h"
#include "util/fs.h"

struct fixture {
	char dir[64];
	char *cache, *wl, *agent;
};

static void copy_file(const char *from, const char *to, mode_t mode)
{
	char *data = NULL;
	size_t len = 0;
	assert_int_equal(fs_read_file(from, 64 << 20, &data, &len, NULL), 0);
	int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	free(data);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	strcpy(f->dir, "/tmp/test-initramfs-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->cache = fs_path_join(f->dir, "cache");
	f->wl = fs_path_join(f->dir, "workloads");
	f->agent = fs_path_join(f->dir, "agent");
	assert_int_equal(fs_mkdir_p(f->wl, NULL), 0);
	/* Any ELF binary will do as the agent and as a workload. */
	copy_file("/bin/true", f->agent, 0755);
	char *w = fs_path_join(f->wl, "crashme");
	copy_file("/bin/true", w, 0755);
	free(w);
	w = fs_path_join(f->wl, "crashme.d"); /* not executable: left out */
	copy_file("/etc/hostname", w, 0644);
	free(w);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	fs_rm_rf(f->dir, NULL);
	free(f->cache);
	free(f->wl);
	free(f->agent);
	free(f);
	return 0;
}

struct listing {
	char names[256][128];
	int n;
	int console_ok;
	char plan[4096];
};

static void list_archive(const void *buf, size_t len, struct listing *l)
{
	struct archive *a = archive_read_new();
	struct archive_entry *ae;
	archive_read_support_filter_gzip(a);
	archive_read_support_format_cpio(a);
	assert_int_equal(archive_read_open_memory(a, buf, len), ARCHIVE_OK);
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK) {
		const char *p = archive_entry_pathname(ae);
		assert_true(l->n < 256);
		snprintf(l->names[l->n++], 128, "%s", p);
		if (strcmp(p, "dev/console") == 0)
			l->console_ok = archive_entry_filetype(ae) == AE_IFCHR &&
					archive_entry_rdevmajor(ae) == 5 &&
					archive_entry_rdevminor(ae) == 1;
		if (strcmp(p, "schedlab/plan.json") == 0) {
			la_ssize_t n = archive_read_data(a, l->plan, sizeof(l->plan) - 1);
			assert_true(n > 0);
			l->plan[n] = '\0';
		}
	}
	archive_read_free(a);
}

static int listed(const struct listing *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->names[i], name) == 0)
			return i + 1;
	return 0;
}

static void test_base_contents_and_cache(void **state)
{
	struct fixture *f = *state;
	struct initramfs_inputs in = {.agent = f->agent, .workloads_dir = f->wl};
	struct sl_error err = {0};
	char *path = NULL, *again = NULL;

	int r0 = initramfs_base(f->cache, &in, &path, &err);
	if (r0 != 1)
		fail_msg("initramfs_base: %d %s", r0, err.message);
	assert_non_null(strstr(path, "/initramfs/"));
	assert_non_null(strstr(path, ".cpio.gz"));
	assert_int_equal(initramfs_base(f->cache, &in, &again, &err), 0); /* a hit */
	assert_string_equal(path, again);
	free(again);

	char *data = NULL;
	size_t len = 0;
	assert_int_equal(fs_read_file(path, 64 << 20, &data, &len, NULL), 0);
	assert_true((unsigned char)data[0] == 0x1f && (unsigned char)data[1] == 0x8b);
	struct listing *l = calloc(1, sizeof(*l));
	list_archive(data, len, l);
	const char *want[] = {"init",
			      "usr/bin/cyclictest",
			      "usr/bin/rt-migrate-test",
			      "usr/bin/hackbench",
			      "usr/bin/pi_stress",
			      "usr/bin/pip_stress",
			      "usr/bin/cyclicdeadline",
			      "usr/bin/crashme",
			      "lib64/ld-linux-x86-64.so.2",
			      "lib/x86_64-linux-gnu/libc.so.6",
			      "lib/x86_64-linux-gnu/libnuma.so.1",
			      "proc",
			      "sys",
			      "dev",
			      "tmp",
			      "schedlab",
			      "usr",
			      "usr/bin",
			      "dev/console"};
	for (size_t i = 0; i < ELEMENTSOF(want); i++) {
		if (!listed(l, want[i]))
			fail_msg("'%s' is missing from the image", want[i]);
	}
	assert_false(listed(l, "usr/bin/crashme.d"));
	/* stress-ng comes only with a job that runs it (run_plan.c) */
	assert_false(listed(l, "usr/bin/stress-ng"));
	assert_true(l->console_ok);
	/* A directory precedes what is in it. */
	assert_true(listed(l, "usr") < listed(l, "usr/bin"));
	assert_true(listed(l, "usr/bin") < listed(l, "usr/bin/cyclictest"));
	free(l);
	free(data);

	/* A changed workload is a different image. */
	char *w = fs_path_join(f->wl, "crashme");
	copy_file("/bin/false", w, 0755);
	free(w);
	assert_int_equal(initramfs_base(f->cache, &in, &again, &err), 1);
	assert_string_not_equal(path, again);
	free(again);
	free(path);
}

static void test_with_plan(void **state)
{
	struct fixture *f = *state;
	struct initramfs_inputs in = {.agent = f->agent, .workloads_dir = NULL};
	struct sl_error err = {0};
	char *path = NULL;
	assert_true(initramfs_base(f->cache, &in, &path, &err) >= 0);

	json_object *plan = json_tokener_parse("{\"run_id\":\"r-test\",\"workloads\":[]}");
	char *out = fs_path_join(f->dir, "initrd");
	assert_int_equal(initramfs_with_plan(path, plan, out, &err), 0);

	char *base = NULL, *all = NULL;
	size_t blen = 0, alen = 0;
	assert_int_equal(fs_read_file(path, 64 << 20, &base, &blen, NULL), 0);
	assert_int_equal(fs_read_file(out, 64 << 20, &all, &alen, NULL), 0);
	assert_true(alen > blen);
	assert_memory_equal(base, all, blen); /* the base, unchanged, then the plan */
	struct listing *l = calloc(1, sizeof(*l));
	list_archive(all + blen, alen - blen, l);
	assert_int_equal(l->n, 2);
	assert_true(listed(l, "schedlab"));
	assert_true(listed(l, "schedlab/plan.json"));
	json_object *back = json_tokener_parse(l->plan);
	assert_non_null(back);
	assert_string_equal(json_object_get_string(json_object_object_get(back, "run_id")),
			    "r-test");
	json_object_put(back);
	free(l);
	free(base);
	free(all);

	/* A missing base is a clean error naming it. */
	memset(&err, 0, sizeof(err));
	assert_true(initramfs_with_plan("/nonexistent/base.cpio.gz", plan, out, &err) < 0);
	assert_non_null(strstr(err.message, "/nonexistent/base.cpio.gz"));
	json_object_put(plan);
	free(out);
	free(path);
}

static void test_missing_agent(void **state)
{
	struct fixture *f = *state;
	struct initramfs_inputs in = {.agent = "/nonexistent/agent"};
	struct sl_error err = {0};
	char *path = NULL;
	assert_true(initramfs_base(f->cache, &in, &path, &err) < 0);
	assert_null(path);
	assert_non_null(strstr(err.message, "/nonexistent/agent"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_base_contents_and_cache, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_with_plan, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing_agent, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
