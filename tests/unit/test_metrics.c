/* Metric parsers on golden rt-tests output captured on the host
 * (tests/data/rt-tests/, see README there), plus garbage, truncated and
 * hostile inputs that must give a clean error. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"
#include "util/fs.h"

static char *golden(const char *name)
{
	_cleanup_free_ char *root = fs_data_dir();
	_cleanup_free_ char *dir = fs_path_join(root, "tests/data/rt-tests");
	_cleanup_free_ char *path = fs_path_join(dir, name);
	char *data = NULL;
	struct sl_error err = {0};
	if (fs_read_file(path, 8 << 20, &data, NULL, &err) < 0)
		fail_msg("cannot read %s: %s", path, err.message);
	return data;
}

static double num(json_object *m, const char *name)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(m, name, &v))
		fail_msg("metric '%s' missing", name);
	return json_object_get_double(v);
}

static bool has(json_object *m, const char *name)
{
	return json_object_object_get_ex(m, name, NULL);
}

/* ---- rt-migrate-test ---- */

static void test_rtm_golden_p60_l20(void **state)
{
	(void)state;
	_cleanup_free_ char *out = golden("rtmigrate-p60-l20-t3.stdout");
	_cleanup_free_ char *js = golden("rtmigrate-p60-l20-t3.json");
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	int r = metrics_rtmigrate(out, strlen(out), js, RTMIGRATE_DEFAULT_MAXERR_US, &m, &d, &err);
	if (r < 0)
		fail_msg("%s", err.message);
	/* The tool's own summary in the golden file: prio 60 Max 20159 Min 28,
	 * prio 61 Max 144 Min 37, prio 62 Max 133 Min 32. */
	assert_true(num(m, "start_delay_us.prio60.max") == 20159);
	assert_true(num(m, "start_delay_us.prio60.min") == 28);
	assert_true(num(m, "start_delay_us.prio61.max") == 144);
	assert_true(num(m, "start_delay_us.prio61.min") == 37);
	assert_true(num(m, "start_delay_us.prio62.max") == 133);
	assert_true(num(m, "start_delay_us.prio62.min") == 32);
	/* Tot 1375 us over 20 loops: the tool prints Avg 68 (truncated). */
	assert_true(fabs(num(m, "start_delay_us.prio61.avg") - 1375.0 / 20) < 1.0);
	json_object *it = NULL, *mx = NULL;
	assert_true(json_object_object_get_ex(d, "iterations", &it));
	assert_int_equal(json_object_array_length(it), 20);
	assert_true(json_object_object_get_ex(d, "maxerr_us", &mx));
	assert_int_equal(json_object_get_int(mx), 1000);
	/* On this host the lowest task waited 20 ms in every loop but 11, 13
	 * and 17, where it started with the others (34/88/81 us and so on:
	 * at most 56 us ahead, well inside maxerr): no inversion. */
	assert_true(num(m, "inversions") == 0);
	assert_true(num(m, "inversion_max_us") == 0);
}

static void test_rtm_golden_variants(void **state)
{
	(void)state;
	static const struct {
		const char *base;
		int nprio, first_prio, inversions, inversion_max;
	} cases[] = {
	    {"rtmigrate-p60-l5-t3", 3, 60, 0, 0},
	    /* Loop 1: prio 10 started at 38 us, prio 11 at 20111 us. */
	    {"rtmigrate-p10-l8-t4", 4, 10, 1, 20111 - 38},
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		char a[64], b[64];
		snprintf(a, sizeof(a), "%s.stdout", cases[i].base);
		snprintf(b, sizeof(b), "%s.json", cases[i].base);
		_cleanup_free_ char *out = golden(a);
		_cleanup_free_ char *js = golden(b);
		_cleanup_json_ json_object *m = NULL, *d = NULL;
		struct sl_error err = {0};
		if (metrics_rtmigrate(out, strlen(out), js, 1000, &m, &d, &err) < 0)
			fail_msg("%s: %s", cases[i].base, err.message);
		char name[64];
		for (int p = 0; p < cases[i].nprio; p++) {
			snprintf(name, sizeof(name), "start_delay_us.prio%d.max",
				 cases[i].first_prio + p);
			assert_true(has(m, name));
		}
		snprintf(name, sizeof(name), "start_delay_us.prio%d.max",
			 cases[i].first_prio + cases[i].nprio);
		assert_false(has(m, name));
		assert_true(num(m, "inversions") == cases[i].inversions);
		assert_true(num(m, "inversion_max_us") == cases[i].inversion_max);
		/* Without the JSON file stdout alone is enough. */
		_cleanup_json_ json_object *m2 = NULL, *d2 = NULL;
		assert_int_equal(metrics_rtmigrate(out, strlen(out), NULL, 1000, &m2, &d2, &err),
				 0);
		assert_true(json_object_equal(m, m2));
	}
}

