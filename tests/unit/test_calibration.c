/* The A/A calibration store (compare/calibration.h): the spread, the key,
 * building a calibration from runs, save/load/check, lookup by host, kernel
 * and workload, and the thresholds compare_result_calibrated() derives. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compare/calibration.h"
#include "compare/compare.h"
#include "helpers/job_fixture.h"
#include "util/fs.h"
#include "util/json.h"

#define KKEY  "1111111111111111111111111111111111111111111111111111111111111111"
#define KKEY2 "2222222222222222222222222222222222222222222222222222222222222222"

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

static struct job *job_args(const char *loops)
{
	char buf[1024];
	snprintf(
	    buf, sizeof(buf),
	    "{\"name\": \"t\", \"baseline\": \"baseline\", \"kernels\": " JOB_FIXTURE_KERNELS
	    ", \"variants\": {\"baseline\": {\"kernel\": \"k\"}, \"patched\": {\"kernel\": "
	    "\"k\"}}, \"workloads\": [{\"name\": \"rtm\", \"tool\": \"rt-migrate-test\", "
	    "\"args\": [\"-l\", \"%s\", \"3\"], \"timeout_s\": 10}], \"gates\": [{\"workload\": "
	    "\"rtm\", \"metric\": \"inversions\"}]}",
	    loops);
	struct job *job = job_fixture(buf);
	assert_non_null(job);
	return job;
}

/* An rt-migrate-test run with inversions n, status and noisy mark. */
static json_object *run(const char *status, double inversions, bool noisy)
{
	json_object *r = json_object_new_object();
	/* a vCPU wait that follows the inversions: 2 % + 1 % per inversion */
	json_object *hi = json_object_new_object();
	json_object_object_add(hi, "vcpu_wait_pct", json_object_new_double(2 + inversions));
	json_object_object_add(r, "host_interference", hi);
	json_object_object_add(r, "key", json_object_new_string("baseline#0"));
	json_object_object_add(r, "status", json_object_new_string(status));
	json_object_object_add(r, "noisy", json_object_new_boolean(noisy));
	json_object *w = json_object_new_object(), *m = json_object_new_object();
	json_object_object_add(w, "name", json_object_new_string("rtm"));
	json_object_object_add(w, "tool", json_object_new_string("rt-migrate-test"));
	json_object_object_add(w, "status", json_object_new_string("ok"));
	json_object_object_add(m, "inversions", json_object_new_double(inversions));
	json_object_object_add(m, "inversion_max_us", json_object_new_double(20000 + inversions));
	json_object_object_add(w, "metrics", m);
	json_object *wls = json_object_new_array();
	json_object_array_add(wls, w);
	json_object_object_add(r, "workloads", wls);
	return r;
}

static struct calibration_host host(void)
{
	struct calibration_host h;
	memset(&h, 0, sizeof(h));
	snprintf(h.hostname, sizeof(h.hostname), "testhost");
	snprintf(h.cpu_model, sizeof(h.cpu_model), "Test CPU @ 1 GHz");
	snprintf(h.accel, sizeof(h.accel), "tcg");
	return h;
}

static char *tmpdir(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : P_tmpdir;
	char tmpl[512];
	snprintf(tmpl, sizeof(tmpl), "%s/schedlab-test-calibration.XXXXXX", base);
	char *d = mkdtemp(tmpl);
	assert_non_null(d);
	return strdup(d);
}

/* The 90th percentile of pairwise |differences|, type 7, worked by hand:
 * {0, 0, 1, 4}: differences 0,1,4,1,4,3 sorted 0,1,1,3,4,4; h = 0.9 x 5 =
 * 4.5 -> 4 + 0.5 x (4 - 4) = 4. {1, 2, 3}: 1,2,1 sorted 1,1,2, h = 1.8 ->
 * 1 + 0.8 x 1 = 1.8. */
static void test_spread(void **state)
{
	(void)state;
	double a[] = {0, 0, 1, 4};
	assert_float_equal(calibration_spread(a, 4), 4.0, 1e-12);
	double b[] = {1, 2, 3};
	assert_float_equal(calibration_spread(b, 3), 1.8, 1e-12);
	double c[] = {5, 5, 5};
	assert_float_equal(calibration_spread(c, 3), 0.0, 1e-12);
	assert_true(isnan(calibration_spread(a, 1)));
}

/* The key changes with the host, the kernel and the workload's args, and
 * not with anything else asked twice. */
