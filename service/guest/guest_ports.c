/* The guest's two serial ports as unix sockets that schedlab listens on and
 * QEMU connects to (<serial type='unix'><source mode='connect'>), for a
 * daemon on this machine (guest-internal.h).
 *
 * Why not libvirt console streams: libvirt 9.0's daemon deadlocks when a
 * console stream ends while the domain's teardown frees its character
 * devices (docs/guests.md). A client that dies with streams open ends them
 * at a moment it does not choose, so no order of teardown in schedlab can
 * avoid that race on a crash. With sockets, libvirtd only writes the path
 * into QEMU's command line: no stream, no virChrdev entry, nothing of the
 * daemon's that a dying schedlab or a finishing run can lock. schedlab's
 * death closes the sockets; QEMU's chardev sees a hang-up and drops what
 * the guest still writes, and AUTODESTROY ends the domain.
 *
 * The sockets are listening before the domain is created, and QEMU connects
 * while it starts, paused: nothing of the boot is lost. Only the first
 * connection on each is taken, and only root and QEMU's user (libvirt's DAC
 * driver chowns the 0600 socket to it) can connect at all.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guest/guest-internal.h"
#include "util/fs.h"

static void port_cb(int watch, int fd, int events, void *opaque)
{
	struct guest_stream_ref *sr = opaque;
	char buf[16384];
	(void)events;

	for (int round = 0; round < GUEST_READ_ROUNDS; round++) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return; /* nothing more for now */
		/* 0: QEMU closed it (the domain ended); < 0: a reset. */
		guest_state_feed(sr->state, sr->which, buf, n);
		if (n <= 0) {
			/* Quiet the watch; guest_run() removes it. */
			virEventUpdateHandle(watch, 0);
			return;
		}
	}
}

int guest_ports_listen(struct guest_state *r, const char *dir, char *paths[GUEST_N_STREAMS],
		       struct sl_error *err)
{
	for (int i = 0; i < GUEST_N_STREAMS; i++) {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		char name[32];
		snprintf(name, sizeof(name), "serial%d.sock", i);
		paths[i] = fs_path_join(dir, name);
		if (!paths[i])
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		if (strlen(paths[i]) >= sizeof(a.sun_path))
			return error_set(err, ERR_INVALID, ENAMETOOLONG,
					 "The socket path '%s' of serial%d is longer than a unix "
					 "socket allows (%zu bytes): set a shorter TMPDIR.",
					 paths[i], i, sizeof(a.sun_path) - 1);
		memcpy(a.sun_path, paths[i], strlen(paths[i]) + 1);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return error_set(err, ERR_INTERNAL, errno,
					 "Cannot create the socket of serial%d: %s.", i,
					 strerror(errno));
		r->listen_fd[i] = fd;
		/* 0600 before QEMU's user gets it: nobody else may connect first. */
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || chmod(paths[i], 0600) < 0 ||
		    listen(fd, 1) < 0)
			return error_set(err, ERR_INTERNAL, errno,
					 "Cannot listen on '%s' for serial%d: %s.", paths[i], i,
					 strerror(errno));
	}
	return 0;
}

/* QEMU's connection on listening socket lfd, waiting at most timeout_s. */
static int accept_qemu(int lfd, double timeout_s)
{
	double end = time_monotonic_s() + timeout_s;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return fd;
		double left = end - time_monotonic_s();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		poll(&p, 1, (int)(left * 1000) + 1);
	}
}

int guest_ports_attach(struct guest_state *r, const char *name, double timeout_s,
		       struct sl_error *err)
{
	for (int i = 0; i < GUEST_N_STREAMS; i++) {
		int fd = accept_qemu(r->listen_fd[i], timeout_s);
		if (fd < 0)
			return error_set(err, ERR_INFRA, errno,
					 "QEMU of the guest '%s' did not connect to serial%d's "
					 "socket within %g s: %s.",
					 name, i, timeout_s, strerror(errno));
		r->port_fd[i] = fd;
		/* One connection per port: the listener goes at once. */
		close(r->listen_fd[i]);
		r->listen_fd[i] = -1;
		r->port_watch[i] = virEventAddHandle(
		    fd,
		    VIR_EVENT_HANDLE_READABLE | VIR_EVENT_HANDLE_ERROR | VIR_EVENT_HANDLE_HANGUP,
		    port_cb, &r->sref[i], NULL);
		if (r->port_watch[i] < 0)
			return error_set(err, ERR_INFRA, EIO,
					 "Cannot watch serial%d of the guest '%s' on libvirt's "
					 "event loop.",
					 i, name);
	}
	return 0;
}

void guest_ports_detach(struct guest_state *r)
{
	for (int i = 0; i < GUEST_N_STREAMS; i++) {
		if (r->port_watch[i] >= 0)
			virEventRemoveHandle(r->port_watch[i]);
		r->port_watch[i] = -1;
	}
	virResetLastError();
}
