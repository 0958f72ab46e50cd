/* Pools of stored runs and the Clopper-Pearson interval (compare/resample.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compare/resample.h"
#include "util/fs.h"

#define assert_close(a, b, eps)                                                                    \
	do {                                                                                       \
		double _a = (a), _b = (b);                                                         \
		if (!(fabs(_a - _b) <= (eps)))                                                     \
			fail_msg("%s = %.17g, expected %.17g", #a, _a, _b);                        \
	} while (0)

static void test_clopper_pearson(void **state)
{
	(void)state;
	double ci[2];
	/* 0 of 10: the upper end solves (1 - p)^10 = 0.025, p = 1 - 0.025^(1/10)
	 * = 0.308497. */
	resample_cp95(0, 10, ci);
	assert_close(ci[0], 0, 0);
	assert_close(ci[1], 100 * (1 - pow(0.025, 0.1)), 1e-6);
	/* 10 of 10 mirrors it. */
	resample_cp95(10, 10, ci);
	assert_close(ci[0], 100 * pow(0.025, 0.1), 1e-6);
	assert_close(ci[1], 100, 0);
	/* 5 of 10: [0.187086, 0.812914] (the beta quantiles B(0.025; 5, 6) and
	 * B(0.975; 6, 5), as R's binom.test(5, 10) prints). */
	resample_cp95(5, 10, ci);
	assert_close(ci[0], 18.7086, 1e-3);
	assert_close(ci[1], 81.2914, 1e-3);
	resample_cp95(0, 0, ci);
	assert_close(ci[0], 0, 0);
	assert_close(ci[1], 100, 0);
}

static const char result_json[] =
    "{\"job\": {\"baseline\": \"base\"}, \"variants\": {"
    " \"base\": {\"runs\": [{\"key\": \"base#0\", \"repeat\": 0, \"status\": \"ok\", "
    "\"workloads\": ["
    "  {\"name\": \"cyclictest\", \"status\": \"ok\", \"details\": {\"big\": 1},"
    "   \"metrics\": {\"latency_us.avg\": 120.5, \"latency_us.max\": 900}},"
    "  {\"name\": \"rt-migrate-test\", \"status\": \"ok\", \"metrics\": {\"inversions\": 3}}]}]},"
    " \"cand\": {\"runs\": [{\"key\": \"cand#0\", \"repeat\": 0, \"status\": \"ok\", "
    "\"workloads\": []},"
    "  {\"key\": \"cand#1\", \"repeat\": 1, \"status\": \"ok\", \"workloads\": []}]}}}";

static void test_pool(void **state)
{
	(void)state;
	json_object *r = json_tokener_parse(result_json);
	assert_non_null(r);
	struct resample_pool base = {0}, cand = {0};
	const struct resample_keep keep[] = {{"cyclictest", "latency_us.avg"}};
	assert_int_equal(resample_pool_add(&base, r, true, keep, 1), 0);
	assert_int_equal(resample_pool_add(&cand, r, false, keep, 1), 0);
	assert_int_equal(base.n, 1);
	assert_int_equal(cand.n, 2);
	/* Pruned: only the kept workload and metric are left, and no details. */
	json_object *wls = json_object_object_get(base.runs[0], "workloads");
	assert_int_equal(json_object_array_length(wls), 1);
	json_object *w = json_object_array_get_idx(wls, 0);
	assert_null(json_object_object_get(w, "details"));
	json_object *m = json_object_object_get(w, "metrics");
	assert_int_equal(json_object_object_length(m), 1);
	assert_non_null(json_object_object_get(m, "latency_us.avg"));
	/* A draw is a renamed copy. */
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	json_object *d = resample_draw(&base, rng, "patched", 7);
	assert_string_equal(json_object_get_string(json_object_object_get(d, "key")), "patched#7");
	assert_int_equal(json_object_get_int(json_object_object_get(d, "repeat")), 7);
	assert_string_equal(json_object_get_string(json_object_object_get(base.runs[0], "key")),
			    "base#0");
	json_object_put(d);
	gsl_rng_free(rng);
	resample_pool_free(&base);
	resample_pool_free(&cand);
	assert_null(base.runs);
	/* A result without a baseline name is refused. */
	json_object *bad = json_tokener_parse("{\"variants\": {}}");
	assert_int_equal(resample_pool_add(&base, bad, true, NULL, 0), -EINVAL);
	json_object_put(bad);
	/* Runs are read through the result model: a workload whose metrics are
	 * not an object is refused, not pruned halfway. */
	bad = json_tokener_parse("{\"job\": {\"baseline\": \"base\"}, \"variants\": {\"base\": "
				 "{\"runs\": [{\"workloads\": [{\"name\": \"w\", "
				 "\"metrics\": [1]}]}]}}}");
	assert_non_null(bad);
	assert_int_equal(resample_pool_add(&base, bad, true, keep, 1), -EINVAL);
	resample_pool_free(&base);
	json_object_put(bad);
	json_object_put(r);
}

