/* Placement: where a job's runs go. The process-wide build and guest slots
 * the service's workers share, the order of a job's runs, the hypervisor
 * host (or, spread, the hosts) they run on, the retry of a run whose host
 * dropped, and result.placement, which says how it went
 * (docs/scale-out.md). */
#pragma once

#include <stdbool.h>
#include "guest/hostpool.h"
#include "job/job.h"
#include "run/run_key.h"
#include "util/error.h"

enum placement_slot {
	PLACEMENT_SLOT_BUILD, /* kernel builds at once in this process */
	PLACEMENT_SLOT_GUEST, /* guests at once on local hosts */
};

/* Takes one slot of the kind, waiting until one is free. The first call for
 * a kind sizes it to size (<= 0: 1); later sizes are ignored. */
void placement_slot_acquire(enum placement_slot which, int size);
/* Gives back a slot taken with placement_slot_acquire(). */
void placement_slot_release(enum placement_slot which);

/* The job's runs in the order they run, into *ret_keys (malloc'd, *ret_n
 * entries; NULL with *ret_n 0 when there are none): repeats interleave the
 * variants (A B A B ...), and the first variant of each round alternates,
 * so drift on the host hits every variant alike. The rounds are those of
 * the first look, job->repeat_min (job->repeat without adaptive repeats).
 * At most 256 variants of job take part. Returns 0 or -ENOMEM. */
int placement_order(const struct job *job, struct run_key **ret_keys, size_t *ret_n);
/* The same for rounds [from, to) only (a round runs every variant once):
 * what adaptive repeats and reruns of noisy runs add to a job. */
int placement_order_rounds(const struct job *job, int from, int to, struct run_key **ret_keys,
			   size_t *ret_n);

/* A new hostpool for one job (the caller frees it): from hypervisors (a
 * "hypervisors" array, borrowed), or when that is NULL the one host
 * libvirt_uri (NULL: HOSTPOOL_LOCAL_URI). */
int placement_pool_new(json_object *hypervisors, const char *libvirt_uri, struct hostpool **ret,
		       struct sl_error *err);

/* The host the accelerator probe boots on: the first local host, or -1
 * when the pool has none (then only TCG runs unless the job names kvm). */
int placement_probe_host(const struct hostpool *pool);

/* One job's placement. Fill it with placement_begin(); hand it to
 * placement_end() when the runs are done. */
struct placement {
	struct hostpool *pool;			     /* borrowed */
	const char *labels[HOSTPOOL_MAX_LABELS + 1]; /* borrowed from the job */
	struct hostpool_constraints cons;
	bool spread;
	int job_host;			   /* the job's host unless spread, or -1 */
	bool excluded[HOSTPOOL_MAX_HOSTS]; /* hosts dropped during this job */
	int retries;			   /* runs retried on another host */
};

/* Reads job->placement (together unless spread) and job->host_labels, and
 * unless spread chooses the job's host among those eligible for accel
 * (borrowed, kept in p->cons) and counts the job on it. pool and job are
 * borrowed and must outlive p. Returns 0 or a negative errno with err set;
 * placement_end() is due either way. */
int placement_begin(struct placement *p, struct hostpool *pool, const struct job *job,
		    const char *accel, struct sl_error *err);
/* Uncounts the job from its host. */
void placement_end(struct placement *p);

struct placement_ops {
	/* Runs the run on host: a new run object, or NULL with err set and
	 * *ret_dropped true when the host dropped (then it is retried). */
	json_object *(*run)(void *userdata, size_t host, bool *ret_dropped, struct sl_error *err);
	/* Told that a run is retried on another host after err; may be NULL. */
	void (*retrying)(void *userdata, const struct sl_error *err);
	void *userdata;
};

/* Runs key on the job's host (or, spread, the round's host) and retries it
 * on another host when its host drops: the run then counts once. Returns
 * the run object (a new reference), or NULL with err set. */
json_object *placement_run(struct placement *p, const struct run_key *key,
			   const struct placement_ops *ops, struct sl_error *err);

/* Adds result.placement: the mode, the hosts that result.variants' runs
 * ran on, whether a comparison crossed hosts (then differences between
 * hosts may be in it), and how many runs were retried. */
void placement_describe(const struct placement *p, json_object *result);