static void test_key(void **state)
{
	(void)state;
	_cleanup_job_ struct job *j10 = job_args("10");
	_cleanup_job_ struct job *j20 = job_args("20");
	struct calibration_host h = host(), h2 = host();
	snprintf(h2.accel, sizeof(h2.accel), "kvm");
	char k1[65], k1b[65], k2[65], k3[65], k4[65];
	calibration_key(&h, KKEY, j10, &j10->workloads[0], k1);
	calibration_key(&h, KKEY, j10, &j10->workloads[0], k1b);
	calibration_key(&h, KKEY, j20, &j20->workloads[0], k2);
	calibration_key(&h, KKEY2, j10, &j10->workloads[0], k3);
	calibration_key(&h2, KKEY, j10, &j10->workloads[0], k4);
	assert_string_equal(k1, k1b);
	assert_int_equal(strlen(k1), 64);
	assert_string_not_equal(k1, k2);
	assert_string_not_equal(k1, k3);
	assert_string_not_equal(k1, k4);
}

/* Built from runs: failed and noisy runs are left out; saved, loaded back,
 * found by lookup for the same host/kernel/workload only. */
static void test_from_runs_save_load_lookup(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_args("10");
	struct calibration_host h = host();
	_cleanup_json_ json_object *runs = json_object_new_array();
	json_object_array_add(runs, run("ok", 0, false));
	json_object_array_add(runs, run("ok", 0, false));
	json_object_array_add(runs, run("ok", 1, false));
	json_object_array_add(runs, run("ok", 4, false));
	json_object_array_add(runs, run("ok", 40, true));    /* noisy: out */
	json_object_array_add(runs, run("hung", 50, false)); /* not ok: out */
	_cleanup_json_ json_object *doc = calibration_from_runs(&h, KKEY, job, &job->workloads[0],
								runs, 6, "2026-12-04T19:00:00Z");
	assert_non_null(doc);
	assert_int_equal(json_object_get_int(get(doc, "runs_used")), 4);
	json_object *inv = get(get(doc, "metrics"), "inversions");
	assert_float_equal(json_object_get_double(get(inv, "spread")), 4.0, 1e-12);
	assert_float_equal(json_object_get_double(get(inv, "median")), 0.5, 1e-12);

	assert_false(json_object_get_boolean(get(doc, "noisy_runs_included")));
	/* The vCPU wait of every ok run, noisy or not (2, 2, 3, 6, 42): median
	 * 3; p90 type 7: h = 0.9 x 4 = 3.6 -> 6 + 0.6 x (42 - 6) = 27.6. */
	assert_float_equal(json_object_get_double(get(doc, "vcpu_wait_pct_median")), 3.0, 1e-12);
	assert_float_equal(json_object_get_double(get(doc, "vcpu_wait_pct_p90")), 27.6, 1e-9);

	/* Too few clean runs: every ok run counts, and the file says so. */
	_cleanup_json_ json_object *busy = json_object_new_array();
	json_object_array_add(busy, run("ok", 0, false));
	json_object_array_add(busy, run("ok", 7, true));
	json_object_array_add(busy, run("ok", 1, true));
	_cleanup_json_ json_object *bdoc = calibration_from_runs(&h, KKEY, job, &job->workloads[0],
								 busy, 3, "2026-12-04T19:00:00Z");
	assert_true(json_object_get_boolean(get(bdoc, "noisy_runs_included")));
	assert_int_equal(json_object_get_int(get(bdoc, "runs_used")), 3);

	struct sl_error err = {0};
	_cleanup_free_ char *dir = tmpdir();
	assert_int_equal(calibration_save(dir, doc, &err), 0);
	_cleanup_json_ json_object *back = NULL;
	assert_int_equal(
	    calibration_load(dir, json_object_get_string(get(doc, "key")), &back, &err), 0);
	assert_string_equal(json_object_get_string(get(back, "made_at")), "2026-12-04T19:00:00Z");

	_cleanup_json_ json_object *found = calibration_lookup(dir, &h, KKEY, job);
	assert_int_equal(json_object_array_length(found), 1);
	json_object *e = json_object_array_get_idx(found, 0);
	assert_string_equal(json_object_get_string(get(e, "workload")), "rtm");
	assert_int_equal(json_object_get_int(get(e, "boots")), 6);
	assert_float_equal(json_object_get_double(get(get(e, "spreads"), "inversions")), 4.0,
			   1e-12);
	assert_float_equal(json_object_get_double(get(e, "vcpu_wait_pct_p90")), 27.6, 1e-9);
	/* another kernel, another host, other args: no match */
	_cleanup_json_ json_object *none1 = calibration_lookup(dir, &h, KKEY2, job);
	assert_int_equal(json_object_array_length(none1), 0);
	struct calibration_host h2 = host();
	snprintf(h2.hostname, sizeof(h2.hostname), "otherhost");
	_cleanup_json_ json_object *none2 = calibration_lookup(dir, &h2, KKEY, job);
	assert_int_equal(json_object_array_length(none2), 0);
	_cleanup_job_ struct job *j20 = job_args("20");
	_cleanup_json_ json_object *none3 = calibration_lookup(dir, &h, KKEY, j20);
	assert_int_equal(json_object_array_length(none3), 0);

	_cleanup_json_ json_object *list = calibration_list(dir, 10);
	assert_int_equal(json_object_array_length(list), 1);
	assert_non_null(get(json_object_array_get_idx(list, 0), "age_s"));
	fs_rm_rf(dir, &err);
}