static void test_job_json(void **state)
{
	(void)state;
	/* A stored job whose cyclictest gates were added by default with a
	 * threshold (0.9) today's table does not give, and an explicit gate on
	 * the other workload. */
	json_object *stored = json_tokener_parse(
	    "{\"baseline\": \"base\", \"repeat\": 6, \"workloads\": ["
	    " {\"name\": \"cyclictest\", \"tool\": \"cyclictest\", \"args\": [\"-h20000\"]},"
	    " {\"name\": \"rt-migrate-test\", \"tool\": \"rt-migrate-test\"}],"
	    " \"gates\": ["
	    "  {\"workload\": \"cyclictest\", \"metric\": \"latency_us.avg\", \"threshold\": 0.9,"
	    "   \"relative\": true, \"default\": true},"
	    "  {\"workload\": \"rt-migrate-test\", \"metric\": \"inversions\", \"threshold\": "
	    "1}]}");
	assert_non_null(stored);
	json_object *j = resample_job_json(stored, "cyclictest", 5, 12);
	assert_non_null(j);
	assert_int_equal(json_object_array_length(json_object_object_get(j, "workloads")), 1);
	json_object *gates = json_object_object_get(j, "gates");
	/* The rt-migrate-test gate went with its workload; cyclictest's are
	 * today's defaults (p99, as the args ask for a histogram, and avg). */
	assert_int_equal(json_object_array_length(gates), 2);
	for (size_t i = 0; i < 2; i++) {
		json_object *g = json_object_array_get_idx(gates, i);
		assert_string_equal(json_object_get_string(json_object_object_get(g, "workload")),
				    "cyclictest");
		json_object *t = json_object_object_get(g, "threshold");
		assert_true(!t || json_object_get_double(t) != 0.9);
	}
	json_object *rep = json_object_object_get(j, "repeat");
	assert_int_equal(json_object_get_int(json_object_object_get(rep, "min")), 5);
	assert_int_equal(json_object_get_int(json_object_object_get(rep, "max")), 12);
	/* The stored job is not changed. */
	assert_int_equal(json_object_array_length(json_object_object_get(stored, "gates")), 2);
	json_object_put(j);
	/* No workload named: both stay, the explicit inversions gate with them,
	 * and rt-migrate-test's default gate on the same metric gives way. */
	j = resample_job_json(stored, NULL, 5, 5);
	assert_int_equal(json_object_array_length(json_object_object_get(j, "workloads")), 2);
	assert_int_equal(json_object_array_length(json_object_object_get(j, "gates")), 3);
	json_object_put(j);
	json_object_put(stored);
}

static void put_file(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *path = fs_path_join(dir, name);
	struct sl_error err = {0};
	if (fs_write_file_atomic(path, text, strlen(text), &err) < 0)
		fail_msg("%s", err.message);
}

/* Stored results are read back strictly: a file that is JSON but not a
 * result document (a run without its status, no variants) is left out. */
static void test_load_results(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_resample.XXXXXX";
	assert_non_null(mkdtemp(dir));
	_cleanup_free_ char *good = NULL;
	struct sl_error err = {0};
	assert_int_equal(fs_read_file("data/result-example.json", 1 << 20, &good, NULL, &err), 0);
	put_file(dir, "aa-1-hog0.result.json", good);
	put_file(dir, "aa-2-hog0.result.json",
		 "{\"schema\":\"x\",\"job\":{},\"environment\":{},\"verdict\":\"pass\","
		 "\"verdict_reasons\":[],\"comparisons\":[],\"variants\":{\"base\":{"
		 "\"kernel\":\"k\",\"runs\":[{\"key\":\"base#0\",\"repeat\":0}]}}}");
	put_file(dir, "aa-3-hog0.result.json", "{\"job\":{}}");
	put_file(dir, "planted-1-hog0.result.json", good);
	json_object *out[8] = {0};
	int n = resample_load_results(dir, "aa-", 0, out, 8);
	assert_int_equal(n, 1);
	assert_non_null(json_object_object_get(out[0], "comparisons"));
	json_object_put(out[0]);
	assert_int_equal(fs_rm_rf(dir, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clopper_pearson),
	    cmocka_unit_test(test_pool),
	    cmocka_unit_test(test_job_json),
	    cmocka_unit_test(test_load_results),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
