/* The host pool: parsing and validation of "hypervisors", placement (a job
 * on the host with the most free slots, spread jobs round-robin by round),
 * constraints (kvm, labels), slots that block and fail when the host goes
 * down, the reconnect backoff, Prometheus lines, and connecting through
 * libvirt's in-process test driver (test:///default; a missing test file
 * for a connect that fails). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "guest/hostpool.h"
#include "server/config.h"

static struct hostpool *pool_from(const char *text)
{
	json_object *j = json_tokener_parse(text);
	assert_non_null(j);
	struct hostpool *p = NULL;
	struct sl_error err = {0};
	int r = hostpool_from_json(j, "$.hypervisors", &p, &err);
	json_object_put(j);
	if (r < 0)
		fail_msg("parse failed: %s", err.message);
	return p;
}

static void expect_invalid(const char *text, const char *path, const char *needle)
{
	json_object *j = json_tokener_parse(text);
	struct hostpool *p = NULL;
	struct sl_error err = {0};
	assert_int_equal(hostpool_from_json(j, "$.hypervisors", &p, &err), -EINVAL);
	assert_null(p);
	assert_int_equal(err.kind, ERR_INVALID);
	assert_string_equal(err.path, path);
	if (!strstr(err.message, needle))
		fail_msg("'%s' not in '%s'", needle, err.message);
	json_object_put(j);
}

static void test_default(void **state)
{
	(void)state;
	struct hostpool *p = NULL;
	assert_int_equal(hostpool_from_json(NULL, NULL, &p, NULL), 0);
	assert_int_equal(hostpool_size(p), 1);
	assert_string_equal(hostpool_uri(p, 0), "qemu:///system");
	assert_true(hostpool_slots(p, 0) >= 1);
	assert_true(hostpool_is_local(p, 0));
	hostpool_free(p);
	hostpool_free(NULL);
}

static void test_parse(void **state)
{
	(void)state;
	struct hostpool *p = pool_from("[{\"uri\":\"qemu:///system\",\"slots\":3},"
				       "{\"uri\":\"qemu+ssh://lab@h2/system\",\"labels\":[\"kvm\","
				       "\"cpu=epyc\"]}]");
	assert_int_equal(hostpool_size(p), 2);
	assert_int_equal(hostpool_slots(p, 0), 3);
	assert_int_equal(hostpool_slots(p, 1), 1); /* a remote host defaults to 1 */
	assert_false(hostpool_is_local(p, 1));
	json_object *j = hostpool_to_json(p);
	assert_string_equal(
	    json_object_to_json_string_ext(json_object_array_get_idx(j, 1), JSON_C_TO_STRING_PLAIN),
	    "{\"uri\":\"qemu+ssh:\\/\\/lab@h2\\/system\",\"slots\":1,\"busy\":0,"
	    "\"up\":true,\"down_count\":0,\"labels\":[\"kvm\",\"cpu=epyc\"]}");
	json_object_put(j);
	hostpool_free(p);
}

static void test_invalid(void **state)
{
	(void)state;
	expect_invalid("{}", "$.hypervisors", "must be an array");
	expect_invalid("[]", "$.hypervisors", "it must list 1 to 64");
	expect_invalid("[1]", "$.hypervisors[0]", "must be an object");
	expect_invalid("[{\"slots\":1}]", "$.hypervisors[0].uri", "needs a 'uri'");
	expect_invalid("[{\"uri\":\"no-scheme\"}]", "$.hypervisors[0].uri", "needs a 'uri'");
	expect_invalid("[{\"uri\":\"qemu+tcp://a\\\"b/system\"}]", "$.hypervisors[0].uri",
		       "printable");
	expect_invalid("[{\"uri\":\"qemu:///system\"},{\"uri\":\"qemu:///system\"}]",
		       "$.hypervisors[1].uri", "'qemu:///system' is listed twice");
	expect_invalid("[{\"uri\":\"qemu:///system\",\"slots\":0}]", "$.hypervisors[0].slots",
		       "1 to 256");
	expect_invalid("[{\"uri\":\"qemu:///system\",\"slots\":\"2\"}]", "$.hypervisors[0].slots",
		       "integer");
	expect_invalid("[{\"uri\":\"qemu:///system\",\"slot\":2}]", "$.hypervisors[0].slot",
		       "'slot' is unknown");
	expect_invalid("[{\"uri\":\"qemu:///system\",\"labels\":[\"a b\"]}]",
		       "$.hypervisors[0].labels[0]", "Label 0");
	expect_invalid("[{\"uri\":\"qemu:///system\",\"labels\":\"kvm\"}]",
		       "$.hypervisors[0].labels", "array");
}

