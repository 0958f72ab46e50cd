/* The console streams of finished runs, ended only once their domain is gone
 * (guest-internal.h). libvirt 9.0's daemon can deadlock when a client
 * finishes a console stream while the domain's teardown frees the domain's
 * character devices (docs/guests.md, "A libvirtd deadlock at power-off"), so
 * a run hands its streams here instead of ending them itself. One thread per
 * connection polls each parked domain: once libvirt no longer knows it, and
 * GUEST_REAPER_GRACE_S more, the streams are finished (or aborted) and freed.
 * A domain that never goes is given up after the reaper's timeout, and a
 * dead connection ends its streams at once: nothing waits unbounded.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guest/guest-internal.h"

#define REAPER_POLL_S 0.2

struct parked {
	struct parked *next;
	virDomainPtr dom;
	virStreamPtr st[GUEST_N_STREAMS];
	bool eof[GUEST_N_STREAMS];
	double t_parked, t_gone; /* t_gone 0: still known to libvirt */
};

struct guest_reaper {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	struct parked *list; /* added under lock; removed by the thread alone */
	bool stop;
	double grace_s, timeout_s;
	struct guest_reaper_stats stats;
};

static void parked_end(struct parked *p)
{
	for (int i = 0; i < GUEST_N_STREAMS; i++)
		guest_stream_close(p->st[i], p->eof[i]);
	virDomainFree(p->dom);
	virResetLastError();
	free(p);
}

/* One pass over the list: ends what is ready. Returns how many are left. */
static int reap_pass(struct guest_reaper *g)
{
	pthread_mutex_lock(&g->lock);
	struct parked *p = g->list;
	pthread_mutex_unlock(&g->lock);
	/* New entries go to the head; the thread alone unlinks, so the part of
	 * the list from p on is stable without the lock. */
	int left = 0;
	for (; p;) {
		struct parked *next = p->next;
		/* A dead connection leaves nothing on the daemon's side to race. */
		bool dead = false;
		if (!p->t_gone) {
			enum guest_domain_state ds = guest_domain_state(p->dom);
			dead = ds == GUEST_DOMAIN_UNREACHABLE;
			if (ds == GUEST_DOMAIN_GONE)
				p->t_gone = time_monotonic_s();
		}
		double t = time_monotonic_s();
		bool forced = !dead && !p->t_gone && t - p->t_parked >= g->timeout_s;
		bool ready = dead || forced || (p->t_gone && t - p->t_gone >= g->grace_s);
		if (!ready) {
			left++;
			p = next;
			continue;
		}
		if (forced)
			fprintf(stderr,
				"schedlab: the domain '%s' was still known to libvirt %g s after "
				"its run ended; ending its console streams anyway.\n",
				virDomainGetName(p->dom), g->timeout_s);
		pthread_mutex_lock(&g->lock);
		struct parked **pp = &g->list;
		while (*pp != p)
			pp = &(*pp)->next;
		*pp = p->next;
		g->stats.ended++;
		if (forced)
			g->stats.forced++;
		if (dead)
			g->stats.dead++;
		pthread_mutex_unlock(&g->lock);
		parked_end(p);
		p = next;
	}
	return left;
}

static void *reaper_thread(void *arg)
{
	struct guest_reaper *g = arg;
	pthread_mutex_lock(&g->lock);
	for (;;) {
		while (!g->list && !g->stop)
			pthread_cond_wait(&g->cond, &g->lock);
		if (!g->list && g->stop)
			break;
		pthread_mutex_unlock(&g->lock);
		int left = reap_pass(g);
		pthread_mutex_lock(&g->lock);
		if (left) {
			struct timespec ts = time_deadline(CLOCK_REALTIME, REAPER_POLL_S);
			pthread_cond_timedwait(&g->cond, &g->lock, &ts);
		}
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

struct guest_reaper *guest_reaper_new(double grace_s, double timeout_s)
{
	struct guest_reaper *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	g->grace_s = grace_s;
	g->timeout_s = timeout_s;
	if (pthread_create(&g->thread, NULL, reaper_thread, g) != 0) {
		pthread_mutex_destroy(&g->lock);
		pthread_cond_destroy(&g->cond);
		free(g);
		return NULL;
	}
	return g;
}

void guest_reaper_park(struct guest_reaper *g, virDomainPtr dom, virStreamPtr st[GUEST_N_STREAMS],
		       const bool eof[GUEST_N_STREAMS])
{
	struct parked *p = calloc(1, sizeof(*p));
	if (!p || virDomainRef(dom) < 0) {
		/* Nowhere to wait: end them now, as before the reaper. */
		free(p);
		for (int i = 0; i < GUEST_N_STREAMS; i++) {
			guest_stream_close(st[i], eof[i]);
			st[i] = NULL;
		}
		return;
	}
	p->dom = dom;
	for (int i = 0; i < GUEST_N_STREAMS; i++) {
		p->st[i] = st[i];
		p->eof[i] = eof[i];
		st[i] = NULL;
		/* No callback may run on it from here: the run's state goes. */
		if (p->st[i])
			virStreamEventRemoveCallback(p->st[i]);
	}
	virResetLastError();
	p->t_parked = time_monotonic_s();
	pthread_mutex_lock(&g->lock);
	p->next = g->list;
	g->list = p;
	g->stats.parked++;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

struct guest_reaper_stats guest_reaper_stats(struct guest_reaper *g)
{
	pthread_mutex_lock(&g->lock);
	struct guest_reaper_stats s = g->stats;
	pthread_mutex_unlock(&g->lock);
	s.pending = s.parked - s.ended;
	return s;
}

void guest_reaper_free(struct guest_reaper *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->stop = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->thread, NULL);
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->cond);
	free(g);
}
