/* The libvirt connection (guest.h's guest_host_*) and the one process-wide
 * libvirt event loop thread that runs every stream and lifecycle callback.
 *
 * libvirt does not promise that a stream's free callback runs (it skips it
 * for a callback removed while dispatching), so none is used: after removing
 * its callbacks guest_run() waits for an event-loop barrier (a zero timeout
 * that runs after any callback in flight) and only then frees its state. If
 * the barrier does not come, the state is leaked rather than freed under a
 * callback.
 *
 * Opening a connection is bounded (guest_connect): a libvirtd whose main loop
 * is stuck accepts the socket and never answers, and virConnectOpen would
 * wait for ever. An open connection is bounded by its keepalive.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guest/guest-internal.h"
#include "guest/guest.h"
#include "util/parse.h"

/* A zero timeout on the event loop: when it has run, every callback that was
 * in flight before it has returned. Shared by the waiter and the loop. */
struct barrier {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	int refs;
};

static void barrier_unref(void *opaque)
{
	struct barrier *b = opaque;
	pthread_mutex_lock(&b->lock);
	int left = --b->refs;
	pthread_mutex_unlock(&b->lock);
	if (left == 0) {
		pthread_mutex_destroy(&b->lock);
		pthread_cond_destroy(&b->cond);
		free(b);
	}
}

static void barrier_cb(int timer, void *opaque)
{
	struct barrier *b = opaque;
	pthread_mutex_lock(&b->lock);
	b->done = true;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	virEventRemoveTimeout(timer); /* its free callback drops the loop's reference */
}

bool guest_event_loop_barrier(double timeout_s)
{
	struct barrier *b = calloc(1, sizeof(*b));
	if (!b)
		return false;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	b->refs = 2;
	if (virEventAddTimeout(0, barrier_cb, b, barrier_unref) < 0) {
		b->refs = 1;
		barrier_unref(b);
		return false;
	}
	struct timespec ts = time_deadline(CLOCK_REALTIME, timeout_s);
	pthread_mutex_lock(&b->lock);
	while (!b->done)
		if (pthread_cond_timedwait(&b->cond, &b->lock, &ts) != 0)
			break;
	bool done = b->done;
	pthread_mutex_unlock(&b->lock);
	barrier_unref(b);
	return done;
}

/* Libvirt reports errors through the thread's last error; this silences the
 * default handler that prints them to stderr. */
static void silent_error(void *userdata, virErrorPtr e)
{
	(void)userdata;
	(void)e;
}

const char *guest_virt_error(void)
{
	virErrorPtr e = virGetLastError();
	return e && e->message ? e->message : "unknown libvirt error";
}

static void *event_loop_thread(void *arg)
{
	(void)arg;
	for (;;)
		if (virEventRunDefaultImpl() < 0)
			usleep(10000);
	return NULL;
}

static pthread_once_t event_once = PTHREAD_ONCE_INIT;
static int event_init_result;

static void event_init(void)
{
	pthread_t t;
	virSetErrorFunc(NULL, silent_error);
	if (virInitialize() < 0 || virEventRegisterDefaultImpl() < 0) {
		event_init_result = -EIO;
		return;
	}
	if (pthread_create(&t, NULL, event_loop_thread, NULL) != 0) {
		event_init_result = -EAGAIN;
		return;
	}
	pthread_detach(t);
}

/* One connect in its own thread, so the caller can stop waiting. Whoever
 * leaves last (the caller on an answer, the thread when abandoned) frees. */
struct connect_call {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *uri;
	virConnectPtr conn;
	char message[512];
	bool done, abandoned;
};

static void connect_call_free(struct connect_call *c)
{
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	free(c->uri);
	free(c);
}