static void test_choose(void **state)
{
	(void)state;
	struct hostpool *p = pool_from("[{\"uri\":\"test:///a\",\"slots\":1},"
				       "{\"uri\":\"test:///b\",\"slots\":2,\"labels\":[\"kvm\"]}]");
	struct sl_error err = {0};
	/* b has more free slots. */
	assert_int_equal(hostpool_choose(p, NULL, NULL, &err), 1);
	assert_int_equal(hostpool_acquire(p, 1, NULL, NULL), 0);
	/* 1 free each: the tie goes to the host with fewer jobs. */
	hostpool_job_placed(p, 0, 1);
	assert_int_equal(hostpool_choose(p, NULL, NULL, &err), 1);
	hostpool_job_placed(p, 0, -1);
	hostpool_job_placed(p, 1, 1);
	assert_int_equal(hostpool_choose(p, NULL, NULL, &err), 0);
	hostpool_release(p, 1);
	/* kvm runs only where labelled. */
	struct hostpool_constraints kvm = {.accel = "kvm"};
	assert_false(hostpool_eligible(p, 0, &kvm));
	assert_int_equal(hostpool_choose(p, &kvm, NULL, &err), 1);
	bool excl[2] = {false, true};
	assert_int_equal(hostpool_choose(p, &kvm, excl, &err), -EHOSTUNREACH);
	assert_int_equal(err.kind, ERR_INFRA);
	assert_non_null(strstr(err.message, "'test:///a' (does not meet the job's needs)"));
	assert_non_null(strstr(err.message, "'test:///b' (excluded)"));
	const char *const labels[] = {"kvm", "cpu=epyc", NULL};
	struct hostpool_constraints lab = {.labels = labels};
	assert_int_equal(hostpool_choose(p, &lab, NULL, &err), -EHOSTUNREACH);
	hostpool_free(p);
}

static void test_spread(void **state)
{
	(void)state;
	struct hostpool *p =
	    pool_from("[{\"uri\":\"test:///a\"},{\"uri\":\"test:///b\"},{\"uri\":\"test:///c\"}]");
	struct sl_error err = {0};
	int count[3] = {0};
	for (int round = 0; round < 6; round++) {
		int h = hostpool_choose_spread(p, NULL, round, NULL, &err);
		assert_true(h >= 0 && h < 3);
		count[h]++;
	}
	assert_int_equal(count[0], 2);
	assert_int_equal(count[1], 2);
	assert_int_equal(count[2], 2);
	/* A down host is skipped until its backoff passes. */
	hostpool_mark_down(p, 1, "test");
	for (int round = 0; round < 4; round++)
		assert_int_not_equal(hostpool_choose_spread(p, NULL, round, NULL, &err), 1);
	assert_int_equal(hostpool_down_count(p, 1), 1);
	hostpool_free(p);
}

static void *release_later(void *arg)
{
	struct timespec ts = {0, 300 * 1000000L};
	nanosleep(&ts, NULL);
	hostpool_release(arg, 0);
	return NULL;
}

static void *down_later(void *arg)
{
	struct timespec ts = {0, 300 * 1000000L};
	nanosleep(&ts, NULL);
	hostpool_mark_down(arg, 0, "test");
	return NULL;
}

static int cancel_now(void *u)
{
	(void)u;
	return 1;
}

static void test_slots(void **state)
{
	(void)state;
	struct hostpool *p = pool_from("[{\"uri\":\"test:///a\",\"slots\":1}]");
	pthread_t t;
	assert_int_equal(hostpool_acquire(p, 0, NULL, NULL), 0);
	assert_int_equal(hostpool_acquire(p, 0, cancel_now, NULL), -ECANCELED);
	/* A full host blocks until a slot is released... */
	pthread_create(&t, NULL, release_later, p);
	assert_int_equal(hostpool_acquire(p, 0, NULL, NULL), 0);
	pthread_join(t, NULL);
	/* ...or fails when the host goes down meanwhile. */
	pthread_create(&t, NULL, down_later, p);
	assert_int_equal(hostpool_acquire(p, 0, NULL, NULL), -EHOSTDOWN);
	pthread_join(t, NULL);
	assert_false(hostpool_is_up(p, 0));
	hostpool_release(p, 0);
	hostpool_release(p, 0); /* one too many: stays at 0 busy */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(hostpool_write_metrics(p, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "schedlab_host_up{uri=\"test:///a\"} 0\n"));
	assert_non_null(strstr(buf, "schedlab_host_slots{uri=\"test:///a\",state=\"busy\"} 0\n"));
	assert_non_null(strstr(buf, "schedlab_host_slots{uri=\"test:///a\",state=\"free\"} 1\n"));
	assert_non_null(strstr(buf, "# TYPE schedlab_host_up gauge\n"));
	free(buf);
	hostpool_free(p);
}