/* Hand-made: prio 61 waits 20 ms while prio 60 runs (seed 009's unbounded
 * inversion) in iterations 1 and 3; iteration 2 is late by less than maxerr. */
static const char inverted[] = "Iter:      0       1       2  \n"
			       "   0:    20068      60      41  \n"
			       " len:    40068   20061   20041  \n"
			       "   1:       12   20019      26  \n"
			       " len:    20012   40019   20026  \n"
			       "   2:       30     700      20  \n"
			       "   3:       15   21000    25010  \n"
			       "Parent pid: 1\n"
			       " Task 0 (prio 60) (pid 2):\n"
			       "   Max: 20068 us\n"
			       "   Min: 12 us\n"
			       " Task 1 (prio 61) (pid 3):\n"
			       " Task 2 (prio 62) (pid 4):\n";

static void test_rtm_inversions(void **state)
{
	(void)state;
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_rtmigrate(inverted, strlen(inverted), NULL, 1000, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "inversions") == 2);
	/* Iteration 3: prio 62 started 25010 - 15 = 24995 us after prio 60. */
	assert_true(num(m, "inversion_max_us") == 24995);
	assert_true(num(m, "start_delay_us.prio61.max") == 21000);
	json_object *late = NULL;
	assert_true(json_object_object_get_ex(d, "lateness_us", &late));
	assert_int_equal(json_object_get_int(json_object_array_get_idx(late, 1)), 20007);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(late, 2)), 670);

	/* With maxerr 500 the 670 us of iteration 2 count too; with 670 exactly
	 * they do not (lateness must exceed maxerr). */
	_cleanup_json_ json_object *m0 = NULL, *d0 = NULL, *m1 = NULL, *d1 = NULL;
	assert_int_equal(metrics_rtmigrate(inverted, strlen(inverted), NULL, 500, &m0, &d0, &err),
			 0);
	assert_true(num(m0, "inversions") == 3);
	assert_int_equal(metrics_rtmigrate(inverted, strlen(inverted), NULL, 670, &m1, &d1, &err),
			 0);
	assert_true(num(m1, "inversions") == 2);
}

static void expect_rtm_error(const char *out, const char *js, const char *needle)
{
	json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	int r = metrics_rtmigrate(out, strlen(out), js, 1000, &m, &d, &err);
	if (r == 0)
		fail_msg("expected an error containing '%s' for:\n%s", needle, out);
	assert_null(m);
	assert_int_equal(err.kind, ERR_INVALID);
	if (!strstr(err.message, needle))
		fail_msg("message '%s' lacks '%s'", err.message, needle);
}

