/* The hypervisor hosts a runner may place guests on: a list of libvirt URIs,
 * each with a number of guest slots and free-form labels ("kvm",
 * "cpu=epyc"). libvirt is the distributed engine: a host needs libvirt and
 * QEMU, nothing of schedlab (docs/scale-out.md).
 *
 * Configuration (the "hypervisors" key of the runner and service configs):
 *   [{"uri": "qemu:///system", "slots": 1, "labels": ["kvm"]},
 *    {"uri": "qemu+tcp://10.0.0.2/system", "slots": 2}]
 * Missing: one local "qemu:///system" with max(1, cores / 2) slots.
 *
 * Placement: by default every run of one job stays on one host (differences
 * between hosts must not leak into a verdict) and different jobs spread over
 * the hosts: hostpool_choose() picks the eligible host with the most free
 * slots. With "placement": "spread" a job's repeats go round-robin over the
 * eligible hosts, a whole round (every variant once) per host, so each host
 * sees every variant equally often: hostpool_choose_spread().
 *
 * Health: a host whose connection drops is marked down (libvirt's keepalive
 * and close callback, or hostpool_mark_down() by a runner that saw it), its
 * slots stop being handed out, and it is reconnected with exponential
 * backoff (HOSTPOOL_BACKOFF_MIN_S .. HOSTPOOL_BACKOFF_MAX_S).
 *
 * Every function is thread-safe. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "guest/pinning.h"
#include "util/error.h"

#define HOSTPOOL_MAX_HOSTS     64
#define HOSTPOOL_MAX_SLOTS     256
#define HOSTPOOL_MAX_LABELS    16
#define HOSTPOOL_URI_MAX       512
#define HOSTPOOL_LABEL_MAX     64
#define HOSTPOOL_LOCAL_URI     "qemu:///system"
#define HOSTPOOL_BACKOFF_MIN_S 1.0
#define HOSTPOOL_BACKOFF_MAX_S 60.0

struct hostpool;
struct guest_host;
typedef struct _virConnect *virConnectPtr;

/* What a job needs of a host. Any field may be 0/NULL (no constraint). */
struct hostpool_constraints {
	const char *accel;	   /* "kvm" needs a host labelled "kvm"; "tcg" runs anywhere */
	int min_cores;		   /* the host's CPUs (known once connected) */
	const char *const *labels; /* NULL-terminated; the host must carry every one */
};

/* Parses and validates a "hypervisors" array (NULL: the default pool). On
 * success *ret is a new pool (free with hostpool_free) whose hosts are not
 * connected yet. Errors are ERR_INVALID with the JSON path under path_prefix
 * (e.g. "$.hypervisors"). */
int hostpool_from_json(json_object *hypervisors, const char *path_prefix, struct hostpool **ret,
		       struct sl_error *err);
/* Frees the pool and closes its connections. NULL is fine. */
void hostpool_free(struct hostpool *p);

size_t hostpool_size(const struct hostpool *p);
/* The host's URI (borrowed, lives as long as the pool). */
const char *hostpool_uri(const struct hostpool *p, size_t i);
int hostpool_slots(const struct hostpool *p, size_t i);
/* Whether a URI names this machine's own daemon (no upload needed). */
bool hostpool_uri_is_local(const char *uri);
bool hostpool_is_local(const struct hostpool *p, size_t i);

/* Whether host i meets c (labels, accel, cores); ignores up/down and slots. */
bool hostpool_eligible(const struct hostpool *p, size_t i, const struct hostpool_constraints *c);

/* The host for a whole job: among eligible hosts that are up (or whose
 * backoff has passed), the one with the most free slots, then the fewest
 * jobs placed on it, then the first in the list. exclude (may be NULL) is an
 * array of hostpool_size() flags of hosts not to use. Returns the index, or
 * -EHOSTUNREACH when no host qualifies (err says why). */
int hostpool_choose(struct hostpool *p, const struct hostpool_constraints *c, const bool *exclude,
		    struct sl_error *err);
/* The host for repeat number `round` of a spread job: the round-th (mod n)
 * of the eligible hosts that are up, skipping excluded ones. Returns the
 * index or -EHOSTUNREACH. */
int hostpool_choose_spread(struct hostpool *p, const struct hostpool_constraints *c, int round,
			   const bool *exclude, struct sl_error *err);

/* Connects host i if needed and returns its guest connection (borrowed;
 * valid until hostpool_free or the host is marked down and reconnected:
 * hold a slot while using it). A host in backoff fails at once with
 * -EHOSTDOWN; a failed connect marks it down. */
int hostpool_connect(struct hostpool *p, size_t i, struct guest_host **ret_guest,
		     virConnectPtr *ret_conn, struct sl_error *err);

/* Takes a slot on host i, waiting while all are busy. Returns 0, or
 * -EHOSTDOWN when the host is (or goes) down while waiting, or -ECANCELED
 * when cancelled(userdata) turns nonzero (polled every 200 ms; may be NULL). */
int hostpool_acquire(struct hostpool *p, size_t i, int (*cancelled)(void *), void *userdata);
void hostpool_release(struct hostpool *p, size_t i);
/* Chooses host CPUs for a guest of vcpus vCPUs on host i (pinning.h: one
 * each and one or more for the emulator, none held by another pinned
 * schedlab guest there, ours or another process's as libvirt lists them) and
 * holds them until hostpool_unpin. Not pinned, with the reason, when the host
 * has too few free or libvirt cannot say. Call with a slot and a connection
 * (hostpool_acquire, hostpool_connect). Two schedlab processes that choose at
 * the same instant may choose the same CPUs (docs/guests.md "Pinning"). */
void hostpool_pin(struct hostpool *p, size_t i, int vcpus, struct guest_pinning *out);
void hostpool_unpin(struct hostpool *p, size_t i, const struct guest_pinning *pin);
/* Counts a job placed on host i (for hostpool_choose's tie-break); undo
 * with delta -1. */
void hostpool_job_placed(struct hostpool *p, size_t i, int delta);

/* Marks host i down with reason (a sentence), and schedules a reconnect
 * after the backoff, which doubles with each failure in a row. */
void hostpool_mark_down(struct hostpool *p, size_t i, const char *reason);
/* Whether host i is up: connected, and its connection alive. A host that
 * was never connected counts as up until a connect fails. */
bool hostpool_is_up(struct hostpool *p, size_t i);
/* How many times host i went down since the pool was made. */
int hostpool_down_count(struct hostpool *p, size_t i);

/* Writes Prometheus lines for every host:
 *   schedlab_host_up{uri="..."} 0|1
 *   schedlab_host_slots{uri="...",state="busy"} N  (and state="free")
 * with HELP and TYPE headers. Returns 0 or -errno. */
int hostpool_write_metrics(struct hostpool *p, FILE *f);

/* A new reference to the pool's state as JSON: an array of
 * {uri, slots, busy, up, labels, down_count}. */
json_object *hostpool_to_json(struct hostpool *p);
