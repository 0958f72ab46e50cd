/* Connection state and the request deadline. libmicrohttpd's own timeout
 * (idle_timeout_s) restarts on every byte, so a client that trickles a
 * header one byte every few seconds would hold its slot forever. Here each
 * connection records when its current request began (accept, or the end of
 * the previous response on a kept-alive connection); the ticker thread
 * shuts down the socket of any connection whose request has not fully
 * arrived within request_deadline_s, and libmicrohttpd then closes it as a
 * connection the peer dropped. Once a request has arrived (the handler
 * runs) the deadline no longer applies: answers, downloads and event
 * streams are bounded by the idle timeout and the keepalive instead.
 *
 * Safety of shutdown(): a connection is in srv->conns from
 * MHD_CONNECTION_NOTIFY_STARTED to MHD_CONNECTION_NOTIFY_CLOSED, and
 * libmicrohttpd closes the descriptor only after the CLOSED notification
 * returns (daemon.c, MHD_cleanup_connections), which waits for conns_lock:
 * the ticker never touches a descriptor that was closed or reused. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "server/http.h"
#include "server/http-internal.h"
#include "util/time.h"

struct http_conn {
	struct http_conn *prev, *next;
	struct http_server *srv;
	int fd;
	double request_start; /* time_monotonic_s() */
	bool arrived;	      /* the current request is complete and answered */
	bool shut;	      /* the deadline shut the socket down */
};

void http_conns_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
		       enum MHD_ConnectionNotificationCode code)
{
	struct http_server *srv = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *info =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct http_conn *c = calloc(1, sizeof(*c));
		if (!c || !info) {
			free(c);
			*socket_context = NULL;
			return;
		}
		c->srv = srv;
		c->fd = info->connect_fd;
		c->request_start = time_monotonic_s();
		pthread_mutex_lock(&srv->conns_lock);
		c->next = srv->conns;
		if (srv->conns)
			srv->conns->prev = c;
		srv->conns = c;
		pthread_mutex_unlock(&srv->conns_lock);
		*socket_context = c;
		return;
	}
	struct http_conn *c = *socket_context;
	if (!c)
		return;
	pthread_mutex_lock(&srv->conns_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&srv->conns_lock);
	free(c);
	*socket_context = NULL;
}

static struct http_conn *conn_state(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return info ? info->socket_context : NULL;
}

void http_conns_request_arrived(struct MHD_Connection *conn)
{
	struct http_conn *c = conn_state(conn);
	if (!c)
		return;
	pthread_mutex_lock(&c->srv->conns_lock);
	c->arrived = true;
	pthread_mutex_unlock(&c->srv->conns_lock);
}

void http_conns_request_done(struct MHD_Connection *conn)
{
	struct http_conn *c = conn ? conn_state(conn) : NULL;
	if (!c)
		return;
	pthread_mutex_lock(&c->srv->conns_lock);
	c->arrived = false;
	c->request_start = time_monotonic_s();
	pthread_mutex_unlock(&c->srv->conns_lock);
}

size_t http_conns_count(struct http_server *srv)
{
	size_t n = 0;
	pthread_mutex_lock(&srv->conns_lock);
	for (struct http_conn *c = srv->conns; c; c = c->next)
		n++;
	pthread_mutex_unlock(&srv->conns_lock);
	return n;
}

/* Shuts down every connection past its deadline; returns how many. */
static unsigned conns_enforce_deadline(struct http_server *srv)
{
	double now = time_monotonic_s(), limit = srv->opts->config->request_deadline_s;
	unsigned n = 0;
	pthread_mutex_lock(&srv->conns_lock);
	for (struct http_conn *c = srv->conns; c; c = c->next) {
		if (c->arrived || c->shut || now - c->request_start < limit)
			continue;
		/* libmicrohttpd sees end of stream on its next read and closes. */
		(void)shutdown(c->fd, SHUT_RDWR);
		c->shut = true;
		n++;
	}
	pthread_mutex_unlock(&srv->conns_lock);
	return n;
}

static void *ticker_main(void *arg)
{
	struct http_server *srv = arg;
	pthread_mutex_lock(&srv->conns_lock);
	while (!atomic_load(&srv->stopping)) {
		struct timespec ts = time_deadline(CLOCK_MONOTONIC, 0.5);
		pthread_cond_timedwait(&srv->ticker_cond, &srv->conns_lock, &ts);
		if (atomic_load(&srv->stopping))
			break;
		pthread_mutex_unlock(&srv->conns_lock);
		unsigned n = conns_enforce_deadline(srv);
		if (n) {
			atomic_fetch_add(&srv->deadline_closed, n);
			http_log(srv,
				 "closed %u connection(s) whose request did not arrive within %d s",
				 n, srv->opts->config->request_deadline_s);
		}
		http_streams_tick(srv);
		pthread_mutex_lock(&srv->conns_lock);
	}
	pthread_mutex_unlock(&srv->conns_lock);
	return NULL;
}

int http_conns_start(struct http_server *srv, struct sl_error *err)
{
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&srv->ticker_cond, &attr);
	pthread_condattr_destroy(&attr);
	int r = pthread_create(&srv->ticker, NULL, ticker_main, srv);
	if (r != 0)
		return error_set(err, ERR_INTERNAL, r, "Cannot start the connection ticker: %s.",
				 strerror(r));
	srv->ticker_running = true;
	return 0;
}

void http_conns_stop(struct http_server *srv)
{
	if (!srv->ticker_running)
		return;
	pthread_mutex_lock(&srv->conns_lock);
	atomic_store(&srv->stopping, 1);
	pthread_cond_signal(&srv->ticker_cond);
	pthread_mutex_unlock(&srv->conns_lock);
	pthread_join(srv->ticker, NULL);
	srv->ticker_running = false;
}