/* A broken or foreign file is refused with the field named, and lookup
 * skips it. */
static void test_check_and_broken_files(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = job_args("10");
	struct calibration_host h = host();
	_cleanup_json_ json_object *runs = json_object_new_array();
	for (int i = 0; i < 3; i++)
		json_object_array_add(runs, run("ok", i, false));
	_cleanup_json_ json_object *doc = calibration_from_runs(&h, KKEY, job, &job->workloads[0],
								runs, 3, "2026-12-04T19:00:00Z");
	struct sl_error err = {0};
	assert_int_equal(calibration_check(doc, &err), 0);

	json_object_object_add(get(get(doc, "metrics"), "inversions"), "spread",
			       json_object_new_double(-1));
	assert_true(calibration_check(doc, &err) < 0);
	assert_string_equal(err.path, "$.metrics");
	json_object_object_add(get(get(doc, "metrics"), "inversions"), "spread",
			       json_object_new_double(1));
	json_object_object_add(doc, "boots", json_object_new_int(1000));
	assert_true(calibration_check(doc, &err) < 0);
	assert_string_equal(err.path, "$.boots");
	json_object_object_add(doc, "boots", json_object_new_int(3));
	json_object_object_add(doc, "vcpu_wait_pct_p90", json_object_new_double(101));
	assert_true(calibration_check(doc, &err) < 0);
	assert_string_equal(err.path, "$.vcpu_wait_pct_p90");
	json_object_object_add(doc, "vcpu_wait_pct_p90", json_object_new_string("5"));
	assert_true(calibration_check(doc, &err) < 0);
	assert_string_equal(err.path, "$.vcpu_wait_pct_p90");
	json_object_object_add(doc, "vcpu_wait_pct_p90", NULL); /* null: not measured */
	assert_int_equal(calibration_check(doc, &err), 0);
	json_object_object_add(doc, "key", json_object_new_string("../../etc/passwd"));
	assert_true(calibration_check(doc, &err) < 0);
	assert_string_equal(err.path, "$.key");

	/* a file whose content is not JSON, under the right name */
	_cleanup_free_ char *dir = tmpdir();
	char key[65];
	calibration_key(&h, KKEY, job, &job->workloads[0], key);
	_cleanup_free_ char *cdir = fs_path_join(dir, "calibration");
	assert_int_equal(fs_mkdir_p(cdir, &err), 0);
	char name[80];
	snprintf(name, sizeof(name), "%s.json", key);
	_cleanup_free_ char *path = fs_path_join(cdir, name);
	assert_int_equal(fs_write_file_atomic(path, "{nope", 5, &err), 0);
	_cleanup_json_ json_object *back = NULL;
	assert_true(calibration_load(dir, key, &back, &err) < 0);
	_cleanup_json_ json_object *found = calibration_lookup(dir, &h, KKEY, job);
	assert_int_equal(json_object_array_length(found), 0);
	assert_true(calibration_load(dir, "zz", &back, &err) < 0);
	fs_rm_rf(dir, &err);
}

/* The noise limit of a job that names none: twice the largest p90 vCPU
 * wait of its calibration entries, within [floor, default]; the default
 * when no entry measured one. */
static json_object *cal_entry(const char *workload, double p90)
{
	json_object *e = json_object_new_object();
	json_object_object_add(e, "workload", json_object_new_string(workload));
	if (!isnan(p90))
		json_object_object_add(e, "vcpu_wait_pct_p90", json_object_new_double(p90));
	return e;
}

