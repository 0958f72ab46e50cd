/* The sched feature and tunable names read from captured 6.1 and 6.12
 * sources (tests/data/sched-names/README), and the check of a variant's
 * names against a kernel's lists. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/sched_names.h"
#include "util/fs.h"

#define DATA "tests/data/sched-names/"

static char *slurp(const char *path)
{
	char *text = NULL;
	struct sl_error err = {0};
	assert_int_equal(fs_read_file(path, 1 << 20, &text, NULL, &err), 0);
	return text;
}

/* The array's strings joined with ' '. */
static char *joined(json_object *arr)
{
	static char out[2048];
	out[0] = '\0';
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		strcat(out, i ? " " : "");
		strcat(out, json_object_get_string(json_object_array_get_idx(arr, i)));
	}
	return out;
}

static json_object *parsed(const char *file, int (*parse)(const char *, json_object *),
			   int expect_n)
{
	char *text = slurp(file);
	json_object *arr = json_object_new_array();
	assert_int_equal(parse(text, arr), expect_n);
	assert_int_equal(json_object_array_length(arr), expect_n);
	free(text);
	return arr;
}

static void test_features_612(void **state)
{
	(void)state;
	/* 34 SCHED_FEAT lines; TTWU_QUEUE and RT_PUSH_IPI twice (#ifdef/#else) */
	json_object *arr =
	    parsed(DATA "linux-6.12-patched-features.h", sched_names_parse_features, 32);
	assert_string_equal(
	    joined(arr),
	    "PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE RUN_TO_PARITY PREEMPT_SHORT "
	    "NEXT_BUDDY PICK_BUDDY CACHE_HOT_BUDDY DELAY_DEQUEUE DELAY_ZERO WAKEUP_PREEMPTION "
	    "HRTICK HRTICK_DL DOUBLE_TICK NONTASK_CAPACITY TTWU_QUEUE SIS_UTIL "
	    "WARN_DOUBLE_CLOCK RT_PUSH_IPI RT_RUNTIME_SHARE RT_PUSH RT_WAKEUP_PLACE RT_PULL "
	    "RT_CPUPRI LB_MIN ATTACH_AGE_LOAD WA_IDLE WA_WEIGHT WA_BIAS UTIL_EST LATENCY_WARN "
	    "NI_RANDOM");
	json_object_put(arr);
}

static void test_features_61(void **state)
{
	(void)state;
	json_object *arr = parsed(DATA "linux-6.1-features.h", sched_names_parse_features, 27);
	const char *s = joined(arr);
	assert_non_null(strstr(s, "GENTLE_FAIR_SLEEPERS START_DEBIT "));
	assert_non_null(strstr(s, " BASE_SLICE"));
	assert_null(strstr(s, "PLACE_LAG"));
	json_object_put(arr);
}

static void test_tunables_612(void **state)
{
	(void)state;
	/* not: verbose/features/preempt/tunable_scaling (files), numa_balancing/
	 * and domains/ entries, fair_server/, the read-only "level" */
	json_object *arr = parsed(DATA "linux-6.12-debug.c", sched_names_parse_tunables, 5);
	assert_string_equal(joined(arr), "base_slice_ns latency_warn_ms latency_warn_once "
					 "migration_cost_ns nr_migrate");
	json_object_put(arr);
}

static void test_tunables_61(void **state)
{
	(void)state;
	json_object *arr = parsed(DATA "linux-6.1-debug.c", sched_names_parse_tunables, 8);
	assert_string_equal(joined(arr), "latency_ns min_granularity_ns idle_min_granularity_ns "
					 "wakeup_granularity_ns latency_warn_ms latency_warn_once "
					 "migration_cost_ns nr_migrate");
	json_object_put(arr);
}

static void test_parse_edges(void **state)
{
	(void)state;
	json_object *arr = json_object_new_array();
	const char *feat = "/*\n * SCHED_FEAT(IN_COMMENT, true)\n */\n"
			   "\tSCHED_FEAT( INDENTED , false)\n"
			   "SCHED_FEAT(lower, true)\n"
			   "SCHED_FEAT(NO_COMMA)\n"
			   "#define SCHED_FEAT(name, enabled) x\n"
			   "SCHED_FEAT(LAST, true)"; /* no final newline */
	assert_int_equal(sched_names_parse_features(feat, arr), 2);
	assert_string_equal(joined(arr), "INDENTED LAST");
	json_object_put(arr);

	arr = json_object_new_array();
	const char *dbg = "debugfs_create_u64(\"split_call\",\n\t\t0644,\n\t\tdebugfs_sched,\n"
			  "\t\t&x);\n"
			  "debugfs_create_u32(\"read_only\", 0444, debugfs_sched, &x);\n"
			  "debugfs_create_u32(\"group_write\", 0464, debugfs_sched, &x);\n"
			  "debugfs_create_u32(\"other_dir\", 0644, debugfs_sched_x, &x);\n"
			  "debugfs_create_bool(\"flag\", 0644, debugfs_sched, &x);\n"
			  "debugfs_create_u32(name, 0644, debugfs_sched, &x);\n"
			  "debugfs_create_u32(\"Upper\", 0644, debugfs_sched, &x);\n"
			  "debugfs_create_ulong(\"last\", 0600, debugfs_sched, &x)";
	assert_int_equal(sched_names_parse_tunables(dbg, arr), 2);
	assert_string_equal(joined(arr), "split_call last");
	json_object_put(arr);
}

