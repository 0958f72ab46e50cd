/* libvirt_probe.h: a bounded "does the daemon answer" for /v1/health. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guest/guest.h"
#include "guest/libvirt_probe.h"
#include "util/time.h"

struct libvirt_probe {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int refs; /* the owner's and a running probe thread's */
	char *uri;
	bool in_flight;	  /* a probe thread runs (or is stuck in the daemon) */
	double t_started; /* monotonic, of the probe in flight */
	bool have;	  /* a probe has finished: the fields below hold */
	bool answered;
	double t_done, seconds;
	char version[32];
	char message[256];
};

static void probe_unref(struct libvirt_probe *p)
{
	pthread_mutex_lock(&p->lock);
	int left = --p->refs;
	pthread_mutex_unlock(&p->lock);
	if (left > 0)
		return;
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p->uri);
	free(p);
}

static void *probe_thread(void *arg)
{
	struct libvirt_probe *p = arg;
	double t0 = time_monotonic_s();
	unsigned long v = 0;
	char msg[256] = "";
	virConnectPtr c = virConnectOpen(p->uri);
	bool ok = c && virConnectGetLibVersion(c, &v) == 0;
	if (!ok) {
		virErrorPtr e = virGetLastError();
		snprintf(msg, sizeof(msg), "%s", e && e->message ? e->message : "unknown error");
	}
	if (c)
		virConnectClose(c);
	virResetLastError();
	pthread_mutex_lock(&p->lock);
	p->in_flight = false;
	p->have = true;
	p->answered = ok;
	p->t_done = time_monotonic_s();
	p->seconds = p->t_done - t0;
	snprintf(p->version, sizeof(p->version), "%lu.%lu.%lu", v / 1000000, (v / 1000) % 1000,
		 v % 1000);
	snprintf(p->message, sizeof(p->message), "%s", msg);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	probe_unref(p);
	return NULL;
}

struct libvirt_probe *libvirt_probe_new(const char *uri)
{
	struct libvirt_probe *p = calloc(1, sizeof(*p));
	if (!p || !(p->uri = strdup(uri))) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->refs = 1;
	return p;
}

void libvirt_probe_free(struct libvirt_probe *p)
{
	if (p)
		probe_unref(p);
}

double libvirt_probe_timeout_s(void)
{
	double t = guest_connect_timeout_s();
	return t < LIBVIRT_PROBE_MAX_S ? t : LIBVIRT_PROBE_MAX_S;
}

/* Starts a probe thread. Under p->lock. */
static void probe_start(struct libvirt_probe *p)
{
	pthread_t t;
	p->refs++;
	p->in_flight = true;
	p->t_started = time_monotonic_s();
	if (pthread_create(&t, NULL, probe_thread, p) != 0) {
		p->refs--;
		p->in_flight = false;
		p->have = true;
		p->answered = false;
		p->t_done = p->t_started;
		p->seconds = 0;
		snprintf(p->message, sizeof(p->message), "cannot start a probe thread");
		return;
	}
	pthread_detach(t);
}

json_object *libvirt_probe_check(struct libvirt_probe *p, double timeout_s, double max_age_s)
{
	json_object *o = json_object_new_object();
	pthread_mutex_lock(&p->lock);
	double now = time_monotonic_s();
	if (!p->in_flight && (!p->have || now - p->t_done >= max_age_s))
		probe_start(p);
	/* Only a first probe is waited for; later checks report the last
	 * answer while a fresh one runs, so health stays fast. */
	if (p->in_flight && !p->have) {
		struct timespec ts = time_deadline(CLOCK_REALTIME, p->t_started + timeout_s - now);
		while (p->in_flight)
			if (pthread_cond_timedwait(&p->cond, &p->lock, &ts) == ETIMEDOUT)
				break;
		now = time_monotonic_s();
	}
	json_object_object_add(o, "uri", json_object_new_string(p->uri));
	if (p->in_flight && now - p->t_started >= timeout_s) {
		char m[512];
		snprintf(m, sizeof(m),
			 "libvirtd at '%s' did not answer within %g s (this probe has waited "
			 "%.0f s): wedged? (docs/guests.md)",
			 p->uri, timeout_s, now - p->t_started);
		json_object_object_add(o, "state", json_object_new_string("no_answer"));
		json_object_object_add(o, "seconds", json_object_new_double(now - p->t_started));
		json_object_object_add(o, "message", json_object_new_string(m));
	} else if (p->have) {
		json_object_object_add(o, "state",
				       json_object_new_string(p->answered ? "answers" : "error"));
		json_object_object_add(o, "seconds", json_object_new_double(p->seconds));
		json_object_object_add(o, "age_seconds", json_object_new_double(now - p->t_done));
		if (p->answered)
			json_object_object_add(o, "libvirt_version",
					       json_object_new_string(p->version));
		else
			json_object_object_add(o, "message", json_object_new_string(p->message));
	} else {
		/* In flight for less than timeout_s and nothing known yet: the
		 * wait above ended early only on a spurious wakeup. */
		json_object_object_add(o, "state", json_object_new_string("no_answer"));
		json_object_object_add(o, "seconds", json_object_new_double(now - p->t_started));
	}
	pthread_mutex_unlock(&p->lock);
	return o;
}