static void test_rtm_garbage(void **state)
{
	(void)state;
	expect_rtm_error("", NULL, "no iterations");
	expect_rtm_error("hello world\n\x01\x02", NULL, "no iterations");
	expect_rtm_error("   0:    1 2 3\n", NULL, "before the 'Iter:' header");
	expect_rtm_error("Iter: 0 1 2\n   0: 1 2\n", NULL, "3 start delays");
	expect_rtm_error("Iter: 0 1 2\n   0: 1 2 3\n   2: 1 2 3\n", NULL, "iteration 1");
	expect_rtm_error("Iter: 0 1 2\n   0: 1 2 99999999999999999999\n", NULL, "3 start delays");
	expect_rtm_error("Iter: 0 1 2\n   0: 1 -2 3\n", NULL, "3 start delays");
	expect_rtm_error("Iter: 0 2\n", NULL, "number its tasks");
	expect_rtm_error("Iter: 0 1\n   0: 5 6\n", NULL, "priority of task 0");
	expect_rtm_error("Iter: 0 1\n   0: 5 6\n Task 7 (prio 3) (pid 1):\n", NULL, "does not fit");
	/* The summary disagrees with the iterations: output was cut or forged. */
	expect_rtm_error("Iter: 0\n   0: 5\n Task 0 (prio 3) (pid 1):\n   Max: 6 us\n", NULL,
			 "does not match");
	/* The JSON file contradicts stdout. */
	expect_rtm_error("Iter: 0\n   0: 5\n Task 0 (prio 3) (pid 1):\n",
			 "{\"thread\": {\"0\": {\"prio\": 4, \"min\": 5, \"max\": 5}}}",
			 "priority 4");
	/* Truncated in the middle of an iteration line. */
	_cleanup_free_ char *out = golden("rtmigrate-p60-l20-t3.stdout");
	char *cut = strstr(out, "   7:");
	assert_non_null(cut);
	cut[12] = '\0';
	expect_rtm_error(out, NULL, "iteration 7");
	/* A line far longer than any real one. */
	_cleanup_free_ char *huge = malloc(10000);
	memset(huge, '1', 9999);
	huge[9999] = '\0';
	expect_rtm_error(huge, NULL, "longer than");
}

static void test_rtm_truncated_json_tolerated(void **state)
{
	(void)state;
	_cleanup_free_ char *out = golden("rtmigrate-p60-l5-t3.stdout");
	_cleanup_free_ char *js = golden("rtmigrate-p60-l5-t3.json");
	js[strlen(js) / 2] = '\0';
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	assert_int_equal(metrics_rtmigrate(out, strlen(out), js, 1000, &m, &d, &err), 0);
	json_object *why = NULL;
	assert_true(json_object_object_get_ex(d, "json_ignored", &why));
	assert_non_null(strstr(json_object_get_string(why), "cut off"));
}

/* ---- cyclictest ---- */

