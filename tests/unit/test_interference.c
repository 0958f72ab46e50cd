/* Host interference: the /proc parsers and the arithmetic of the per-run
 * figures on hand-made samples (the libvirt side runs in the guest e2e tests). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "compare/noise.h"
#include "guest/interference.h"

static double dget(json_object *o, const char *k)
{
	json_object *v = NULL;
	assert_true(json_object_object_get_ex(o, k, &v));
	return json_object_get_double(v);
}

static void test_parsers(void **state)
{
	(void)state;
	uint64_t steal, total;
	assert_int_equal(
	    interference_parse_proc_stat("cpu  100 0 50 800 10 0 5 35 0 0\n", &steal, &total), 0);
	assert_int_equal(steal, 35);
	assert_int_equal(total, 1000);
	assert_int_equal(interference_parse_proc_stat("cpu0 1 2 3 4\n", &steal, &total), -EINVAL);
	assert_int_equal(interference_parse_proc_stat("cpu  1 2\n", &steal, &total), -EINVAL);
	double l;
	assert_int_equal(interference_parse_loadavg("2.47 1.90 1.20 3/612 4242\n", &l), 0);
	assert_true(fabs(l - 2.47) < 1e-9);
	assert_int_equal(interference_parse_loadavg("nan", &l), -EINVAL);
	assert_int_equal(interference_parse_loadavg("", &l), -EINVAL);
}

/* Two vCPUs over 10 s: vCPU 0 waited 2 s, vCPU 1 0.5 s: 12.5 % of 20 vCPU-seconds. */
static void test_figures(void **state)
{
	(void)state;
	struct interference t = {
	    .started = true, .have_last = true, .local = true, .load_max = 3.5};
	t.first = (struct interference_sample){.mono_s = 100,
					       .nvcpus = 2,
					       .have_delay = true,
					       .have_node = true,
					       .node_busy_ns = 0,
					       .node_total_ns = 1000,
					       .have_stat = true,
					       .steal_ticks = 10,
					       .total_ticks = 1000};
	t.last = t.first;
	t.last.mono_s = 110;
	t.last.vcpu_time_ns[0] = 7000000000ULL;
	t.last.vcpu_delay_ns[0] = 2000000000ULL;
	t.last.vcpu_time_ns[1] = 9000000000ULL;
	t.last.vcpu_delay_ns[1] = 500000000ULL;
	t.last.node_busy_ns = 750;
	t.last.node_total_ns = 2000;
	t.last.steal_ticks = 60;
	t.last.total_ticks = 2000;
	_cleanup_json_ json_object *o = interference_to_json(&t);
	assert_non_null(o);
	assert_true(fabs(dget(o, "vcpu_wait_ms") - 2500) < 1e-6);
	assert_true(fabs(dget(o, "vcpu_wait_pct") - 12.5) < 1e-6);
	assert_true(fabs(dget(o, "host_busy_pct") - 75) < 1e-6);
	assert_true(fabs(dget(o, "steal_pct") - 5) < 1e-6);
	assert_true(fabs(dget(o, "load_avg") - 3.5) < 1e-6);
	json_object *v = NULL;
	assert_true(json_object_object_get_ex(o, "vcpus", &v));
	assert_int_equal(json_object_array_length(v), 2);
	assert_true(fabs(dget(json_object_array_get_idx(v, 0), "wait_pct") - 20) < 1e-6);

	/* No delay figures (an older libvirt): the wait is null, not 0. */
	t.first.have_delay = t.last.have_delay = false;
	_cleanup_json_ json_object *o2 = interference_to_json(&t);
	json_object *w = NULL;
	assert_true(json_object_object_get_ex(o2, "vcpu_wait_pct", &w));
	assert_null(w);
	struct interference none = {0};
	assert_null(interference_to_json(&none));
}

/* A domain in teardown can answer the last poll with its exited vCPU
 * threads' counters: zeros. Seen under a host hog on 2026-12-06: a run whose
 * vCPUs waited 12-16 % like its neighbours' came out 0.0 %, with vCPU 0's
 * run time an unsigned wrap. Such a sample must not become the last one. */
static void test_teardown_sample_ignored(void **state)
{
	(void)state;
	struct interference t = {.started = true, .local = true, .load_max = 5};
	t.first = (struct interference_sample){.mono_s = 100, .nvcpus = 2, .have_delay = true};
	t.first.vcpu_time_ns[0] = 1000000000ULL;
	t.first.vcpu_delay_ns[0] = 100000000ULL;
	t.first.vcpu_time_ns[1] = 900000000ULL;
	t.first.vcpu_delay_ns[1] = 90000000ULL;
	struct interference_sample good = t.first;
	good.mono_s = 110;
	good.vcpu_time_ns[0] = 4000000000ULL;
	good.vcpu_delay_ns[0] = 1400000000ULL; /* 1.3 s more */
	good.vcpu_time_ns[1] = 4200000000ULL;
	good.vcpu_delay_ns[1] = 1290000000ULL; /* 1.2 s more */
	assert_true(interference_add_sample(&t, &good));
	struct interference_sample torn = good;
	torn.mono_s = 111;
	torn.vcpu_time_ns[0] = 0;
	torn.vcpu_delay_ns[0] = 0;
	torn.vcpu_time_ns[1] = 0;
	torn.vcpu_delay_ns[1] = 0;
	assert_false(interference_add_sample(&t, &torn));
	struct interference_sample fewer = good; /* one vCPU missing */
	fewer.mono_s = 111;
	fewer.nvcpus = 1;
	assert_false(interference_add_sample(&t, &fewer));
	struct interference_sample none = {.mono_s = 111}; /* gone: nothing */
	assert_false(interference_add_sample(&t, &none));
	_cleanup_json_ json_object *o = interference_to_json(&t);
	/* 2.5 s of wait over 2 x 10 s: the good sample's figures. */
	assert_true(fabs(dget(o, "vcpu_wait_pct") - 12.5) < 1e-6);
	assert_true(fabs(dget(o, "interval_s") - 10) < 1e-6);
}