static void test_connect(void **state)
{
	(void)state;
	struct hostpool *p = pool_from("[{\"uri\":\"test:///default\"},"
				       "{\"uri\":\"test:///nonexistent/schedlab-no-such.xml\"}]");
	struct sl_error err = {0};
	struct guest_host *g = NULL, *g2 = NULL;
	virConnectPtr c = NULL;
	assert_int_equal(hostpool_connect(p, 0, &g, &c, &err), 0);
	assert_non_null(g);
	assert_non_null(c);
	assert_int_equal(hostpool_connect(p, 0, &g2, NULL, &err), 0);
	assert_ptr_equal(g, g2); /* kept open */
	assert_true(hostpool_is_up(p, 0));
	/* The test driver's node has 16 CPUs: a job wanting 64 cannot go there. */
	struct hostpool_constraints big = {.min_cores = 64};
	assert_false(hostpool_eligible(p, 0, &big));
	assert_int_equal(hostpool_connect(p, 1, &g, &c, &err), -EHOSTDOWN);
	assert_false(hostpool_is_up(p, 1));
	/* In backoff: fails at once, saying when it retries. */
	assert_int_equal(hostpool_connect(p, 1, &g, &c, &err), -EHOSTDOWN);
	assert_non_null(strstr(err.message, "is down; the next reconnect is in"));
	assert_int_equal(hostpool_choose(p, NULL, NULL, &err), 0);
	/* Down and reconnected: the old connection stays valid (buried). */
	hostpool_mark_down(p, 0, "test");
	struct timespec ts = {1, 100 * 1000000L};
	nanosleep(&ts, NULL);
	assert_int_equal(hostpool_connect(p, 0, &g2, NULL, &err), 0);
	assert_ptr_not_equal(g, g2);
	assert_true(hostpool_is_up(p, 0));
	hostpool_free(p);
}

static void test_uri_is_local(void **state)
{
	(void)state;
	assert_true(hostpool_uri_is_local("qemu:///system"));
	assert_true(hostpool_uri_is_local("qemu:///session"));
	assert_false(hostpool_uri_is_local("qemu+tcp://10.0.0.2/system"));
	assert_false(hostpool_uri_is_local("qemu+ssh://u@h/system"));
	assert_false(hostpool_uri_is_local(NULL));
}

/* The service config carries the same list under "hypervisors". */
static void test_service_config(void **state)
{
	(void)state;
	struct service_config *c = NULL;
	struct sl_error err = {0};
	assert_int_equal(service_config_new(&c, &err), 0);
	assert_null(c->hostpool);
	json_object *o =
	    json_tokener_parse("{\"hypervisors\":[{\"uri\":\"qemu:///system\",\"slots\":2},"
			       "{\"uri\":\"qemu+tls://hv2/system\",\"labels\":[\"kvm\"]}]}");
	assert_int_equal(service_config_apply(c, o, &err), 0);
	json_object_put(o);
	assert_non_null(c->hostpool);
	assert_int_equal(hostpool_size(c->hostpool), 2);
	assert_int_equal(hostpool_slots(c->hostpool, 0), 2);
	o = json_tokener_parse("{\"hypervisors\":[{\"uri\":\"x\"}]}");
	assert_true(service_config_apply(c, o, &err) < 0);
	assert_string_equal(err.path, "hypervisors[0].uri");
	json_object_put(o);
	assert_int_equal(hostpool_size(c->hostpool), 2); /* the old list stays */
	service_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default),	   cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_invalid),	   cmocka_unit_test(test_choose),
	    cmocka_unit_test(test_spread),	   cmocka_unit_test(test_slots),
	    cmocka_unit_test(test_connect),	   cmocka_unit_test(test_uri_is_local),
	    cmocka_unit_test(test_service_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