/* A 6.12 kernel's meta.json, as the build writes it. */
static json_object *meta_612(void)
{
	json_object *meta = json_object_new_object();
	json_object_object_add(meta, "source", json_object_new_string("debian:linux-source-6.12"));
	json_object_object_add(meta, "source_version", json_object_new_string("6.12.118"));
	json_object *f =
	    parsed(DATA "linux-6.12-patched-features.h", sched_names_parse_features, 32);
	json_object *t = parsed(DATA "linux-6.12-debug.c", sched_names_parse_tunables, 5);
	json_object_object_add(meta, "sched_features", f);
	json_object_object_add(meta, "sched_tunables", t);
	return meta;
}

static void test_check(void **state)
{
	(void)state;
	json_object *meta = meta_612();
	const char *ok_features[] = {"NO_RT_PUSH", "PLACE_LAG", "NO_RUN_TO_PARITY",
				     "PREEMPT_SHORT"};
	struct job_tunable ok_tun[] = {
	    {"base_slice_ns", 3000000}, {"migration_cost_ns", 0}, {"nr_migrate", 8}};
	struct job_variant v = {.name = "eevdf",
				.features = ok_features,
				.n_features = 4,
				.sched_tunables = ok_tun,
				.n_sched_tunables = 3};
	struct sl_error err = {0};
	assert_int_equal(sched_names_check(meta, &v, "base", &err), 0);

	/* a 6.1 (CFS) tunable on 6.12 */
	struct job_tunable cfs_tun[] = {{"base_slice_ns", 1}, {"latency_ns", 6000000}};
	v.sched_tunables = cfs_tun;
	v.n_sched_tunables = 2;
	assert_int_equal(sched_names_check(meta, &v, "base", &err), -EINVAL);
	assert_int_equal(err.kind, ERR_INVALID);
	assert_string_equal(err.path, "$.variants.eevdf.sched_tunables.latency_ns");
	assert_non_null(strstr(err.message, "'latency_ns'"));
	assert_non_null(strstr(err.message, "'base' (debian:linux-source-6.12, 6.12.118)"));
	assert_non_null(strstr(err.message, "base_slice_ns, latency_warn_ms, latency_warn_once, "
					    "migration_cost_ns, nr_migrate."));

	/* a 6.1 feature, with NO_, second in the list */
	const char *cfs_features[] = {"HRTICK", "NO_GENTLE_FAIR_SLEEPERS"};
	v.features = cfs_features;
	v.n_features = 2;
	v.n_sched_tunables = 0;
	memset(&err, 0, sizeof(err));
	assert_int_equal(sched_names_check(meta, &v, "base", &err), -EINVAL);
	assert_string_equal(err.path, "$.variants.eevdf.features[1]");
	assert_non_null(strstr(err.message, "'GENTLE_FAIR_SLEEPERS'"));
	assert_non_null(strstr(err.message, "PLACE_LAG"));
	assert_true(strlen(err.message) < sizeof(err.message) - 1);

	/* a kernel cached before the lists were kept: nothing to check against */
	json_object_object_del(meta, "sched_features");
	json_object_object_del(meta, "sched_tunables");
	v.sched_tunables = cfs_tun;
	v.n_sched_tunables = 2;
	assert_int_equal(sched_names_check(meta, &v, "base", &err), 0);
	assert_int_equal(sched_names_check(NULL, &v, "base", &err), 0);
	json_object_put(meta);
}

static void test_from_tree(void **state)
{
	(void)state;
	char dir[] = "/tmp/schedlab-sched-names-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct sl_error err = {0};
	json_object *meta = json_object_new_object();
	/* no kernel/sched at all (a tree laid out otherwise): no lists */
	assert_int_equal(sched_names_from_tree(dir, meta, &err), 0);
	assert_int_equal(json_object_object_length(meta), 0);

	char *sched = NULL;
	assert_true(asprintf(&sched, "%s/kernel/sched", dir) > 0);
	assert_int_equal(fs_mkdir_p(sched, &err), 0);
	char *feat = fs_path_join(sched, "features.h"), *dbg = fs_path_join(sched, "debug.c");
	char *text = slurp(DATA "linux-6.12-patched-features.h");
	assert_int_equal(fs_write_file_atomic(feat, text, strlen(text), &err), 0);
	free(text);
	text = slurp(DATA "linux-6.12-debug.c");
	assert_int_equal(fs_write_file_atomic(dbg, text, strlen(text), &err), 0);
	free(text);
	assert_int_equal(sched_names_from_tree(dir, meta, &err), 0);
	json_object *arr = NULL;
	assert_true(json_object_object_get_ex(meta, "sched_features", &arr));
	assert_int_equal(json_object_array_length(arr), 32);
	assert_true(json_object_object_get_ex(meta, "sched_tunables", &arr));
	assert_int_equal(json_object_array_length(arr), 5);
	json_object_put(meta);
	assert_int_equal(fs_rm_rf(dir, &err), 0);
	free(feat);
	free(dbg);
	free(sched);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_features_612), cmocka_unit_test(test_features_61),
	    cmocka_unit_test(test_tunables_612), cmocka_unit_test(test_tunables_61),
	    cmocka_unit_test(test_parse_edges),	 cmocka_unit_test(test_check),
	    cmocka_unit_test(test_from_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