static void test_cyclictest_golden_t1(void **state)
{
	(void)state;
	_cleanup_free_ char *js = golden("cyclictest-t1-h2000.json");
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_cyclictest("", 0, js, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	/* From the golden stdout: Min 9, Avg 54 (JSON 54.x), Max 5733,
	 * 5 overflows beyond 2000 us out of 2000 cycles. */
	assert_true(num(m, "latency_us.min") == 9);
	assert_true(num(m, "latency_us.max") == 5733);
	assert_true(fabs(num(m, "latency_us.avg") - 54) < 1);
	assert_true(num(m, "latency_us.t0.max") == 5733);
	/* p99.9 = rank 1998 of 2000: among the 5 overflows, so the max. */
	assert_true(num(m, "latency_us.p99.9") == 5733);
	double p50 = num(m, "latency_us.p50"), p99 = num(m, "latency_us.p99");
	assert_true(p50 >= 9 && p50 <= p99 && p99 < 2000);
	json_object *ov = NULL;
	assert_true(json_object_object_get_ex(d, "overflows", &ov));
	assert_int_equal(json_object_get_int(json_object_array_get_idx(ov, 0)), 5);
}

static void test_cyclictest_golden_t2(void **state)
{
	(void)state;
	_cleanup_free_ char *js = golden("cyclictest-t2-h2000.json");
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_cyclictest("", 0, js, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	/* Threads: min 14 / 13, max 7063 / 962, avg 52.61 / 41.62, 2000 cycles each. */
	assert_true(num(m, "latency_us.min") == 13);
	assert_true(num(m, "latency_us.max") == 7063);
	assert_true(fabs(num(m, "latency_us.avg") - (52.61 + 41.62) / 2) < 1e-9);
	assert_true(num(m, "latency_us.t1.max") == 962);
	assert_true(has(m, "latency_us.t1.p99.9"));
	assert_true(num(m, "latency_us.t1.p99.9") <= 962);
	assert_false(has(m, "latency_us.t2.max"));
}

static void test_cyclictest_quantiles_exact(void **state)
{
	(void)state;
	/* 10 cycles: 1x0us, 4x1us, 4x2us, and 1 overflow (max 50). Nearest rank:
	 * p50 = rank 5 -> 1 us; p99 = rank 10 -> overflow -> max 50. */
	const char *js = "{\"cmdline:\": \"cyclictest\", \"thread\": {\"0\": {\"histogram\": "
			 "{\"0\": 1, \"1\": 4, \"2\": 4}, \"cycles\": 10, \"min\": 0, "
			 "\"max\": 50, \"avg\": 6.1}}}";
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_cyclictest("", 0, js, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "latency_us.p50") == 1);
	assert_true(num(m, "latency_us.p99") == 50);
	/* Without histograms: no percentiles, but min/avg/max. */
	_cleanup_json_ json_object *m2 = NULL, *d2 = NULL;
	assert_int_equal(metrics_cyclictest("", 0,
					    "{\"thread\": {\"0\": {\"cycles\": 3, \"min\": 1, "
					    "\"max\": 9, \"avg\": 4}}}",
					    &m2, &d2, &err),
			 0);
	assert_false(has(m2, "latency_us.p50"));
	assert_true(num(m2, "latency_us.avg") == 4);
}

static void expect_ct_error(const char *js, const char *needle)
{
	json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_cyclictest("", 0, js, &m, &d, &err) == 0)
		fail_msg("expected an error containing '%s' for %s", needle, js ? js : "NULL");
	assert_null(m);
	if (!strstr(err.message, needle))
		fail_msg("message '%s' lacks '%s'", err.message, needle);
}

static void test_cyclictest_garbage(void **state)
{
	(void)state;
	expect_ct_error(NULL, "no JSON file");
	expect_ct_error("", "cut off");
	expect_ct_error("{\"thread\": {\"0\": {", "cut off");
	expect_ct_error("not json", "not valid JSON");
	expect_ct_error("[1,2]", "not a JSON object");
	expect_ct_error("{\"thread\": {}}", "0 threads");
	expect_ct_error("{\"thread\": {\"1\": {}}}", "no thread \"0\"");
	expect_ct_error("{\"thread\": {\"0\": {\"cycles\": 3, \"min\": 1, \"max\": 9}}}",
			"lacks cycles");
	expect_ct_error("{\"thread\": {\"0\": {\"cycles\": 3, \"min\": 10, \"max\": 9, "
			"\"avg\": 9}}}",
			"out of range");
	expect_ct_error("{\"thread\": {\"0\": {\"cycles\": 3, \"min\": 1, \"max\": 1e300, "
			"\"avg\": 9}}}",
			"out of range");
	expect_ct_error("{\"thread\": {\"0\": {\"cycles\": 3, \"min\": 1, \"max\": 9, \"avg\": "
			"2, \"histogram\": {\"-1\": 1}}}}",
			"bucket");
	expect_ct_error("{\"thread\": {\"0\": {\"cycles\": 3, \"min\": 1, \"max\": 9, \"avg\": "
			"2, \"histogram\": {\"99999999\": 1}}}}",
			"bucket");
	expect_ct_error("{\"thread\": {\"0\": {\"cycles\": 3, \"min\": 1, \"max\": 9, \"avg\": "
			"2, \"histogram\": {\"1\": 5}}}}",
			"more than its 3 cycles");
	expect_ct_error("{\"thread\": {\"0\": {\"cycles\": 3, \"min\": 1, \"max\": 9, \"avg\": "
			"2, \"histogram\": {\"1\": \"x\"}}}}",
			"bad count");
	expect_ct_error("{\"thread\": {\"0\": {\"cycles\": 3, \"min\": 1, \"max\": 9, \"avg\": "
			"2}}} trailing",
			"after its JSON value");
	/* The golden file cut in half. */
	_cleanup_free_ char *js = golden("cyclictest-t2-h2000.json");
	js[strlen(js) / 2] = '\0';
	expect_ct_error(js, "cut off");
}

