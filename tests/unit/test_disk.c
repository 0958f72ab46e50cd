/* The free-space floor (util/disk.h) against a fake statvfs: the check
 * names the filesystem by its label and never its path, a wait returns once
 * room appears (and said why it waited), gives up after its bound with
 * "disk_full", and stops on a cancel; a floor of 0 checks nothing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "util/disk.h"

#define GIB (1024ULL * 1024 * 1024)

/* the filesystem of any path under "/full" has `full_free` bytes free
 * until `calls_until_room` checks have been made */
static unsigned long long full_free;
static int calls, calls_until_room;

static int fake_statvfs(const char *path, struct statvfs *st)
{
	memset(st, 0, sizeof(*st));
	st->f_frsize = 4096;
	st->f_blocks = 100 * GIB / 4096;
	unsigned long long avail = 50 * GIB;
	if (strncmp(path, "/full", 5) == 0 && (calls_until_room < 0 || calls++ < calls_until_room))
		avail = full_free;
	st->f_bavail = avail / 4096;
	return 0;
}

static int setup(void **state)
{
	(void)state;
	disk_set_statvfs_hook(fake_statvfs);
	full_free = GIB / 2;
	calls = 0;
	calls_until_room = -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	disk_set_statvfs_hook(NULL);
	return 0;
}

static void test_check(void **state)
{
	(void)state;
	const struct disk_fs fs[] = {{"cache", "/roomy/cache"}, {"state", "/full/state"}};
	char why[256] = "";
	assert_int_equal(disk_floor_check(fs, 2, 2 * GIB, why, sizeof(why), NULL), 1);
	assert_non_null(strstr(why, "state filesystem is 0.5 GiB"));
	assert_non_null(strstr(why, "min_free_bytes of 2.0 GiB"));
	assert_null(strchr(why, '/')); /* served by /v1/health: no path */
	assert_int_equal(disk_floor_check(fs, 2, GIB / 4, why, sizeof(why), NULL), 0);
	assert_int_equal(disk_floor_check(fs, 2, 0, why, sizeof(why), NULL), 0);
	/* a filesystem without a path (a cache not made yet) is skipped */
	const struct disk_fs none[] = {{"cache", NULL}, {"state", "/roomy"}};
	assert_int_equal(disk_floor_check(none, 2, 2 * GIB, why, sizeof(why), NULL), 0);
	unsigned long long avail, size;
	assert_int_equal(disk_space("/full/x", &avail, &size, NULL), 0);
	assert_int_equal(avail, GIB / 2);
	assert_int_equal(size, 100 * GIB);
}

static int waits_seen;
static char last_why[256];
static void on_wait(void *ud, const char *why)
{
	(void)ud;
	waits_seen++;
	snprintf(last_why, sizeof(last_why), "%s", why);
}

static void test_wait_until_room(void **state)
{
	(void)state;
	const struct disk_fs fs[] = {{"cache", "/full/cache"}};
	calls_until_room = 2; /* the third check finds room */
	waits_seen = 0;
	struct disk_wait w = {
	    .fs = fs, .n = 1, .floor = GIB, .max_s = 30, .poll_s = 1, .waiting = on_wait};
	bool waited = false;
	struct sl_error err = {0};
	assert_int_equal(disk_floor_wait(&w, &waited, &err), 0);
	assert_true(waited);
	assert_int_equal(waits_seen, 2);
	assert_non_null(strstr(last_why, "cache filesystem"));
	/* room at once: no wait at all */
	waited = true;
	assert_int_equal(disk_floor_wait(&w, &waited, &err), 0);
	assert_false(waited);
}

static void test_wait_bounded(void **state)
{
	(void)state;
	const struct disk_fs fs[] = {{"state", "/full/state"}};
	struct disk_wait w = {.fs = fs, .n = 1, .floor = GIB, .max_s = 1, .poll_s = 1};
	struct sl_error err = {0};
	assert_int_equal(disk_floor_wait(&w, NULL, &err), -ENOSPC);
	assert_int_equal(err.kind, ERR_INFRA);
	assert_string_equal(err.code, "disk_full");
	assert_non_null(strstr(err.message, "state filesystem"));
	assert_non_null(strstr(err.message, "Waited 1 s"));
}

static int cancel_now(void *ud)
{
	(void)ud;
	return 1;
}

static void test_wait_cancelled(void **state)
{
	(void)state;
	const struct disk_fs fs[] = {{"state", "/full/state"}};
	struct disk_wait w = {
	    .fs = fs, .n = 1, .floor = GIB, .max_s = 3600, .poll_s = 10, .cancelled = cancel_now};
	struct sl_error err = {0};
	assert_int_equal(disk_floor_wait(&w, NULL, &err), -ECANCELED);
	assert_int_equal(err.kind, ERR_CANCELLED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_check, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wait_until_room, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wait_bounded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wait_cancelled, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
