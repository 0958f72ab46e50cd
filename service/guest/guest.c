/* Guests through the libvirt C API: see guest.h.
 *
 * Threads: guest_run() runs in its caller's thread and waits on a condition
 * variable; the stream and lifecycle callbacks run in the one process-wide
 * libvirt event loop thread and share a struct run with it under its lock.
 * libvirt does not promise that a stream's free callback runs (it skips it
 * for a callback removed while dispatching), so none is used: after removing
 * its callbacks guest_run() waits for an event-loop barrier (a zero timeout
 * that runs after any callback in flight) and only then frees the run. If
 * the barrier does not come, the run is leaked rather than freed under a
 * callback.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sendfile.h>
#include <time.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guest/console_events.h"
#include "guest/guest.h"
#include "guest/domain_xml.h"
#include "proto/frame.h"
#include "util/fs.h"

#define POLL_MS		   100
#define HALT_GRACE_S	   0.5 /* after "System halted", for the last frames to arrive */
#define DRAIN_S		   3.0 /* after the domain stops, wait this long for the streams' ends */
#define STREAM_READ_ROUNDS 16  /* reads per callback, so one chatty guest cannot starve others */
#define MAX_FRAMES	   256

struct guest_host {
	virConnectPtr conn;
	char *uri;
};

enum { STREAM_CONSOLE, STREAM_RESULTS, N_STREAMS };

struct run;
struct stream_ref {
	struct run *run;
	int which;
};

struct run {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct stream_ref sref[N_STREAMS];

	/* Written by callbacks, read by the caller, all under lock. */
	bool stopped, shutdown, crashed_event, eof[N_STREAMS];
	bool closed; /* the outcome was taken: late callbacks change nothing */
	char *tail;  /* ring of GUEST_CONSOLE_TAIL_MAX bytes */
	size_t tail_pos, tail_len;
	int log_fd;
	size_t log_bytes;
	struct console_events *ce;
	struct frame_parser *fp;
	json_object *frames;
	int n_frames, payload_errors, dropped_frames;
	char payload_error[256];
	bool hello, summary, saw_linux;
	double t_hello;
	char line_start[16]; /* first bytes of the current console line, for "Linux version" */
	size_t line_start_len;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_free(struct run *r)
{
	if (!r)
		return;
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r->tail);
	if (r->log_fd >= 0)
		close(r->log_fd);
	console_events_free(r->ce);
	frame_parser_free(r->fp);
	json_object_put(r->frames);
	free(r);
}

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

/* true when the event loop passed the barrier within timeout_s. */
static bool event_loop_barrier(double timeout_s)
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
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)timeout_s;
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

static const char *virt_error(void)
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

struct guest_host *guest_host_open(const char *uri, struct sl_error *err)
{
	pthread_once(&event_once, event_init);
	if (event_init_result < 0) {
		error_set(err, ERR_INFRA, -event_init_result,
			  "The libvirt event loop could not be started.");
		return NULL;
	}
	if (!uri)
		uri = "qemu:///system";
	struct guest_host *h = calloc(1, sizeof(*h));
	if (!h || !(h->uri = strdup(uri))) {
		free(h);
		error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		return NULL;
	}
	h->conn = virConnectOpen(uri);
	if (!h->conn) {
		error_set(err, ERR_INFRA, ECONNREFUSED,
			  "Cannot connect to libvirt at '%s': %s. Is libvirtd running "
			  "(scripts/setup.sh starts it)?",
			  uri, virt_error());
		free(h->uri);
		free(h);
		return NULL;
	}
	/* A dead remote daemon is noticed within about 15 s, not never. */
	virConnectSetKeepAlive(h->conn, 5, 3);
	return h;
}