/* ---- seeded mutations: any damage gives a result or a clean error ---- */

static uint32_t rng_state = 20261203;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static char *mutate(const char *in)
{
	size_t n = strlen(in);
	char *out = malloc(n * 2 + 64);
	assert_non_null(out);
	memcpy(out, in, n + 1);
	int edits = 1 + (int)(rnd() % 8);
	static const char alphabet[] = "0123456789 :\n{}[]\",.-eE+x\xff\x01";
	for (int e = 0; e < edits && n > 0; e++) {
		size_t at = rnd() % n;
		switch (rnd() % 4) {
		case 0: /* flip to an interesting byte */
			out[at] = alphabet[rnd() % (sizeof(alphabet) - 1)];
			break;
		case 1: /* truncate */
			out[at] = '\0';
			n = at;
			break;
		case 2: /* duplicate a run of digits into a huge number */
			if (n + 40 < n * 2 + 64) {
				memmove(out + at + 30, out + at, n - at + 1);
				memset(out + at, '9', 30);
				n += 30;
			}
			break;
		default: /* delete a byte */
			memmove(out + at, out + at + 1, n - at);
			n--;
			break;
		}
	}
	return out;
}

static void test_mutations_never_crash(void **state)
{
	(void)state;
	static const char *const stdouts[] = {"rtmigrate-p60-l20-t3.stdout",
					      "rtmigrate-p10-l8-t4.stdout"};
	static const char *const jsons[] = {"rtmigrate-p60-l20-t3.json", "cyclictest-t2-h2000.json",
					    "cyclictest-t1-h2000.json"};
	int ok = 0, rejected = 0;
	for (int round = 0; round < 1500; round++) {
		_cleanup_free_ char *so = golden(stdouts[round % 2]);
		_cleanup_free_ char *js = golden(jsons[round % 3]);
		_cleanup_free_ char *mso = mutate(so);
		_cleanup_free_ char *mjs = mutate(js);
		json_object *m = NULL, *d = NULL;
		struct sl_error err = {0};
		int r = round % 2 ? metrics_rtmigrate(mso, strlen(mso), mjs, 1000, &m, &d, &err)
				  : metrics_cyclictest(mso, strlen(mso), mjs, &m, &d, &err);
		if (r == 0) {
			ok++;
			assert_non_null(m);
			json_object_object_foreach(m, name, val)
			{
				assert_true(metrics_name_ok(name));
				assert_true(isfinite(json_object_get_double(val)));
			}
			json_object_put(m);
			json_object_put(d);
		} else {
			rejected++;
			assert_null(m);
			assert_int_equal(err.kind, ERR_INVALID);
			assert_true(strlen(err.message) > 10);
		}
	}
	/* Both outcomes happen, or the mutations are not reaching the parsers. */
	assert_true(ok > 10 && rejected > 10);
}

/* ---- fresh output from the real tools (tests/e2e/06-metrics-live.sh) ---- */

static char *live(const char *dir, const char *name)
{
	_cleanup_free_ char *path = fs_path_join(dir, name);
	char *data = NULL;
	struct sl_error err = {0};
	if (fs_read_file(path, 8 << 20, &data, NULL, &err) < 0)
		fail_msg("%s", err.message);
	return data;
}

/* SCHEDLAB_RT_LIVE_DIR holds rtm.stdout, rtm.json, ct.json and ct.stdout from
 * 'rt-migrate-test -p 60 -l 10 3' and 'cyclictest -t2 ... -h 2000' run just
 * now. The parsers must accept them, and agree with the tools' own summaries. */
