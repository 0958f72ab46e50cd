/* What the guest_*.c family shares behind guest.h:
 *
 *   guest_host.c     the libvirt connection and the one process-wide event
 *                    loop thread (with its barrier)
 *   guest_streams.c  the event loop's side of a run: the two serial ports'
 *                    bytes (console, frames) and the lifecycle events, and
 *                    the ports read as libvirt console streams (remote)
 *   guest_ports.c    the ports as unix sockets schedlab listens on and QEMU
 *                    connects to (a local daemon: no libvirt stream at all)
 *   guest_run.c      guest_run(): stage, create paused, attach, resume, wait
 *   guest_reaper.c   a finished run's console streams, ended once its domain
 *                    is gone (the libvirt 9.0 teardown deadlock)
 *   guest.c          the outcome: filled from a finished run, freed, as JSON
 *
 * Threads: guest_run() runs in its caller's thread and waits on a condition
 * variable; the stream and lifecycle callbacks run in the event loop thread
 * and share a struct guest_state with it under its lock.
 *
 * This header does not include guest.h (it declares the two structs it
 * needs): guest.c includes it, and the include graph must stay acyclic. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include <libvirt/libvirt.h>

#include "guest/console_events.h"
#include "proto/frame.h"
#include "util/error.h"
#include "util/time.h"

#define GUEST_MAX_FRAMES    256 /* frames kept per run; later ones are counted, not kept */
#define GUEST_PAYLOAD_DEPTH 32	/* nesting of a frame's JSON payload */
/* What one run's frames may cost the host (docs/contracts.md section 2).
 * The largest real frame measured is 465 kB (cyclictest -h20000 with two
 * threads: stdout holds every bucket) and a summary about 500 bytes with
 * some 50 values; a frame is at most FRAME_MAX_PAYLOAD (4 MiB). Parsed,
 * json-c spends 40 to 100 bytes per value, so values are bounded too: a
 * 4 MiB array of one-digit integers would be about 150 MB. A plan may
 * hold 64 workloads of 256 arguments, each echoed in its workload frame:
 * about 17000 values, which the run's budget of values allows. */
#define GUEST_FRAMES_MAX_BYTES	 (32u << 20) /* payload bytes kept per run */
#define GUEST_PAYLOAD_MAX_VALUES 4096	     /* JSON values in one payload */
#define GUEST_FRAMES_MAX_VALUES	 65536	     /* JSON values kept per run */
#define GUEST_READ_ROUNDS	 16 /* reads per callback, so one chatty guest cannot starve others */

struct guest_spec;
struct guest_outcome;

struct guest_reaper;

struct guest_host {
	virConnectPtr conn;
	char *uri;
	struct guest_reaper *reaper; /* this connection's finished runs' streams */
};

enum { GUEST_STREAM_CONSOLE, GUEST_STREAM_RESULTS, GUEST_N_STREAMS };

struct guest_state;
/* What a stream callback gets as its opaque: its run and which stream. */
struct guest_stream_ref {
	struct guest_state *state;
	int which;
};

/* One running guest, shared by guest_run() and the event loop callbacks. */
struct guest_state {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct guest_stream_ref sref[GUEST_N_STREAMS];

	/* Written by callbacks, read by the caller, all under lock. */
	bool stopped, shutdown, crashed_event, eof[GUEST_N_STREAMS];
	bool closed; /* the outcome was taken: late callbacks change nothing */
	char *tail;  /* ring of GUEST_CONSOLE_TAIL_MAX bytes */
	size_t tail_pos, tail_len;
	int log_fd;
	size_t log_bytes;
	struct console_events *ce;
	struct frame_parser *fp;
	json_object *frames;
	int n_frames, payload_errors, dropped_frames;
	size_t frame_bytes, frame_values; /* kept so far, against the limits above */
	int over_budget;		  /* frames refused for the bytes or values per run */
	char payload_error[256];
	bool hello, summary, saw_linux;
	double t_hello;
	/* Liveness (docs/kernel-bugs.md): the last time any byte arrived on
	 * either port, and whether the agent sends heartbeat frames (its hello
	 * said so, or one arrived). */
	double t_activity;
	bool heartbeat;
	char line_start[16]; /* first bytes of the current console line, for "Linux version" */
	size_t line_start_len;

	/* guest_ports.c (a local daemon): each port's listening socket until
	 * QEMU has connected, then the connection and its event-loop watch.
	 * -1 when unused; the fds close in guest_state_free, after the
	 * barrier, so the loop never polls a closed (or reused) number. */
	int listen_fd[GUEST_N_STREAMS], port_fd[GUEST_N_STREAMS], port_watch[GUEST_N_STREAMS];
};

/* guest_host.c */