static void test_noise_limit(void **state)
{
	(void)state;
	double w;
	assert_float_equal(calibration_noise_limit(NULL, 25, &w), 25, 0);
	assert_true(isnan(w));
	_cleanup_json_ json_object *cal = json_object_new_array();
	json_object_array_add(cal, cal_entry("rtm", NAN)); /* an old file: no wait */
	assert_float_equal(calibration_noise_limit(cal, 25, &w), 25, 0);
	assert_true(isnan(w));
	/* a quiet host: 2 x 3 = 6 is below the floor */
	json_object_array_add(cal, cal_entry("rtm", 3));
	assert_float_equal(calibration_noise_limit(cal, 25, &w), CALIBRATION_NOISE_FLOOR_PCT,
			   1e-12);
	assert_float_equal(w, 3, 0);
	/* the largest entry counts: 2 x 7.5 = 15 */
	json_object_array_add(cal, cal_entry("ct", 7.5));
	assert_float_equal(calibration_noise_limit(cal, 25, &w), 15, 1e-12);
	assert_float_equal(w, 7.5, 0);
	/* a calibration on a busy host never raises the limit above the default */
	json_object_array_add(cal, cal_entry("share", 40));
	assert_float_equal(calibration_noise_limit(cal, 25, &w), 25, 1e-12);
	assert_float_equal(w, 40, 0);
}

/* Thresholds: max(default, multiple x spread); a gate's own threshold
 * wins; the comparison says where its threshold came from. */
static void test_threshold_derivation(void **state)
{
	(void)state;
	_cleanup_json_ json_object *cal = json_object_new_array();
	json_object *e = json_object_new_object(), *sp = json_object_new_object();
	json_object_object_add(e, "workload", json_object_new_string("rtm"));
	json_object_object_add(e, "multiple", json_object_new_double(1.0));
	json_object_object_add(sp, "inversions", json_object_new_double(3));
	json_object_object_add(sp, "inversion_max_us", json_object_new_double(10));
	json_object_object_add(e, "spreads", sp);
	json_object_array_add(cal, e);
	double s;
	assert_float_equal(calibration_threshold(cal, "rtm", "inversions", 1, &s), 3, 1e-12);
	assert_float_equal(s, 3, 1e-12);
	/* never below the floor */
	assert_float_equal(calibration_threshold(cal, "rtm", "inversion_max_us", 1000, &s), 1000,
			   1e-12);
	assert_float_equal(calibration_threshold(cal, "other", "inversions", 1, &s), 1, 1e-12);
	assert_true(isnan(s));
	assert_float_equal(calibration_threshold(NULL, "rtm", "inversions", 1, &s), 1, 1e-12);

	/* In a comparison: inversions [0,0,0,0,0] against [2,2,2,2,2]: by the
	 * default (1) a regression; with the calibrated 3, inside this host's
	 * A/A noise: the CI [2, 2] lies within 3, so unchanged. */
	_cleanup_job_ struct job *job = job_args("10");
	_cleanup_json_ json_object *variants = json_object_new_object();
	for (int v = 0; v < 2; v++) {
		json_object *var = json_object_new_object(), *runs = json_object_new_array();
		for (int i = 0; i < 5; i++)
			json_object_array_add(runs, run("ok", v ? 2 : 0, false));
		json_object_object_add(var, "runs", runs);
		json_object_object_add(variants, v ? "patched" : "baseline", var);
	}
	json_object *cmps = NULL, *reasons = NULL;
	char verdict[16];
	struct sl_error err = {0};
	assert_int_equal(compare_result(job, variants, &cmps, verdict, &reasons, &err), 0);
	assert_string_equal(verdict, "fail");
	json_object *c0 = json_object_array_get_idx(cmps, 0);
	assert_string_equal(json_object_get_string(get(c0, "threshold_source")), "default");
	json_object_put(cmps);
	json_object_put(reasons);
	assert_int_equal(
	    compare_result_calibrated(job, variants, cal, &cmps, verdict, &reasons, &err), 0);
	assert_string_equal(verdict, "pass");
	for (size_t i = 0; i < json_object_array_length(cmps); i++) {
		json_object *c = json_object_array_get_idx(cmps, i);
		if (strcmp(json_object_get_string(get(c, "metric")), "inversions") != 0)
			continue;
		assert_string_equal(json_object_get_string(get(c, "threshold_source")),
				    "calibration");
		assert_float_equal(json_object_get_double(get(c, "threshold")), 3, 1e-12);
		assert_float_equal(json_object_get_double(get(c, "aa_spread")), 3, 1e-12);
		assert_string_equal(json_object_get_string(get(c, "verdict")), "unchanged");
	}
	json_object_put(cmps);
	json_object_put(reasons);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spread),
	    cmocka_unit_test(test_key),
	    cmocka_unit_test(test_from_runs_save_load_lookup),
	    cmocka_unit_test(test_check_and_broken_files),
	    cmocka_unit_test(test_threshold_derivation),
	    cmocka_unit_test(test_noise_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
