#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "run/placement.h"
#include "util/json_get.h"

/* Process-wide slots, so the service's workers share one build and the
 * guest capacity between jobs. Sized by the first runner_config seen. */
struct slots {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int free;
	bool init;
};
static struct slots slots[] = {
    [PLACEMENT_SLOT_BUILD] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false},
    [PLACEMENT_SLOT_GUEST] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false},
};

void placement_slot_acquire(enum placement_slot which, int size)
{
	struct slots *s = &slots[which];
	pthread_mutex_lock(&s->lock);
	if (!s->init) {
		s->free = size > 0 ? size : 1;
		s->init = true;
	}
	while (s->free <= 0)
		pthread_cond_wait(&s->cond, &s->lock);
	s->free--;
	pthread_mutex_unlock(&s->lock);
}

void placement_slot_release(enum placement_slot which)
{
	struct slots *s = &slots[which];
	pthread_mutex_lock(&s->lock);
	s->free++;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

int placement_order(const struct job *job, struct run_key **ret_keys, size_t *ret_n)
{
	return placement_order_rounds(job, 0, job->repeat_min, ret_keys, ret_n);
}

int placement_order_rounds(const struct job *job, int from, int to, struct run_key **ret_keys,
			   size_t *ret_n)
{
	int repeat = to > from ? to - from : 0;
	int n = job->n_variants < 256 ? (int)job->n_variants : 256;
	size_t total = repeat > 0 ? (size_t)repeat * (size_t)n : 0, k = 0;
	struct run_key *keys = total ? calloc(total, sizeof(*keys)) : NULL;
	if (total && !keys)
		return -ENOMEM;
	for (int rep = from; rep < to; rep++)
		for (int i = 0; i < n; i++) {
			int idx = rep % 2 == 0 ? i : n - 1 - i;
			/* Variant names are checked against the job schema;
			 * one that makes no key has no run. */
			if (run_key_init(job->variants[idx].name, rep, &keys[k]) == 0)
				k++;
		}
	*ret_keys = keys;
	*ret_n = k;
	return 0;
}

int placement_pool_new(json_object *hypervisors, const char *libvirt_uri, struct hostpool **ret,
		       struct sl_error *err)
{
	_cleanup_json_ json_object *one = NULL;
	if (!hypervisors) {
		/* One host, bounded only by the guest slots. */
		one = json_object_new_array();
		json_object *h = json_object_new_object();
		json_object_object_add(
		    h, "uri",
		    json_object_new_string(libvirt_uri ? libvirt_uri : HOSTPOOL_LOCAL_URI));
		json_object_object_add(h, "slots", json_object_new_int(HOSTPOOL_MAX_SLOTS));
		json_object_array_add(one, h);
		hypervisors = one;
	}
	return hostpool_from_json(hypervisors, "hypervisors", ret, err);
}

int placement_probe_host(const struct hostpool *pool)
{
	for (size_t i = 0; i < hostpool_size(pool); i++)
		if (hostpool_is_local(pool, i))
			return (int)i;
	return -1;
}

int placement_begin(struct placement *p, struct hostpool *pool, const struct job *job,
		    const char *accel, struct sl_error *err)
{
	*p = (struct placement){.pool = pool, .job_host = -1};
	p->spread = job->placement == JOB_PLACEMENT_SPREAD;
	for (size_t i = 0; i < job->n_host_labels && i < HOSTPOOL_MAX_LABELS; i++)
		p->labels[i] = job->host_labels[i];
	p->cons = (struct hostpool_constraints){.accel = accel, .labels = p->labels};
	if (p->spread)
		return 0;
	int h = hostpool_choose(p->pool, &p->cons, NULL, err);
	if (h < 0)
		return h;
	p->job_host = h;
	hostpool_job_placed(p->pool, (size_t)h, 1);
	return 0;
}

void placement_end(struct placement *p)
{
	if (p->job_host >= 0)
		hostpool_job_placed(p->pool, (size_t)p->job_host, -1);
	p->job_host = -1;
}

json_object *placement_run(struct placement *p, const struct run_key *key,
			   const struct placement_ops *ops, struct sl_error *err)
{
	for (size_t attempt = 0; attempt <= hostpool_size(p->pool); attempt++) {
		int h = p->spread ? hostpool_choose_spread(p->pool, &p->cons, key->repeat,
							   p->excluded, err)
				  : p->job_host;
		if (h < 0)
			return NULL;
		bool dropped = false;
		json_object *run = ops->run(ops->userdata, (size_t)h, &dropped, err);
		if (run || !dropped) {
			/* cppcheck takes &dropped, passed to the callback, as kept
			 * in run; the callback only writes it. */
			// cppcheck-suppress returnDanglingLifetime
			return run;
		}
		if (ops->retrying)
			ops->retrying(ops->userdata, err);
		p->excluded[h] = true;
		p->retries++;
		if (!p->spread) {
			hostpool_job_placed(p->pool, (size_t)h, -1);
			p->job_host = hostpool_choose(p->pool, &p->cons, p->excluded, err);
			if (p->job_host < 0)
				return NULL;
			hostpool_job_placed(p->pool, (size_t)p->job_host, 1);
		}
	}
	char buf[RUN_KEY_STRLEN];
	error_set(err, ERR_INFRA, EHOSTUNREACH, "Run '%s' found no hypervisor host that stayed up.",
		  run_key_format(key, buf));
	return NULL;
}

void placement_describe(const struct placement *p, json_object *result)
{
	json_object *out = json_object_new_object(), *hosts = json_object_new_array();
	json_object_object_foreach(json_member(result, "variants"), vname, vo)
	{
		(void)vname;
		json_object *runs = json_member(vo, "runs");
		for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
			const char *h = json_object_get_string(
			    json_member(json_object_array_get_idx(runs, i), "host"));
			bool seen = false;
			for (size_t k = 0; h && k < json_object_array_length(hosts); k++)
				seen |= strcmp(h, json_object_get_string(
						      json_object_array_get_idx(hosts, k))) == 0;
			if (h && !seen)
				json_object_array_add(hosts, json_object_new_string(h));
		}
	}
	json_object_object_add(out, "mode",
			       json_object_new_string(p->spread ? "spread" : "together"));
	json_object_object_add(out, "crossed_hosts",
			       json_object_new_boolean(json_object_array_length(hosts) > 1));
	json_object_object_add(out, "hosts", hosts);
	json_object_object_add(out, "retried_runs", json_object_new_int(p->retries));
	json_object_object_add(result, "placement", out);
}