/* Over 10 s on a 2-CPU host (20 CPU-seconds): the host was 95 % busy and the
 * guest's QEMU took 18 of those 19 s, so other processes took 1 s: 5 %. Its
 * vCPUs waited 40 %, for each other and QEMU's own threads: not noise at a
 * 25 % limit. The same wait while others took 6 s (30 %) is. Without the
 * guest's CPU time (a remote or older libvirt) the wait alone decides. */
static void test_others_busy(void **state)
{
	(void)state;
	struct interference t = {.started = true, .have_last = true, .local = true, .load_max = 2};
	t.first = (struct interference_sample){.mono_s = 100,
					       .nvcpus = 2,
					       .have_delay = true,
					       .have_node = true,
					       .node_busy_ns = 5000000000ULL,
					       .node_total_ns = 50000000000ULL,
					       .have_guest_cpu = true,
					       .guest_cpu_ns = 3000000000ULL};
	t.last = t.first;
	t.last.mono_s = 110;
	t.last.vcpu_time_ns[0] = t.last.vcpu_time_ns[1] = 6000000000ULL;
	t.last.vcpu_delay_ns[0] = t.last.vcpu_delay_ns[1] = 4000000000ULL;
	t.last.node_busy_ns = t.first.node_busy_ns + 19000000000ULL;
	t.last.node_total_ns = t.first.node_total_ns + 20000000000ULL;
	t.last.guest_cpu_ns = t.first.guest_cpu_ns + 18000000000ULL;
	_cleanup_json_ json_object *run = json_object_new_object();
	json_object *hi = interference_to_json(&t);
	json_object_object_add(run, "host_interference", hi);
	assert_true(fabs(dget(hi, "vcpu_wait_pct") - 40) < 1e-6);
	assert_true(fabs(dget(hi, "others_busy_pct") - 5) < 1e-6);
	assert_false(noise_mark_run(run, 25));

	t.last.guest_cpu_ns = t.first.guest_cpu_ns + 13000000000ULL;
	json_object_object_add(run, "host_interference", interference_to_json(&t));
	assert_true(fabs(noise_run_others_pct(run) - 30) < 1e-6);
	assert_true(noise_mark_run(run, 25));
	assert_false(noise_mark_run(run, 45)); /* under the wait limit, others at 30 % */

	/* Others took 11 of the 20 CPU-seconds (55 %): noisy even under the
	 * wait limit, as idle vCPUs and QEMU's timers wait uncounted. */
	t.last.node_busy_ns = t.first.node_busy_ns + 20000000000ULL;
	t.last.guest_cpu_ns = t.first.guest_cpu_ns + 9000000000ULL;
	json_object_object_add(run, "host_interference", interference_to_json(&t));
	assert_true(fabs(noise_run_others_pct(run) - 55) < 1e-6);
	assert_true(noise_mark_run(run, 45));
	assert_true(json_object_get_boolean(json_object_object_get(run, "noisy")));
	t.last.node_busy_ns = t.first.node_busy_ns + 19000000000ULL;

	/* the counters read a moment apart: QEMU's time above the host's busy
	 * time is 0 %, not negative */
	t.last.guest_cpu_ns = t.first.guest_cpu_ns + 19500000000ULL;
	json_object_object_add(run, "host_interference", interference_to_json(&t));
	assert_true(noise_run_others_pct(run) == 0);

	t.first.have_guest_cpu = t.last.have_guest_cpu = false;
	json_object_object_add(run, "host_interference", interference_to_json(&t));
	assert_true(isnan(noise_run_others_pct(run)));
	assert_true(noise_mark_run(run, 25));

	/* a guest CPU time that went backwards is a domain in teardown */
	t.first.have_guest_cpu = t.last.have_guest_cpu = true;
	struct interference_sample torn = t.last;
	torn.mono_s = 111;
	torn.guest_cpu_ns = 0;
	assert_false(interference_add_sample(&t, &torn));
}

/* The busy rule on its own, and the hang exception that reads the baseline:
 * a hang is the kernel's only when the baseline ran on a quiet host by both
 * measures. */
static void test_noise_rule(void **state)
{
	(void)state;
	assert_false(noise_is_noisy(2, 0, 25));
	assert_false(noise_is_noisy(30, 5, 25)); /* the guest's own wait */
	assert_true(noise_is_noisy(30, 20, 25));
	assert_true(noise_is_noisy(30, NAN, 25)); /* others not measured: the wait decides */
	assert_false(noise_is_noisy(5, NAN, 25));
	assert_false(noise_is_noisy(5, 40, 25)); /* at the busy limit, not over it */
	assert_true(noise_is_noisy(5, 40.1, 25));
	assert_true(noise_is_noisy(NAN, 80, 25)); /* no wait measured, others busy */
	assert_true(noise_hang_is_kernels(10, 20, 25));
	assert_true(noise_hang_is_kernels(10, NAN, 25));
	assert_false(noise_hang_is_kernels(10, 70, 25));
	assert_false(noise_hang_is_kernels(30, 0, 25));
	assert_false(noise_hang_is_kernels(NAN, 0, 25));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parsers),
	    cmocka_unit_test(test_figures),
	    cmocka_unit_test(test_teardown_sample_ignored),
	    cmocka_unit_test(test_others_busy),
	    cmocka_unit_test(test_noise_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