static void test_live_output(void **state)
{
	(void)state;
	const char *dir = getenv("SCHEDLAB_RT_LIVE_DIR");
	assert_non_null(dir);
	_cleanup_free_ char *out = live(dir, "rtm.stdout");
	_cleanup_free_ char *js = live(dir, "rtm.json");
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_rtmigrate(out, strlen(out), js, RTMIGRATE_DEFAULT_MAXERR_US, &m, &d, &err) < 0)
		fail_msg("rt-migrate-test: %s", err.message);
	_cleanup_json_ json_object *doc = json_tokener_parse(js);
	assert_non_null(doc);
	json_object *th = NULL;
	assert_true(json_object_object_get_ex(doc, "thread", &th));
	for (int t = 0; t < 3; t++) {
		char k[16], name[64];
		json_object *o, *v;
		snprintf(k, sizeof(k), "%d", t);
		assert_true(json_object_object_get_ex(th, k, &o));
		assert_true(json_object_object_get_ex(o, "max", &v));
		snprintf(name, sizeof(name), "start_delay_us.prio%d.max", 60 + t);
		assert_true(num(m, name) == json_object_get_double(v));
	}
	json_object *it = NULL;
	assert_true(json_object_object_get_ex(d, "iterations", &it));
	assert_int_equal(json_object_array_length(it), 10);
	assert_true(num(m, "inversions") >= 0 && num(m, "inversions") <= 10);

	_cleanup_free_ char *cj = live(dir, "ct.json");
	_cleanup_free_ char *cs = live(dir, "ct.stdout");
	_cleanup_json_ json_object *cm = NULL, *cd = NULL;
	if (metrics_cyclictest(cs, strlen(cs), cj, &cm, &cd, &err) < 0)
		fail_msg("cyclictest: %s", err.message);
	/* "# Max Latencies: 00123 00456" on stdout. */
	const char *ml = strstr(cs, "# Max Latencies:");
	assert_non_null(ml);
	long m0 = 0, m1 = 0;
	assert_int_equal(sscanf(ml, "# Max Latencies: %ld %ld", &m0, &m1), 2);
	assert_true(num(cm, "latency_us.t0.max") == m0);
	assert_true(num(cm, "latency_us.t1.max") == m1);
	assert_true(num(cm, "latency_us.max") == (m0 > m1 ? m0 : m1));
	assert_true(num(cm, "latency_us.p50") <= num(cm, "latency_us.p99"));
	assert_true(num(cm, "latency_us.p99") <= num(cm, "latency_us.p99.9"));
	assert_true(num(cm, "latency_us.p99.9") <= num(cm, "latency_us.max"));
	/* "# Histogram Overflows: 00001 00000" */
	const char *ov = strstr(cs, "# Histogram Overflows:");
	long o0 = 0, o1 = 0;
	assert_non_null(ov);
	assert_int_equal(sscanf(ov, "# Histogram Overflows: %ld %ld", &o0, &o1), 2);
	json_object *jov = NULL;
	assert_true(json_object_object_get_ex(cd, "overflows", &jov));
	assert_int_equal(json_object_get_int(json_object_array_get_idx(jov, 0)), o0);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(jov, 1)), o1);
}

/* ---- schedlab's own workloads and the dispatcher ---- */