static void *connect_thread(void *arg)
{
	struct connect_call *c = arg;
	virConnectPtr conn = virConnectOpen(c->uri);
	pthread_mutex_lock(&c->lock);
	if (c->abandoned) {
		pthread_mutex_unlock(&c->lock);
		if (conn)
			virConnectClose(conn);
		virResetLastError();
		connect_call_free(c);
		return NULL;
	}
	c->conn = conn;
	if (!conn)
		snprintf(c->message, sizeof(c->message), "%s", guest_virt_error());
	virResetLastError();
	c->done = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

virConnectPtr guest_connect(const char *uri, double timeout_s, struct sl_error *err)
{
	pthread_once(&event_once, event_init);
	if (event_init_result < 0) {
		error_set(err, ERR_INFRA, -event_init_result,
			  "The libvirt event loop could not be started.");
		return NULL;
	}
	struct connect_call *c = calloc(1, sizeof(*c));
	if (!c || !(c->uri = strdup(uri))) {
		free(c);
		error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	pthread_t t;
	if (pthread_create(&t, NULL, connect_thread, c) != 0) {
		connect_call_free(c);
		error_set(err, ERR_INFRA, EAGAIN, "Cannot start a thread to connect to '%s'.", uri);
		return NULL;
	}
	pthread_detach(t);
	struct timespec ts = time_deadline(CLOCK_REALTIME, timeout_s);
	pthread_mutex_lock(&c->lock);
	while (!c->done)
		if (pthread_cond_timedwait(&c->cond, &c->lock, &ts) == ETIMEDOUT)
			break;
	if (!c->done) {
		c->abandoned = true;
		pthread_mutex_unlock(&c->lock);
		error_set(err, ERR_INFRA, ETIMEDOUT,
			  "libvirt at '%s' did not answer within %g s: the daemon accepts "
			  "connections but does not serve them, so it is most likely hung "
			  "(docs/guests.md says how to tell and what to do: restart libvirtd).",
			  uri, timeout_s);
		return NULL;
	}
	pthread_mutex_unlock(&c->lock);
	virConnectPtr conn = c->conn;
	if (!conn)
		error_set(err, ERR_INFRA, ECONNREFUSED,
			  "Cannot connect to libvirt at '%s': %s. Is libvirtd running "
			  "(scripts/setup.sh starts it)?",
			  uri, c->message);
	connect_call_free(c);
	/* A daemon that stops answering later is noticed within about 15 s:
	 * every call on the connection then fails instead of waiting. */
	if (conn)
		virConnectSetKeepAlive(conn, 5, 3);
	virResetLastError();
	return conn;
}

struct guest_host *guest_host_open(const char *uri, struct sl_error *err)
{
	if (!uri)
		uri = "qemu:///system";
	struct guest_host *h = calloc(1, sizeof(*h));
	if (!h || !(h->uri = strdup(uri))) {
		free(h);
		error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		return NULL;
	}
	h->conn = guest_connect(uri, guest_connect_timeout_s(), err);
	if (h->conn)
		h->reaper = guest_reaper_new(GUEST_REAPER_GRACE_S, GUEST_REAPER_TIMEOUT_S);
	if (!h->conn || !h->reaper) {
		if (h->conn)
			error_set(err, ERR_INTERNAL, EAGAIN,
				  "Cannot start the stream reaper thread.");
		guest_host_free(h);
		return NULL;
	}
	return h;
}

double guest_connect_timeout_s(void)
{
	const char *v = getenv("SCHEDLAB_LIBVIRT_TIMEOUT_S");
	double t = 0;
	if (!v || !*v)
		return GUEST_CONNECT_TIMEOUT_S;
	if (parse_double(v, &t) < 0 || t < 1 || t > 3600) {
		fprintf(stderr,
			"schedlab: SCHEDLAB_LIBVIRT_TIMEOUT_S='%.32s' is not a number of seconds "
			"from 1 to 3600; using %g.\n",
			v, GUEST_CONNECT_TIMEOUT_S);
		return GUEST_CONNECT_TIMEOUT_S;
	}
	return t;
}

void guest_host_free(struct guest_host *h)
{
	if (!h)
		return;
	/* The parked streams first: they need the connection. */
	guest_reaper_free(h->reaper);
	if (h->conn)
		virConnectClose(h->conn);
	free(h->uri);
	free(h);
}

const char *guest_host_uri(const struct guest_host *h)
{
	return h->uri;
}

static void version_str(unsigned long v, char out[32])
{
	snprintf(out, 32, "%lu.%lu.%lu", v / 1000000, (v / 1000) % 1000, v % 1000);
}

enum guest_domain_state guest_domain_state(virDomainPtr dom)
{
	int active = virDomainIsActive(dom);
	enum guest_domain_state s = GUEST_DOMAIN_UNKNOWN;
	if (active >= 0)
		s = active ? GUEST_DOMAIN_ACTIVE : GUEST_DOMAIN_INACTIVE;
	else if (virGetLastErrorCode() == VIR_ERR_NO_DOMAIN)
		s = GUEST_DOMAIN_GONE; /* a transient domain that ended */
	else if (virConnectIsAlive(virDomainGetConnect(dom)) != 1)
		s = GUEST_DOMAIN_UNREACHABLE;
	virResetLastError();
	return s;
}

int guest_host_versions(struct guest_host *h, char qemu[32], char libvirt[32], struct sl_error *err)
{
	unsigned long hv = 0, lv = 0;
	if (virConnectGetVersion(h->conn, &hv) < 0 || virConnectGetLibVersion(h->conn, &lv) < 0)
		return error_set(err, ERR_INFRA, EIO, "Cannot read the versions of '%s': %s.",
				 h->uri, guest_virt_error());
	version_str(hv, qemu);
	version_str(lv, libvirt);
	return 0;
}

int guest_cleanup_leftovers(struct guest_host *h, const char *prefix, struct sl_error *err)
{
	virDomainPtr *doms = NULL;
	int n, destroyed = 0;

	if (!prefix || strncmp(prefix, GUEST_DOMAIN_PREFIX, strlen(GUEST_DOMAIN_PREFIX)) != 0)
		return error_set(err, ERR_INVALID, EINVAL,
				 "The prefix '%s' does not start with '" GUEST_DOMAIN_PREFIX
				 "'; schedlab destroys only its own domains.",
				 prefix ? prefix : "");
	n = virConnectListAllDomains(h->conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
	if (n < 0)
		return error_set(err, ERR_INFRA, EIO, "Cannot list the domains of '%s': %s.",
				 h->uri, guest_virt_error());
	for (int i = 0; i < n; i++) {
		const char *dn = virDomainGetName(doms[i]);
		if (dn && strncmp(dn, prefix, strlen(prefix)) == 0 &&
		    virDomainDestroy(doms[i]) == 0)
			destroyed++;
		virDomainFree(doms[i]);
	}
	free(doms);
	virResetLastError();
	return destroyed;
}