enum guest_domain_state {
	GUEST_DOMAIN_ACTIVE,
	GUEST_DOMAIN_INACTIVE,
	GUEST_DOMAIN_GONE,	  /* libvirt no longer knows it (a transient domain that ended) */
	GUEST_DOMAIN_UNREACHABLE, /* the connection is dead: the daemon stopped answering */
	GUEST_DOMAIN_UNKNOWN,	  /* another error; ask again */
};
/* What libvirt says of dom, in one call (two on an error). */
enum guest_domain_state guest_domain_state(virDomainPtr dom);

/* The message of this thread's last libvirt error (borrowed, never NULL). */
const char *guest_virt_error(void);
/* true when the event loop ran a zero timeout within timeout_s: every
 * callback in flight before the call has then returned. */
bool guest_event_loop_barrier(double timeout_s);

/* guest_reaper.c */

#define GUEST_REAPER_GRACE_S   0.5  /* after libvirt forgets the domain, before its streams end */
#define GUEST_REAPER_TIMEOUT_S 20.0 /* after parking, the streams end whatever libvirt says */

struct guest_reaper_stats {
	int parked;  /* runs handed over */
	int pending; /* parked - ended: still waiting for their domain to go */
	int ended;   /* streams ended */
	int forced;  /* ... because the timeout passed with the domain still known */
	int dead;    /* ... because the connection died */
};

/* A reaper with its thread: streams end grace_s after libvirt stops knowing
 * their domain, or timeout_s after parking, or at once on a dead connection.
 * NULL when the thread cannot start. */
struct guest_reaper *guest_reaper_new(double grace_s, double timeout_s);
/* Takes over a finished run's streams (entries may be NULL; all are set to
 * NULL) with eof[i] saying whether stream i reached its end (finish, else
 * abort). Removes their callbacks before it returns; takes its own
 * reference on dom. */
void guest_reaper_park(struct guest_reaper *g, virDomainPtr dom, virStreamPtr st[GUEST_N_STREAMS],
		       const bool eof[GUEST_N_STREAMS]);
struct guest_reaper_stats guest_reaper_stats(struct guest_reaper *g);
/* Waits until every parked run's streams have ended (bounded by the
 * timeout), then stops the thread. NULL is fine. */
void guest_reaper_free(struct guest_reaper *g);

/* guest_streams.c */

/* n bytes that arrived on port which (GUEST_STREAM_CONSOLE: the console
 * tail, log and scanner; else the frame parser), or with n <= 0 that port's
 * end. Takes s->lock; wakes guest_run(). */
void guest_state_feed(struct guest_state *s, int which, const char *buf, ssize_t n);

/* A new state whose console goes to log_path (NULL: no log). NULL on
 * failure, with err filled. */
struct guest_state *guest_state_new(const char *log_path, struct sl_error *err);
/* NULL is fine. Only once no callback can touch s any more. */
void guest_state_free(struct guest_state *s);
/* Moves complete frames from the parser into s->frames. Under s->lock. */
void guest_state_pop_frames(struct guest_state *s);
/* A frame's payload parsed as strict JSON (UTF-8, at most
 * GUEST_PAYLOAD_DEPTH deep, nothing after the value): a new reference, or
 * NULL with a sentence in msg naming the frame, the byte offset and why. */
json_object *guest_payload_parse(const struct frame *f, int index, char *msg, size_t msglen);
/* Opens the guest's serial0 (GUEST_STREAM_CONSOLE) or serial1 (results)
 * console as a non-blocking stream read by the event loop into s. */
int guest_stream_open(virConnectPtr conn, virDomainPtr dom, struct guest_state *s, int which,
		      virStreamPtr *ret, struct sl_error *err);
/* Removes the stream's callback, ends it (finish after eof, else abort)
 * and frees it. NULL is fine. */
void guest_stream_close(virStreamPtr st, bool eof);
/* The domain lifecycle callback; opaque is the struct guest_state. */
int guest_lifecycle_cb(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque);

/* guest_ports.c */

#define GUEST_PORT_ACCEPT_S 10.0 /* after the create returns, for QEMU's connections */

/* Listens on dir/serial0.sock and dir/serial1.sock (mode 0600: libvirt's
 * DAC driver hands them to QEMU's user) and sets paths[i] (malloc'd). */
int guest_ports_listen(struct guest_state *s, const char *dir, char *paths[GUEST_N_STREAMS],
		       struct sl_error *err);
/* Takes QEMU's connection on each port (it connected while the domain was
 * created, before its first instruction), waiting at most timeout_s, and
 * watches it on the event loop. */
int guest_ports_attach(struct guest_state *s, const char *name, double timeout_s,
		       struct sl_error *err);
/* Removes the watches; the fds close with the state, after the barrier. */
void guest_ports_detach(struct guest_state *s);

/* guest.c */

/* Fills o from the finished run and closes s to late callbacks. Under
 * s->lock. silent_s > 0: the run was ended by the silence rule after that
 * many seconds without output (status hung whatever the console says). */
void guest_outcome_fill(struct guest_state *s, struct guest_outcome *o, bool hung, int deadline_s,
			bool probe, int silent_s);