static void test_own_tool(void **state)
{
	(void)state;
	const char *out = "share: 2 uids\n{\"metrics\": {\"cpu_fraction.1000\": 0.66, "
			  "\"share_error\": 0.01}, \"details\": {\"uids\": [1000, 1001]}}\n";
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_own_tool(out, strlen(out), &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(num(m, "cpu_fraction.1000") == 0.66);
	assert_true(json_object_object_get_ex(d, "uids", NULL));

	static const struct {
		const char *out, *needle;
	} bad[] = {
	    {"", "no JSON object"},
	    {"{\"x\": 1}", "no \"metrics\""},
	    {"{\"metrics\": {\"Bad-Name\": 1}}", "not of the form"},
	    {"{\"metrics\": {\"a\": \"1\"}}", "not a finite number"},
	    /* json_parse_strict refuses NaN before the plug-in sees it */
	    {"{\"metrics\": {\"a\": NaN}}", "holds the number NaN, which is not finite"},
	    {"{\"metrics\": {\"a\": 1}", "cut off"},
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		json_object *m2 = NULL, *d2 = NULL;
		if (metrics_own_tool(bad[i].out, strlen(bad[i].out), &m2, &d2, &err) == 0)
			fail_msg("accepted %s", bad[i].out);
		if (!strstr(err.message, bad[i].needle))
			fail_msg("'%s' lacks '%s'", err.message, bad[i].needle);
	}
}

static void test_from_workload(void **state)
{
	(void)state;
	_cleanup_free_ char *out = golden("rtmigrate-p60-l5-t3.stdout");
	_cleanup_json_ json_object *payload = json_object_new_object();
	json_object_object_add(payload, "stdout", json_object_new_string(out));
	json_object_object_add(payload, "json_file", NULL);
	json_object_object_add(payload, "exit_code", json_object_new_int(0));
	json_object_object_add(payload, "timed_out", json_object_new_boolean(0));
	_cleanup_json_ json_object *spec =
	    json_tokener_parse("{\"name\": \"r\", \"tool\": \"rt-migrate-test\", "
			       "\"args\": [\"-p\", \"60\", \"--maxerr=250\", \"3\"]}");
	_cleanup_json_ json_object *m = NULL, *d = NULL;
	struct sl_error err = {0};
	if (metrics_from_workload("rt-migrate-test", payload, spec, &m, &d, &err) < 0)
		fail_msg("%s", err.message);
	json_object *mx = NULL;
	assert_true(json_object_object_get_ex(d, "maxerr_us", &mx));
	assert_int_equal(json_object_get_int(mx), 250);
	/* maxerr_us in the spec wins over the args. */
	json_object_object_add(spec, "maxerr_us", json_object_new_int(700));
	_cleanup_json_ json_object *m2 = NULL, *d2 = NULL;
	assert_int_equal(metrics_from_workload("rt-migrate-test", payload, spec, &m2, &d2, &err),
			 0);
	assert_true(json_object_object_get_ex(d2, "maxerr_us", &mx));
	assert_int_equal(json_object_get_int(mx), 700);

	json_object_object_add(payload, "timed_out", json_object_new_boolean(1));
	json_object *m3 = NULL, *d3 = NULL;
	assert_true(metrics_from_workload("rt-migrate-test", payload, spec, &m3, &d3, &err) < 0);
	assert_non_null(strstr(err.message, "timed out"));
	assert_true(metrics_from_workload("nope", payload, spec, &m3, &d3, &err) < 0);
	assert_true(metrics_from_workload("cyclictest", NULL, spec, &m3, &d3, &err) < 0);
}

static void test_better(void **state)
{
	(void)state;
	assert_string_equal(metrics_better("rt-migrate-test", "inversions"), "lower");
	assert_string_equal(metrics_better("cyclictest", "latency_us.p99"), "lower");
	assert_string_equal(metrics_better("share", "cpu_fraction.1000"), "none");
	assert_string_equal(metrics_better("share", "share_error"), "lower");
	assert_string_equal(metrics_better("slice", "segments"), "none");
	assert_string_equal(metrics_better("slice", "slice_us.p99"), "lower");
	assert_string_equal(metrics_better("slice", "wait_us.p99"), "lower");
	/* A name the plug-in does not emit, or a tool without one, has none
	 * (test_metrics_names.c pins every metric emitted). */
	assert_string_equal(metrics_better("slice", "runs"), "none");
	assert_string_equal(metrics_better("share", "runs"), "none");
	assert_string_equal(metrics_better("nope", "runs"), "none");
	assert_string_equal(metrics_better(NULL, "max_delay_us"), "none");
}

/* Each metric's default threshold comes from its tool's plug-in, the
 * values compare/ used before it asked (docs/statistics.md). */
static void expect_threshold(const char *tool, const char *metric, double floor_abs, double rel,
			     bool practical_gate)
{
	struct metric_threshold t;
	metrics_default_threshold(tool, metric, &t);
	if (t.floor_abs != floor_abs || t.rel != rel || t.practical_gate != practical_gate)
		fail_msg("%s %s: floor %g rel %g gate %d, want %g %g %d", tool ? tool : "(null)",
			 metric, t.floor_abs, t.rel, t.practical_gate, floor_abs, rel,
			 practical_gate);
}

static void test_default_threshold(void **state)
{
	(void)state;
	expect_threshold("rt-migrate-test", "inversions", 1, 0, false);
	expect_threshold("rt-migrate-test", "inversion_max_us", 1000, 0.25, false);
	expect_threshold("rt-migrate-test", "start_delay_us.prio2.max", 1000, 0.5, false);
	expect_threshold("rt-migrate-test", "start_delay_us.prio2.avg", 1000, 0.25, false);
	expect_threshold("cyclictest", "latency_us.avg", 0, 0.10, true);
	expect_threshold("cyclictest", "latency_us.p99", 0, 0.15, true);
	expect_threshold("cyclictest", "latency_us.p99.9", 0, 0.5, false);
	expect_threshold("cyclictest", "latency_us.max", 0, 0.5, false);
	expect_threshold("cyclictest", "latency_us.min", 0, 0.25, false);
	expect_threshold("cyclicdeadline", "latency_us.avg", 0, 0.10, true);
	expect_threshold("wakeup", "wakeup_latency_us.p50", 0, 0.10, true);
	expect_threshold("wakeup", "wakeup_latency_us.p99", 0, 0.5, false);
	expect_threshold("slice", "slice_overrun_us.mean", 0, 0.10, true);
	expect_threshold("share", "cpu_fraction.1000", 0.05, 0, false);
	expect_threshold("share", "share_error", 0.05, 0, false);
	expect_threshold("hackbench", "time_s", 0, 0.25, false);
	expect_threshold("nope", "inversions", 0, 0.25, false);
	expect_threshold(NULL, "x.p99", 0, 0.25, false);
}

/* A metric's value in memory is the value the result writes, so a
 * comparison made now equals one re-made from the stored runs. */
static void test_number_kept_as_written(void **state)
{
	(void)state;
	const double vs[] = {21056.466666666667, 1.0 / 3.0, 5575790.917133, 2.0, -0.1, 1e-12};
	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		json_object *o = metrics_number(vs[i]);
		const char *text = json_object_to_json_string(o);
		assert_true(json_object_get_double(o) == strtod(text, NULL));
		json_object_put(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rtm_golden_p60_l20),
	    cmocka_unit_test(test_rtm_golden_variants),
	    cmocka_unit_test(test_rtm_inversions),
	    cmocka_unit_test(test_rtm_garbage),
	    cmocka_unit_test(test_rtm_truncated_json_tolerated),
	    cmocka_unit_test(test_cyclictest_golden_t1),
	    cmocka_unit_test(test_cyclictest_golden_t2),
	    cmocka_unit_test(test_cyclictest_quantiles_exact),
	    cmocka_unit_test(test_cyclictest_garbage),

	    cmocka_unit_test(test_mutations_never_crash),
	    cmocka_unit_test(test_own_tool),
	    cmocka_unit_test(test_from_workload),
	    cmocka_unit_test(test_better),
	    cmocka_unit_test(test_default_threshold),
	    cmocka_unit_test(test_number_kept_as_written),
	};
	/* Only tests/e2e/06-metrics-live.sh sets this: it runs the real tools first. */
	if (getenv("SCHEDLAB_RT_LIVE_DIR")) {
		const struct CMUnitTest live_tests[] = {cmocka_unit_test(test_live_output)};
		return cmocka_run_group_tests(live_tests, NULL, NULL);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
