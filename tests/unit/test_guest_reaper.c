/* The parked console streams (guest_reaper.c) against libvirt's test driver:
 * they end only once libvirt no longer knows the domain, or at the timeout,
 * and freeing the reaper waits for them. And a bounded connect
 * (guest_connect, guest_host_open) against a socket that accepts and never answers, as a hung
 * libvirtd does. The real streams of a remote hypervisor's guests go
 * through the reaper in e2e 90; a local daemon's guests have no streams
 * (guest_ports.c, test_guest_ports). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guest/guest-internal.h"
#include "guest/guest.h"

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

static virDomainPtr test_domain(virConnectPtr c, const char *name)
{
	char xml[256];
	snprintf(xml, sizeof(xml),
		 "<domain type='test'><name>%s</name><memory>1024</memory>"
		 "<os><type>hvm</type></os></domain>",
		 name);
	virDomainPtr d = virDomainCreateXML(c, xml, 0);
	assert_non_null(d);
	return d;
}

/* Parks two unattached streams for dom (ending them fails harmlessly). */
static void park(struct guest_reaper *g, virConnectPtr c, virDomainPtr dom)
{
	virStreamPtr st[GUEST_N_STREAMS];
	bool eof[GUEST_N_STREAMS] = {true, false};
	for (int i = 0; i < GUEST_N_STREAMS; i++)
		assert_non_null(st[i] = virStreamNew(c, VIR_STREAM_NONBLOCK));
	guest_reaper_park(g, dom, st, eof);
	for (int i = 0; i < GUEST_N_STREAMS; i++)
		assert_null(st[i]);
}

/* Seconds until the reaper has ended n runs' streams, or -1 after limit_s. */
static double wait_ended(struct guest_reaper *g, int n, double limit_s)
{
	double t0 = time_monotonic_s();
	while (time_monotonic_s() - t0 < limit_s) {
		if (guest_reaper_stats(g).ended >= n)
			return time_monotonic_s() - t0;
		sleep_s(0.02);
	}
	return -1;
}

static void test_waits_for_the_domain(void **state)
{
	(void)state;
	virConnectPtr c = virConnectOpen("test:///default");
	assert_non_null(c);
	struct guest_reaper *g = guest_reaper_new(0.3, 30);
	assert_non_null(g);
	virDomainPtr d = test_domain(c, "reap-wait");
	park(g, c, d);
	sleep_s(0.6);
	struct guest_reaper_stats s = guest_reaper_stats(g);
	assert_int_equal(s.parked, 1);
	assert_int_equal(s.pending, 1); /* the domain runs: the streams stay */
	assert_int_equal(s.ended, 0);
	assert_int_equal(virDomainDestroy(d), 0); /* transient: libvirt forgets it */
	double t = wait_ended(g, 1, 5);
	assert_true(t >= 0.3); /* not before the grace */
	assert_true(t < 3);
	s = guest_reaper_stats(g);
	assert_int_equal(s.pending, 0);
	assert_int_equal(s.forced, 0);
	assert_int_equal(s.dead, 0);
	virDomainFree(d);
	guest_reaper_free(g);
	virConnectClose(c);
}

static void test_gives_up_at_the_timeout(void **state)
{
	(void)state;
	virConnectPtr c = virConnectOpen("test:///default");
	assert_non_null(c);
	struct guest_reaper *g = guest_reaper_new(0.1, 0.5);
	virDomainPtr d = test_domain(c, "reap-timeout");
	park(g, c, d);
	double t = wait_ended(g, 1, 5);
	assert_true(t >= 0.4);
	assert_int_equal(guest_reaper_stats(g).forced, 1);
	virDomainDestroy(d);
	virDomainFree(d);
	guest_reaper_free(g);
	virConnectClose(c);
}

static void test_free_drains(void **state)
{
	(void)state;
	virConnectPtr c = virConnectOpen("test:///default");
	assert_non_null(c);
	struct guest_reaper *g = guest_reaper_new(0.1, 1.0);
	virDomainPtr gone = test_domain(c, "reap-drain-1");
	virDomainPtr live = test_domain(c, "reap-drain-2");
	park(g, c, gone);
	park(g, c, live);
	virDomainDestroy(gone);
	double t0 = time_monotonic_s();
	guest_reaper_free(g); /* both end first: one gone, one at the timeout */
	double t = time_monotonic_s() - t0;
	assert_true(t >= 0.8 && t < 5);
	virDomainDestroy(live);
	virDomainFree(gone);
	virDomainFree(live);
	virConnectClose(c);
}

/* A listening socket nobody accepts on: the kernel completes the connect,
 * and no answer ever comes, as from a libvirtd whose main loop is stuck. */
static void test_connect_to_a_silent_daemon(void **state)
{
	(void)state;
	char dir[] = "/tmp/schedlab-test-connect-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/libvirt-sock", dir);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	char uri[256];
	snprintf(uri, sizeof(uri), "qemu:///system?socket=%s", a.sun_path);

	struct sl_error err = {0};
	double t0 = time_monotonic_s();
	virConnectPtr conn = guest_connect(uri, 1.0, &err);
	double t = time_monotonic_s() - t0;
	assert_null(conn);
	assert_int_equal(err.kind, ERR_INFRA);
	assert_non_null(strstr(err.message, "did not answer within 1 s"));
	assert_non_null(strstr(err.message, "hung"));
	assert_true(t >= 0.9 && t < 5);

	/* guest_host_open takes its bound from the environment. */
	setenv("SCHEDLAB_LIBVIRT_TIMEOUT_S", "1.5", 1);
	t0 = time_monotonic_s();
	struct guest_host *h = guest_host_open(uri, &err);
	assert_null(h);
	assert_non_null(strstr(err.message, "did not answer within 1.5 s"));
	assert_true(time_monotonic_s() - t0 >= 1.4);
	setenv("SCHEDLAB_LIBVIRT_TIMEOUT_S", "0.1", 1); /* out of range: the default */
	assert_true(guest_connect_timeout_s() == GUEST_CONNECT_TIMEOUT_S);
	setenv("SCHEDLAB_LIBVIRT_TIMEOUT_S", "2x", 1);
	assert_true(guest_connect_timeout_s() == GUEST_CONNECT_TIMEOUT_S);
	unsetenv("SCHEDLAB_LIBVIRT_TIMEOUT_S");

	/* The abandoned connects end when the socket goes. */
	close(fd);
	unlink(a.sun_path);
	rmdir(dir);
	sleep_s(0.3);

	/* Nothing listens now: a plain refusal, at once. */
	memset(&err, 0, sizeof(err));
	t0 = time_monotonic_s();
	assert_null(guest_connect(uri, 5.0, &err));
	assert_true(time_monotonic_s() - t0 < 4);
	assert_non_null(strstr(err.message, "Cannot connect to libvirt"));
}

static void quiet(void *userdata, virErrorPtr e)
{
	(void)userdata;
	(void)e;
}

int main(void)
{
	virSetErrorFunc(NULL, quiet); /* the unsupported stream calls are expected */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_waits_for_the_domain),
	    cmocka_unit_test(test_gives_up_at_the_timeout),
	    cmocka_unit_test(test_free_drains),
	    cmocka_unit_test(test_connect_to_a_silent_daemon),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
