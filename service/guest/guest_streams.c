/* The event loop's side of a run (guest-internal.h): the bytes of the
 * guest's two serial ports, serial0 into the console tail, log and event
 * scanner and serial1 into frames (from guest_ports.c's sockets or from the
 * libvirt console streams here), and the domain's lifecycle events.
 * Everything here that touches a struct guest_state does so under its lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guest/guest-internal.h"
#include "guest/guest.h"
#include "util/json.h"

void guest_state_free(struct guest_state *r)
{
	if (!r)
		return;
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	for (int i = 0; i < GUEST_N_STREAMS; i++) {
		if (r->listen_fd[i] >= 0)
			close(r->listen_fd[i]);
		if (r->port_fd[i] >= 0)
			close(r->port_fd[i]);
	}
	free(r->tail);
	if (r->log_fd >= 0)
		close(r->log_fd);
	console_events_free(r->ce);
	frame_parser_free(r->fp);
	json_object_put(r->frames);
	free(r);
}

struct guest_state *guest_state_new(const char *log_path, struct sl_error *err)
{
	struct guest_state *r = calloc(1, sizeof(*r));
	if (!r) {
		error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		return NULL;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->log_fd = -1;
	for (int i = 0; i < GUEST_N_STREAMS; i++) {
		r->sref[i] = (struct guest_stream_ref){.state = r, .which = i};
		r->listen_fd[i] = r->port_fd[i] = r->port_watch[i] = -1;
	}
	r->tail = malloc(GUEST_CONSOLE_TAIL_MAX);
	r->ce = console_events_new();
	r->fp = frame_parser_new(FRAME_MAX_PAYLOAD);
	r->frames = json_object_new_array();
	if (!r->tail || !r->ce || !r->fp || !r->frames) {
		guest_state_free(r);
		error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		return NULL;
	}
	if (log_path) {
		r->log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (r->log_fd < 0) {
			error_set(err, ERR_INTERNAL, errno,
				  "Cannot create the console log '%s': %s.", log_path,
				  strerror(errno));
			guest_state_free(r);
			return NULL;
		}
	}
	return r;
}

/* Console bytes: the tail ring, the log, the event scanner, and (probe mode)
 * a "Linux version" line. Called under r->lock. */
static void console_bytes(struct guest_state *r, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		r->tail[r->tail_pos] = buf[i];
		r->tail_pos = (r->tail_pos + 1) % GUEST_CONSOLE_TAIL_MAX;
		if (r->tail_len < GUEST_CONSOLE_TAIL_MAX)
			r->tail_len++;
		if (buf[i] == '\n') {
			r->line_start_len = 0;
		} else if (r->line_start_len < sizeof(r->line_start) - 1) {
			r->line_start[r->line_start_len++] = buf[i];
			r->line_start[r->line_start_len] = '\0';
			/* After the printk timestamp; "[    0.000000] Linux version". */
			if (strstr(r->line_start, "] Linux versi") ||
			    strncmp(r->line_start, "Linux version", 13) == 0)
				r->saw_linux = true;
		}
	}
	if (r->log_fd >= 0 && r->log_bytes < GUEST_CONSOLE_LOG_MAX) {
		size_t w = n < GUEST_CONSOLE_LOG_MAX - r->log_bytes
			       ? n
			       : GUEST_CONSOLE_LOG_MAX - r->log_bytes;
		if (write(r->log_fd, buf, w) == (ssize_t)w)
			r->log_bytes += w;
	}
	console_events_feed(r->ce, buf, n);
}

/* The one place that parses what the guest says: keep it strict. */
json_object *guest_payload_parse(const struct frame *f, int index, char *msg, size_t msglen)
{
	/* The frame parser bounds the size already. json_parse_strict's tokener
	 * is max_depth + 1 deep, and json-c counts a scalar as a level too: this
	 * keeps the payload's tokener at GUEST_PAYLOAD_DEPTH, as it always was. */
	const struct json_limits lim = {.max_bytes = FRAME_MAX_PAYLOAD,
					.max_depth = GUEST_PAYLOAD_DEPTH - 1,
					.max_values = GUEST_PAYLOAD_MAX_VALUES};
	struct sl_error err = {0};
	char what[64];
	json_object *o = NULL;

	snprintf(what, sizeof(what), "payload of frame %d ('%s')", index, f->kind);
	if (json_parse_strict(f->payload, f->len, &lim, what, &o, &err) < 0)
		snprintf(msg, msglen, "%s", err.message);
	else if (!o)
		snprintf(msg, msglen, "The %s is not valid JSON: it is null.", what);
	return o;
}

/* Whether frame f fits what is left of the run's budget of bytes and JSON
 * values; counts it in when it does. Checked before parsing, so a guest
 * cannot make the host spend more than the budget. */
static bool frame_within_budget(struct guest_state *r, const struct frame *f)
{
	if (r->over_budget) {
		r->over_budget++;
		return false;
	}
	size_t values = json_value_count(f->payload, f->len);
	if (r->frame_bytes + f->len > GUEST_FRAMES_MAX_BYTES ||
	    r->frame_values + values > GUEST_FRAMES_MAX_VALUES) {
		bool bytes = r->frame_bytes + f->len > GUEST_FRAMES_MAX_BYTES;
		r->over_budget++;
		snprintf(r->payload_error, sizeof(r->payload_error),
			 "The guest's frames went over the limit of %u %s per run at frame %d "
			 "('%s', %zu bytes, about %zu JSON values); it and later frames were not "
			 "kept.",
			 bytes ? GUEST_FRAMES_MAX_BYTES : GUEST_FRAMES_MAX_VALUES,
			 bytes ? "payload bytes" : "JSON values", r->n_frames + 1, f->kind, f->len,
			 values);
		return false;
	}
	r->frame_bytes += f->len;
	r->frame_values += values;
	return true;
}

