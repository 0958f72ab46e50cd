/* The guest's serial ports as unix sockets (guest_ports.c), with this test
 * in QEMU's place: it connects to both sockets as QEMU does at start, writes
 * console lines and frames, and goes away as a dying QEMU does. The bytes
 * reach the run's state on libvirt's event loop exactly as the console
 * streams' did (guest_state_feed), each port's end is seen, a second
 * connection is never taken, and a QEMU that never connects is an error
 * after the bound. Real guests use them in every local guest e2e test. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libvirt/libvirt.h>

#include "guest/guest-internal.h"
#include "guest/guest.h"
#include "proto/frame.h"
#include "util/fs.h"

static int connect_to(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Waits (bounded) until cond(r) holds under r->lock. */
static bool wait_for(struct guest_state *r, bool (*cond)(struct guest_state *), double limit_s)
{
	struct timespec ts = time_deadline(CLOCK_REALTIME, limit_s);
	pthread_mutex_lock(&r->lock);
	while (!cond(r))
		if (pthread_cond_timedwait(&r->cond, &r->lock, &ts) != 0)
			break;
	bool ok = cond(r);
	pthread_mutex_unlock(&r->lock);
	return ok;
}

static bool saw_hello_and_linux(struct guest_state *r)
{
	return r->hello && r->saw_linux && r->n_frames == 1;
}

static bool both_ended(struct guest_state *r)
{
	return r->eof[0] && r->eof[1];
}

struct fixture {
	char dir[64];
	char *paths[GUEST_N_STREAMS];
	struct guest_state *r;
	virConnectPtr conn;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct sl_error err = {0};
	/* The event loop thread starts with the first connection. */
	f->conn = guest_connect("test:///default", 10, &err);
	assert_non_null(f->conn);
	snprintf(f->dir, sizeof(f->dir), "/tmp/sl-ports-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->r = guest_state_new(NULL, &err);
	assert_non_null(f->r);
	assert_int_equal(guest_ports_listen(f->r, f->dir, f->paths, &err), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	guest_ports_detach(f->r);
	assert_true(guest_event_loop_barrier(5.0));
	guest_state_free(f->r);
	for (int i = 0; i < GUEST_N_STREAMS; i++)
		free(f->paths[i]);
	fs_rm_rf(f->dir, NULL);
	virConnectClose(f->conn);
	free(f);
	return 0;
}

static void test_bytes_and_end(void **state)
{
	struct fixture *f = *state;
	struct sl_error err = {0};
	struct stat st;
	assert_int_equal(stat(f->paths[0], &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600); /* nobody but QEMU's user */
	int q[GUEST_N_STREAMS];
	for (int i = 0; i < GUEST_N_STREAMS; i++)
		assert_true((q[i] = connect_to(f->paths[i])) >= 0);
	/* Written before the run attaches: a paused guest's QEMU is already
	 * connected, and nothing it writes may be lost. */
	const char *line = "Linux version 6.1.0 (schedlab)\n";
	assert_int_equal(write(q[0], line, strlen(line)), (ssize_t)strlen(line));
	assert_int_equal(guest_ports_attach(f->r, "t", 5, &err), 0);
	assert_int_equal(frame_write(q[1], "hello", "{\"agent\":1}", 11), 0);
	bool seen = wait_for(f->r, saw_hello_and_linux, 10);
	if (!seen)
		fail_msg("hello %d, Linux version %d, frames %d, bytes %zu", f->r->hello,
			 f->r->saw_linux, f->r->n_frames, f->r->tail_len);
	/* One connection per port: the listener is gone. */
	assert_int_equal(connect_to(f->paths[1]), -1);
	/* QEMU goes (the domain ended, or it was killed): both ports end. */
	close(q[0]);
	close(q[1]);
	assert_true(wait_for(f->r, both_ended, 10));
	pthread_mutex_lock(&f->r->lock);
	assert_int_equal(f->r->payload_errors, 0);
	assert_true(f->r->tail_len >= strlen(line));
	pthread_mutex_unlock(&f->r->lock);
}

static void test_qemu_never_connects(void **state)
{
	struct fixture *f = *state;
	struct sl_error err = {0};
	double t0 = time_monotonic_s();
	assert_true(guest_ports_attach(f->r, "t", 0.5, &err) < 0);
	double took = time_monotonic_s() - t0;
	assert_true(took >= 0.4 && took < 5);
	assert_int_equal(err.kind, ERR_INFRA);
	assert_non_null(strstr(err.message, "did not connect to serial0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_bytes_and_end, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_qemu_never_connects, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
