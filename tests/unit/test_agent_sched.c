/* Guest agent: share -> cpu.weight mapping, feature read-back matching, and
 * feature/tunable/cgroup writes against a temporary directory tree. The agent
 * is a separate static binary, so its sources are compiled in here. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "agent/sched.c"
#include "agent/util.c"

static void test_share_to_weight(void **state)
{
	(void)state;
	assert_int_equal(agent_sched_share_to_weight(1024), 100);
	assert_int_equal(agent_sched_share_to_weight(2048), 200);
	assert_int_equal(agent_sched_share_to_weight(512), 50);
	assert_int_equal(agent_sched_share_to_weight(1), 1);
	assert_int_equal(agent_sched_share_to_weight(0), 1);
	assert_int_equal(agent_sched_share_to_weight(-5), 1);
	/* rounding: 1000 * 100 / 1024 = 97.66 -> 98; 5 -> 0.49 -> clamped to 1 */
	assert_int_equal(agent_sched_share_to_weight(1000), 98);
	assert_int_equal(agent_sched_share_to_weight(5), 1);
	assert_int_equal(agent_sched_share_to_weight(15), 1); /* 1.46 */
	assert_int_equal(agent_sched_share_to_weight(16), 2); /* 1.5625 */
	assert_int_equal(agent_sched_share_to_weight(102400), 10000);
	assert_int_equal(agent_sched_share_to_weight(102401), 10000);
	assert_int_equal(agent_sched_share_to_weight(1000000000), 10000);
	assert_int_equal(agent_sched_share_to_weight(9223372036854775807LL), 10000);
}

static void test_features_has(void **state)
{
	const char *text = "GENTLE_FAIR_SLEEPERS START_DEBIT NO_NEXT_BUDDY LAST_BUDDY "
			   "NO_HRTICK NO_HRTICK_DL RT_PUSH\n";
	(void)state;
	assert_true(agent_sched_features_has(text, "NO_HRTICK"));
	assert_false(agent_sched_features_has(text, "HRTICK"));
	assert_false(agent_sched_features_has(text, "HRTICK_DL"));
	assert_true(agent_sched_features_has(text, "NO_HRTICK_DL"));
	assert_true(agent_sched_features_has(text, "GENTLE_FAIR_SLEEPERS"));
	assert_true(agent_sched_features_has(text, "RT_PUSH"));
	assert_false(agent_sched_features_has(text, "NO_RT_PUSH"));
	assert_false(agent_sched_features_has(text, "PUSH"));
	assert_false(agent_sched_features_has(text, "START"));
	assert_false(agent_sched_features_has(text, ""));
	assert_false(agent_sched_features_has("", "HRTICK"));
	assert_true(agent_sched_features_has("HRTICK", "HRTICK"));
}

struct tree {
	char dir[64];
};

static int tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	char path[256];

	snprintf(t->dir, sizeof(t->dir), "/tmp/test_agent_sched.XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(path, sizeof(path), "mkdir -p %s/sys/kernel/debug/sched %s/sys/fs/cgroup", t->dir,
		 t->dir);
	assert_int_equal(system(path), 0);
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", t->dir);
	assert_int_equal(system(cmd), 0);
	free(t);
	return 0;
}

static void put(const char *root, const char *rel, const char *text)
{
	_cleanup_free_ char *p = agent_path(root, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_apply_feature(void **state)
{
	struct tree *t = *state;
	char msg[512] = "";

	/* no features file: debugfs missing */
	assert_int_equal(agent_sched_apply_feature(t->dir, "HRTICK", msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "could not be written"));

	put(t->dir, SCHED_FEATURES_PATH, "");
	assert_int_equal(agent_sched_apply_feature(t->dir, "HRTICK", msg, sizeof(msg)), 0);

	/* accepted but not listed afterwards */
	_cleanup_free_ char *p = agent_path(t->dir, SCHED_FEATURES_PATH);
	unlink(p);
	assert_int_equal(symlink("/dev/null", p), 0);
	assert_int_equal(agent_sched_apply_feature(t->dir, "HRTICK", msg, sizeof(msg)), -ENODATA);
	assert_non_null(strstr(msg, "does not read back"));

	/* EINVAL from the kernel: an unknown feature */
	unlink(p);
	assert_int_equal(symlink("/proc/self/oom_score_adj", p), 0);
	assert_int_equal(agent_sched_apply_feature(t->dir, "NOT_A_FEATURE", msg, sizeof(msg)),
			 -EINVAL);
	assert_string_equal(msg, "feature 'NOT_A_FEATURE' is not known to this kernel");
}

static void test_apply_tunable(void **state)
{
	struct tree *t = *state;
	char msg[512] = "";

	assert_int_equal(
	    agent_sched_apply_tunable(t->dir, "base_slice_ns", 3000000, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "tunable 'base_slice_ns' does not exist"));
	put(t->dir, SCHED_DEBUG_DIR "/latency_ns", "");
	assert_int_equal(agent_sched_apply_tunable(t->dir, "latency_ns", 6000000, msg, sizeof(msg)),
			 0);
	/* a file that keeps its old, longer text reads back wrong */
	put(t->dir, SCHED_DEBUG_DIR "/min_granularity_ns", "123456789012\n");
	assert_int_equal(
	    agent_sched_apply_tunable(t->dir, "min_granularity_ns", 7, msg, sizeof(msg)), -ENODATA);
	assert_non_null(strstr(msg, "reads back as"));
}

static void test_cgroups(void **state)
{
	struct tree *t = *state;
	char msg[512] = "";
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ char *procs = agent_sched_cgroup_procs_path(t->dir, 1000);
	_cleanup_free_ char *wpath =
	    agent_path(t->dir, SCHED_CGROUP_DIR "/user-1000.slice/cpu.weight");

	assert_int_equal(agent_sched_cgroup_prepare(t->dir, msg, sizeof(msg)), 0);
	assert_int_equal(agent_sched_cgroup_add_uid(t->dir, 1000, 200, msg, sizeof(msg)), 0);
	assert_int_equal(agent_read_file(wpath, 100, &text, NULL), 0);
	assert_string_equal(text, "200\n");
	assert_non_null(strstr(procs, "/sys/fs/cgroup/schedlab/user-1000.slice/cgroup.procs"));
	assert_int_equal(strncmp(procs, t->dir, strlen(t->dir)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_share_to_weight),
	    cmocka_unit_test(test_features_has),
	    cmocka_unit_test_setup_teardown(test_apply_feature, tree_setup, tree_teardown),
	    cmocka_unit_test_setup_teardown(test_apply_tunable, tree_setup, tree_teardown),
	    cmocka_unit_test_setup_teardown(test_cgroups, tree_setup, tree_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