/* Pops complete frames into r->frames. Called under r->lock. */
void guest_state_pop_frames(struct guest_state *r)
{
	struct frame f;
	while (frame_parser_next(r->fp, &f) == 1) {
		if (strcmp(f.kind, "heartbeat") == 0) {
			/* Liveness only: neither kept nor counted. */
			r->heartbeat = true;
			frame_clear(&f);
			continue;
		}
		if (r->n_frames >= GUEST_MAX_FRAMES) {
			r->dropped_frames++;
			frame_clear(&f);
			continue;
		}
		if (!frame_within_budget(r, &f)) {
			r->payload_errors++;
			frame_clear(&f);
			continue;
		}
		json_object *payload = guest_payload_parse(&f, r->n_frames + 1, r->payload_error,
							   sizeof(r->payload_error));
		if (!payload)
			r->payload_errors++;
		json_object *o = json_object_new_object();
		json_object_object_add(o, "kind", json_object_new_string(f.kind));
		json_object_object_add(o, "payload", payload);
		json_object_array_add(r->frames, o);
		r->n_frames++;
		if (strcmp(f.kind, "hello") == 0 && !r->hello) {
			r->hello = true;
			r->t_hello = time_monotonic_s();
			/* An agent that promises heartbeats arms the silence
			 * rule now: the kernel may hang before the first one. */
			if (payload && json_object_object_get(payload, "heartbeat_s"))
				r->heartbeat = true;
		} else if (strcmp(f.kind, "summary") == 0 && payload) {
			r->summary = true;
		}
		frame_clear(&f);
	}
}

void guest_state_feed(struct guest_state *r, int which, const char *buf, ssize_t n)
{
	pthread_mutex_lock(&r->lock);
	if (r->closed) {
		/* The outcome was taken; drop what still arrives. */
	} else if (n > 0) {
		r->t_activity = time_monotonic_s();
		if (which == GUEST_STREAM_CONSOLE) {
			console_bytes(r, buf, (size_t)n);
		} else {
			frame_parser_feed(r->fp, buf, (size_t)n);
			guest_state_pop_frames(r);
		}
	} else {
		/* 0: end of stream; -1: the domain went away under it. */
		r->eof[which] = true;
	}
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static void stream_cb(virStreamPtr st, int events, void *opaque)
{
	struct guest_stream_ref *sr = opaque;
	char buf[16384];
	(void)events;

	for (int round = 0; round < GUEST_READ_ROUNDS; round++) {
		int n = virStreamRecv(st, buf, sizeof(buf));
		if (n == -2)
			return; /* nothing more for now */
		guest_state_feed(sr->state, sr->which, buf, n);
		if (n <= 0) {
			/* Quiet the stream; guest_run() removes the callback. */
			virStreamEventUpdateCallback(st, 0);
			return;
		}
	}
}

int guest_lifecycle_cb(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	struct guest_state *r = opaque;
	(void)conn;
	(void)dom;
	pthread_mutex_lock(&r->lock);
	if (event == VIR_DOMAIN_EVENT_STOPPED) {
		r->stopped = true;
		if (detail == VIR_DOMAIN_EVENT_STOPPED_CRASHED)
			r->crashed_event = true;
	} else if (event == VIR_DOMAIN_EVENT_SHUTDOWN) {
		r->shutdown = true;
	} else if (event == VIR_DOMAIN_EVENT_CRASHED) {
		r->crashed_event = true;
	}
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

/* Tears a stream down; the callback's reference goes with libvirt's free callback. */
void guest_stream_close(virStreamPtr st, bool eof)
{
	if (!st)
		return;
	virStreamEventRemoveCallback(st);
	if (eof)
		virStreamFinish(st);
	else
		virStreamAbort(st);
	virStreamFree(st);
	virResetLastError();
}

int guest_stream_open(virConnectPtr conn, virDomainPtr dom, struct guest_state *r, int which,
		      virStreamPtr *ret, struct sl_error *err)
{
	const char *dev = which == GUEST_STREAM_CONSOLE ? "serial0" : "serial1";
	virStreamPtr st = virStreamNew(conn, VIR_STREAM_NONBLOCK);
	if (!st)
		return error_set(err, ERR_INFRA, EIO, "Cannot create a libvirt stream: %s.",
				 guest_virt_error());
	if (virDomainOpenConsole(dom, dev, st, VIR_DOMAIN_CONSOLE_FORCE) < 0) {
		int rr = error_set(err, ERR_INFRA, EIO, "Cannot open the guest's '%s' console: %s.",
				   dev, guest_virt_error());
		virStreamFree(st);
		return rr;
	}
	if (virStreamEventAddCallback(
		st, VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_ERROR | VIR_STREAM_EVENT_HANGUP,
		stream_cb, &r->sref[which], NULL) < 0) {
		int rr =
		    error_set(err, ERR_INFRA, EIO, "Cannot watch the guest's '%s' console: %s.",
			      dev, guest_virt_error());
		virStreamAbort(st);
		virStreamFree(st);
		return rr;
	}
	*ret = st;
	return 0;
}
