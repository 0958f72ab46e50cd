/* The health endpoint's libvirt probe (guest/libvirt_probe.c): a daemon that
 * answers (libvirt's test driver), one that accepts and never answers (a
 * socket nobody serves, as a wedged libvirtd), and one that is not there.
 * A stuck probe is reported within the bound, and never doubled. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guest/libvirt_probe.h"
#include "util/time.h"

static const char *field(json_object *o, const char *k)
{
	json_object *v = json_object_object_get(o, k);
	return v ? json_object_get_string(v) : "";
}

static void test_answers(void **state)
{
	(void)state;
	struct libvirt_probe *p = libvirt_probe_new("test:///default");
	json_object *o = libvirt_probe_check(p, 5, 60);
	assert_string_equal(field(o, "state"), "answers");
	assert_string_equal(field(o, "uri"), "test:///default");
	assert_true(strlen(field(o, "libvirt_version")) >= 5);
	json_object_put(o);
	/* Within max_age the answer is reused: no new probe. */
	o = libvirt_probe_check(p, 5, 60);
	assert_string_equal(field(o, "state"), "answers");
	json_object_put(o);
	libvirt_probe_free(p);
}

static void test_wedged_daemon(void **state)
{
	(void)state;
	char dir[] = "/tmp/schedlab-test-probe-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/libvirt-sock", dir);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	char uri[256];
	snprintf(uri, sizeof(uri), "qemu:///system?socket=%s", a.sun_path);

	struct libvirt_probe *p = libvirt_probe_new(uri);
	double t0 = time_monotonic_s();
	json_object *o = libvirt_probe_check(p, 1.0, 0);
	double took = time_monotonic_s() - t0;
	assert_string_equal(field(o, "state"), "no_answer");
	assert_non_null(strstr(field(o, "message"), "did not answer within 1 s"));
	assert_non_null(strstr(field(o, "message"), "wedged?"));
	assert_true(took >= 0.9 && took < 5);
	json_object_put(o);
	/* The stuck probe is not repeated, and a later check does not wait. */
	t0 = time_monotonic_s();
	o = libvirt_probe_check(p, 1.0, 0);
	assert_true(time_monotonic_s() - t0 < 0.5);
	assert_string_equal(field(o, "state"), "no_answer");
	json_object_put(o);
	libvirt_probe_free(p); /* the stuck thread keeps its own reference */

	/* The socket goes: the stuck connect fails and its thread ends. */
	close(fd);
	unlink(a.sun_path);
	rmdir(dir);

	/* Nothing listens: "error", at once, with libvirt's reason. */
	p = libvirt_probe_new(uri);
	o = libvirt_probe_check(p, 5, 0);
	assert_string_equal(field(o, "state"), "error");
	assert_true(strlen(field(o, "message")) > 0);
	json_object_put(o);
	libvirt_probe_free(p);
}

static void quiet(void *userdata, virErrorPtr e)
{
	(void)userdata;
	(void)e;
}

int main(void)
{
	virSetErrorFunc(NULL, quiet);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_answers),
	    cmocka_unit_test(test_wedged_daemon),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