void guest_host_free(struct guest_host *h)
{
	if (!h)
		return;
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

int guest_host_versions(struct guest_host *h, char qemu[32], char libvirt[32], struct sl_error *err)
{
	unsigned long hv = 0, lv = 0;
	if (virConnectGetVersion(h->conn, &hv) < 0 || virConnectGetLibVersion(h->conn, &lv) < 0)
		return error_set(err, ERR_INFRA, EIO, "Cannot read the versions of '%s': %s.",
				 h->uri, virt_error());
	version_str(hv, qemu);
	version_str(lv, libvirt);
	return 0;
}

/* Console bytes: the tail ring, the log, the event scanner, and (probe mode)
 * a "Linux version" line. Called under r->lock. */
static void console_bytes(struct run *r, const char *buf, size_t n)
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

/* Pops complete frames into r->frames. Called under r->lock. */
static void pop_frames(struct run *r)
{
	struct frame f;
	while (frame_parser_next(r->fp, &f) == 1) {
		if (r->n_frames >= MAX_FRAMES) {
			r->dropped_frames++;
			frame_clear(&f);
			continue;
		}
		json_tokener *tok = json_tokener_new();
		json_object *payload =
		    tok ? json_tokener_parse_ex(tok, f.payload, (int)f.len) : NULL;
		if (tok && (!payload || json_tokener_get_error(tok) != json_tokener_success ||
			    tok->char_offset != (int)f.len)) {
			json_object_put(payload);
			payload = NULL;
			r->payload_errors++;
			snprintf(r->payload_error, sizeof(r->payload_error),
				 "The payload of frame %d ('%s') is not valid JSON.",
				 r->n_frames + 1, f.kind);
		}
		json_tokener_free(tok);
		json_object *o = json_object_new_object();
		json_object_object_add(o, "kind", json_object_new_string(f.kind));
		json_object_object_add(o, "payload", payload);
		json_object_array_add(r->frames, o);
		r->n_frames++;
		if (strcmp(f.kind, "hello") == 0 && !r->hello) {
			r->hello = true;
			r->t_hello = now_s();
		} else if (strcmp(f.kind, "summary") == 0 && payload) {
			r->summary = true;
		}
		frame_clear(&f);
	}
}

static void stream_cb(virStreamPtr st, int events, void *opaque)
{
	struct stream_ref *sr = opaque;
	struct run *r = sr->run;
	char buf[16384];
	(void)events;

	for (int round = 0; round < STREAM_READ_ROUNDS; round++) {
		int n = virStreamRecv(st, buf, sizeof(buf));
		if (n == -2)
			return; /* nothing more for now */
		pthread_mutex_lock(&r->lock);
		if (r->closed) {
			/* The outcome was taken; drop what still arrives. */
		} else if (n > 0) {
			if (sr->which == STREAM_CONSOLE) {
				console_bytes(r, buf, (size_t)n);
			} else {
				frame_parser_feed(r->fp, buf, (size_t)n);
				pop_frames(r);
			}
		} else {
			/* 0: end of stream; -1: the domain went away under it. */
			r->eof[sr->which] = true;
		}
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		if (n <= 0) {
			/* Quiet the stream; guest_run() removes the callback. */
			virStreamEventUpdateCallback(st, 0);
			return;
		}
	}
}

static int lifecycle_cb(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	struct run *r = opaque;
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

static struct run *run_new(const char *log_path, struct sl_error *err)
{
	struct run *r = calloc(1, sizeof(*r));
	if (!r) {
		error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		return NULL;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->log_fd = -1;
	for (int i = 0; i < N_STREAMS; i++)
		r->sref[i] = (struct stream_ref){.run = r, .which = i};
	r->tail = malloc(GUEST_CONSOLE_TAIL_MAX);
	r->ce = console_events_new();
	r->fp = frame_parser_new(FRAME_MAX_PAYLOAD);
	r->frames = json_object_new_array();
	if (!r->tail || !r->ce || !r->fp || !r->frames) {
		run_free(r);
		error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		return NULL;
	}
	if (log_path) {
		r->log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (r->log_fd < 0) {
			error_set(err, ERR_INTERNAL, errno,
				  "Cannot create the console log '%s': %s.", log_path,
				  strerror(errno));
			run_free(r);
			return NULL;
		}
	}
	return r;
}

static int valid_run_id(const char *id)
{
	size_t n = id ? strlen(id) : 0;
	return n > 0 && n <= 90 &&
	       strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static int copy_into(const char *src, const char *dst, struct sl_error *err)
{
	_cleanup_close_ int in = open(src, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int out = -1;
	struct stat st;
	if (in < 0 || fstat(in, &st) < 0)
		return error_set(err, ERR_NOT_FOUND, errno, "Cannot read '%s': %s.", src,
				 strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot create '%s': %s.", dst,
				 strerror(errno));
	off_t left = st.st_size;
	while (left > 0) {
		ssize_t n = sendfile(out, in, NULL, (size_t)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return error_set(err, ERR_INTERNAL, n < 0 ? errno : EIO,
					 "Cannot copy '%s' to '%s'.", src, dst);
		left -= n;
	}
	return 0;
}

/* A 0755 directory under $TMPDIR (or /tmp) holding copies of the kernel and
 * initrd: QEMU runs as its own user, which cannot enter a 0700 cache. */
static int stage_files(const struct guest_spec *s, char **ret_dir, char **ret_kernel,
		       char **ret_initrd, struct sl_error *err)
{
	const char *tmp = getenv("TMPDIR");
	_cleanup_free_ char *dir = NULL;
	if (asprintf(&dir, "%s/schedlab-guest-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", s->run_id) <
	    0) {
		dir = NULL;
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
		return error_set(err, ERR_INTERNAL, errno,
				 "Cannot create a staging directory for run '%s': %s.", s->run_id,
				 strerror(errno));
	_cleanup_free_ char *k = fs_path_join(dir, "bzImage");
	_cleanup_free_ char *i = fs_path_join(dir, "initrd");
	int r = copy_into(s->kernel, k, err);
	if (r >= 0)
		r = copy_into(s->initrd, i, err);
	if (r < 0) {
		fs_rm_rf(dir, NULL);
		return r;
	}
	*ret_dir = TAKE_PTR(dir);
	*ret_kernel = TAKE_PTR(k);
	*ret_initrd = TAKE_PTR(i);
	return 0;
}

void guest_outcome_free(struct guest_outcome *o)
{
	if (!o)
		return;
	free(o->reason);
	json_object_put(o->events);
	free(o->console_tail);
	json_object_put(o->frames);
	free(o);
}

char *guest_tail_lines(const char *text, int max_lines)
{
	if (!text)
		return strdup("");
	size_t n = strlen(text);
	size_t i = n;
	int lines = 0;
	/* A trailing newline does not start another line. */
	if (i > 0 && text[i - 1] == '\n')
		i--;
	while (i > 0) {
		if (text[i - 1] == '\n' && ++lines >= max_lines)
			break;
		i--;
	}
	return strdup(text + i);
}

json_object *guest_outcome_to_json(const struct guest_outcome *o)
{
	json_object *j = json_object_new_object();
	json_object_object_add(j, "status", json_object_new_string(o->status));
	json_object_object_add(j, "reason", o->reason ? json_object_new_string(o->reason) : NULL);
	json_object_object_add(j, "domain", json_object_new_string(o->domain));
	json_object_object_add(j, "accelerator", json_object_new_string(o->accel));
	json_object_object_add(j, "create_seconds", json_object_new_double(o->create_s));
	json_object_object_add(j, "boot_seconds",
			       o->boot_s >= 0 ? json_object_new_double(o->boot_s) : NULL);
	json_object_object_add(j, "agent_start_seconds",
			       o->agent_start_s >= 0 ? json_object_new_double(o->agent_start_s)
						     : NULL);
	json_object_object_add(j, "total_seconds", json_object_new_double(o->total_s));
	json_object_object_add(j, "kernel_events", json_object_get(o->events));
	json_object_object_add(j, "frames", json_object_get(o->frames));
	char *ex = guest_tail_lines(o->console_tail, 60);
	json_object_object_add(j, "console_excerpt", json_object_new_string(ex ? ex : ""));
	free(ex);
	return j;
}

/* Fills the outcome from the finished run. Called under r->lock. */
static void outcome_fill(struct run *r, struct guest_outcome *o, bool hung, int deadline_s,
			 bool probe)
{
	const char *perr = NULL;
	int nerr;

	frame_parser_finish(r->fp);
	pop_frames(r);
	console_events_finish(r->ce);
	nerr = frame_parser_errors(r->fp, &perr);
	r->closed = true;

	o->events = console_events_to_json(r->ce);
	o->frames = json_object_get(r->frames);
	o->console_tail = malloc(r->tail_len + 1);
	if (o->console_tail) {
		size_t start =
		    (r->tail_pos + GUEST_CONSOLE_TAIL_MAX - r->tail_len) % GUEST_CONSOLE_TAIL_MAX;
		size_t k = 0;
		for (size_t i = 0; i < r->tail_len; i++) {
			unsigned char c =
			    (unsigned char)r->tail[(start + i) % GUEST_CONSOLE_TAIL_MAX];
			if (c == '\r' || c == 0)
				continue;
			/* Untrusted bytes go into JSON: ASCII only. */
			o->console_tail[k++] =
			    (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' ? (char)c : '?';
		}
		o->console_tail[k] = '\0';
	}
	for (size_t i = 0; i < json_object_array_length(r->frames); i++) {
		json_object *f = json_object_array_get_idx(r->frames, i);
		json_object *kind = json_object_object_get(f, "kind");
		if (strcmp(json_object_get_string(kind), "summary") == 0)
			o->summary = json_object_object_get(f, "payload");
	}

	const char *status = "error";
	char *reason = NULL;
	const char *panic_line = NULL;
	if (console_events_has(r->ce, "panic")) {
		json_object *ev = o->events;
		for (size_t i = 0; i < json_object_array_length(ev); i++) {
			json_object *e = json_object_array_get_idx(ev, i);
			if (strcmp(json_object_get_string(json_object_object_get(e, "kind")),
				   "panic") == 0) {
				panic_line =
				    json_object_get_string(json_object_object_get(e, "line"));
				break;
			}
		}
	}

	if (probe) {
		status = r->saw_linux || r->hello ? "ok" : hung ? "hung" : "error";
		if (strcmp(status, "ok") != 0 &&
		    asprintf(&reason, "The probe saw no kernel output within %d s.", deadline_s) <
			0)
			reason = NULL;
	} else if (panic_line) {
		status = "panic";
		if (asprintf(&reason, "The guest kernel panicked: %s", panic_line) < 0)
			reason = NULL;
	} else if (hung) {
		status = "hung";
		if (asprintf(&reason,
			     "The guest did not finish within its deadline of %d s and was "
			     "destroyed.",
			     deadline_s) < 0)
			reason = NULL;
	} else if (nerr > 0) {
		if (asprintf(&reason, "The results port had %d unreadable frame(s): %s", nerr,
			     perr ? perr : "no detail") < 0)
			reason = NULL;
	} else if (r->payload_errors > 0) {
		reason = strdup(r->payload_error);
	} else if (r->crashed_event || console_events_saw_restart(r->ce)) {
		status = "crashed";
		reason =
		    strdup(r->crashed_event ? "The guest crashed without a kernel panic line."
					    : "The guest rebooted without a kernel panic line.");
	} else if (r->summary) {
		status = "ok";
	} else if (r->dropped_frames > 0) {
		reason = strdup("The guest sent more frames than the limit before its summary.");
	} else {
		if (asprintf(&reason,
			     "The guest stopped without sending a summary frame (%d frame(s) "
			     "received%s).",
			     r->n_frames, r->hello ? ", the agent had started" : ", no hello") < 0)
			reason = NULL;
	}
	snprintf(o->status, sizeof(o->status), "%s", status);
	o->reason = reason;
}

/* Tears a stream down; the callback's reference goes with libvirt's free callback. */
static void stream_close(virStreamPtr st, bool eof)
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

static int open_stream(virConnectPtr conn, virDomainPtr dom, struct run *r, int which,
		       virStreamPtr *ret, struct sl_error *err)
{
	const char *dev = which == STREAM_CONSOLE ? "serial0" : "serial1";
	virStreamPtr st = virStreamNew(conn, VIR_STREAM_NONBLOCK);
	if (!st)
		return error_set(err, ERR_INFRA, EIO, "Cannot create a libvirt stream: %s.",
				 virt_error());
	if (virDomainOpenConsole(dom, dev, st, VIR_DOMAIN_CONSOLE_FORCE) < 0) {
		int rr = error_set(err, ERR_INFRA, EIO, "Cannot open the guest's '%s' console: %s.",
				   dev, virt_error());
		virStreamFree(st);
		return rr;
	}
	if (virStreamEventAddCallback(
		st, VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_ERROR | VIR_STREAM_EVENT_HANGUP,
		stream_cb, &r->sref[which], NULL) < 0) {
		int rr = error_set(err, ERR_INFRA, EIO,
				   "Cannot watch the guest's '%s' console: %s.", dev, virt_error());
		virStreamAbort(st);
		virStreamFree(st);
		return rr;
	}
	*ret = st;
	return 0;
}

int guest_run(struct guest_host *h, const struct guest_spec *s, struct guest_outcome **ret,
	      struct sl_error *err)
{
	struct guest_outcome *o = NULL;
	struct run *r = NULL;
	virDomainPtr dom = NULL;
	virStreamPtr st[N_STREAMS] = {NULL, NULL};
	int cb_id = -1, rc = 0;
	bool hung = false, cancelled = false, powered_off = false;
	_cleanup_free_ char *stage = NULL, *kernel = NULL, *initrd = NULL, *cmdline = NULL,
			    *xml = NULL;
	char name[128];

	if (!valid_run_id(s->run_id))
		return error_set_path(err, ERR_INVALID, "run_id",
				      "The run id '%s' is not 1 to 90 characters of letters, "
				      "digits, '_', '.' and '-'.",
				      s->run_id ? s->run_id : "");
	if (s->deadline_s < 1 || s->deadline_s > GUEST_MAX_DEADLINE_S)
		return error_set_path(err, ERR_INVALID, "deadline_s",
				      "The deadline %d s is not between 1 and %d s.", s->deadline_s,
				      GUEST_MAX_DEADLINE_S);
	snprintf(name, sizeof(name), GUEST_DOMAIN_PREFIX "%s", s->run_id);
	if (asprintf(&cmdline, "%s%s%s", GUEST_BASE_CMDLINE, s->cmdline_extra ? " " : "",
		     s->cmdline_extra ? s->cmdline_extra : "") < 0) {
		cmdline = NULL;
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	if (s->files_on_host) {
		kernel = strdup(s->kernel);
		initrd = strdup(s->initrd);
		if (!kernel || !initrd)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	} else {
		rc = stage_files(s, &stage, &kernel, &initrd, err);
		if (rc < 0)
			return rc;
	}
	struct guest_xml_params xp = {
	    .name = name,
	    .accel = s->accel,
	    .kernel = kernel,
	    .initrd = initrd,
	    .cmdline = cmdline,
	    .vcpus = s->vcpus,
	    .memory_mb = s->memory_mb,
	};
	rc = guest_xml_build(&xp, &xml, err);
	if (rc < 0)
		goto out;
	r = run_new(s->console_log_path, err);
	if (!r) {
		rc = -ENOMEM;
		goto out;
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		rc = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		goto out;
	}
	snprintf(o->accel, sizeof(o->accel), "%s", s->accel);
	snprintf(o->domain, sizeof(o->domain), "%s", name);
	o->boot_s = o->agent_start_s = -1;

	double t_create = now_s();
	dom = virDomainCreateXML(h->conn, xml,
				 VIR_DOMAIN_START_PAUSED | VIR_DOMAIN_START_AUTODESTROY);
	if (!dom) {
		rc = error_set(err, ERR_INFRA, EIO, "Cannot start the guest '%s': %s.", name,
			       virt_error());
		goto out;
	}
	o->create_s = now_s() - t_create;

	cb_id = virConnectDomainEventRegisterAny(h->conn, dom, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
						 VIR_DOMAIN_EVENT_CALLBACK(lifecycle_cb), r, NULL);
	if (cb_id < 0) {
		rc = error_set(err, ERR_INFRA, EIO, "Cannot watch the guest '%s': %s.", name,
			       virt_error());
		goto out;
	}
	/* Both consoles before the first instruction, or the start is lost. */
	for (int i = 0; i < N_STREAMS && rc >= 0; i++)
		rc = open_stream(h->conn, dom, r, i, &st[i], err);
	if (rc < 0)
		goto out;
	double t_resume = now_s();
	if (virDomainResume(dom) < 0) {
		rc = error_set(err, ERR_INFRA, EIO, "Cannot resume the guest '%s': %s.", name,
			       virt_error());
		goto out;
	}

	double deadline = t_resume + s->deadline_s, t_stop = 0, t_halt = 0, last_poll = t_resume;
	pthread_mutex_lock(&r->lock);
	for (;;) {
		double t = now_s();
		if (r->stopped) {
			if (!t_stop)
				t_stop = t;
			/* Wait for the streams' ends, which carry the last output. */
			if ((r->eof[0] && r->eof[1]) || t - t_stop > DRAIN_S)
				break;
		} else if (s->probe && (r->saw_linux || r->hello)) {
			break;
		} else if (r->shutdown && r->summary) {
			/* The guest powered off after its summary, so everything it
			 * had to say has arrived. libvirt's teardown of QEMU takes
			 * another 1-2 s (on_poweroff=destroy); the domain is paused
			 * meanwhile and goes away on its own. */
			powered_off = true;
			break;
		} else if (console_events_saw_halt(r->ce) && !t_halt) {
			t_halt = t;
		} else if (t_halt && t - t_halt > HALT_GRACE_S) {
			/* A halted guest never stops by itself: end it like a power-off. */
			pthread_mutex_unlock(&r->lock);
			virDomainDestroy(dom);
			virResetLastError();
			pthread_mutex_lock(&r->lock);
			r->stopped = true;
			continue;
		} else if (t >= deadline) {
			hung = true;
			break;
		} else if (s->cancelled && s->cancelled(s->userdata)) {
			cancelled = true;
			break;
		} else if (t - last_poll >= 1.0) {
			/* In case a lifecycle event was missed (daemon restart). */
			last_poll = t;
			pthread_mutex_unlock(&r->lock);
			int active = virDomainIsActive(dom);
			/* A transient domain that ended is gone: no such domain. */
			bool gone = active < 0 && virGetLastErrorCode() == VIR_ERR_NO_DOMAIN;
			virResetLastError();
			pthread_mutex_lock(&r->lock);
			if (active == 0 || gone)
				r->stopped = true;
			continue;
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += POLL_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&r->cond, &r->lock, &ts);
	}
	bool stopped = r->stopped;
	pthread_mutex_unlock(&r->lock);

	if (!stopped && !powered_off) {
		virDomainDestroy(dom); /* hung, cancelled or probe done */
		virResetLastError();
	}
	for (int i = 0; i < N_STREAMS; i++) {
		pthread_mutex_lock(&r->lock);
		bool eof = r->eof[i];
		pthread_mutex_unlock(&r->lock);
		stream_close(st[i], eof);
		st[i] = NULL;
	}
	virConnectDomainEventDeregisterAny(h->conn, cb_id);
	cb_id = -1;
	o->total_s = now_s() - t_create;

	if (cancelled) {
		rc = error_set(err, ERR_CANCELLED, ECANCELED,
			       "The guest '%s' was destroyed because its run was cancelled.", name);
		goto out;
	}
	pthread_mutex_lock(&r->lock);
	if (r->hello) {
		o->boot_s = r->t_hello - t_create;
		o->agent_start_s = r->t_hello - t_resume;
	}
	outcome_fill(r, o, hung, s->deadline_s, s->probe);
	pthread_mutex_unlock(&r->lock);
	*ret = TAKE_PTR(o);
	rc = 0;
out:
	for (int i = 0; i < N_STREAMS; i++)
		stream_close(st[i], false);
	if (cb_id >= 0)
		virConnectDomainEventDeregisterAny(h->conn, cb_id);
	if (dom) {
		if (rc < 0 && virDomainIsActive(dom) == 1)
			virDomainDestroy(dom);
		virDomainFree(dom);
	}
	virResetLastError();
	/* No callback may touch r after this; else leak it. */
	if (r && event_loop_barrier(5.0))
		run_free(r);
	guest_outcome_free(o);
	if (stage)
		fs_rm_rf(stage, NULL);
	return rc;
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
				 h->uri, virt_error());
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
