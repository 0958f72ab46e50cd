/* Hypervisor hosts, placement and host health. See hostpool.h. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guest/hostpool.h"
#include "guest/guest.h"
#include "guest/host_cpus.h"
#include "util/time.h"

struct host {
	struct hostpool *pool;
	char *uri;
	int slots, busy;
	char *labels[HOSTPOOL_MAX_LABELS + 1];
	int cores;    /* 0 until connected */
	int jobs;     /* jobs placed here (tie-break) */
	bool up;      /* false after a failed connect or a drop */
	bool dropped; /* set by libvirt's close callback */
	int failures; /* in a row, for the backoff */
	int down_count;
	double retry_at; /* monotonic seconds: no reconnect before */
	struct guest_host *guest;
	virConnectPtr conn;		     /* our own, for storage and health */
	unsigned char pinned[PIN_MAP_BYTES]; /* CPUs our pinned guests' vCPUs hold */
};

/* Connections of hosts that went down while runs still held them: closed
 * only when the pool is freed, so no run's borrowed pointer dangles. */
struct graveyard {
	struct guest_host *guest;
	virConnectPtr conn;
	struct graveyard *next;
};

struct hostpool {
	pthread_mutex_t lock;
	pthread_mutex_t pin_lock; /* choosing host CPUs (hostpool_pin) */
	pthread_cond_t cond;
	size_t n;
	struct host hosts[HOSTPOOL_MAX_HOSTS];
	struct graveyard *dead;
};

bool hostpool_uri_is_local(const char *uri)
{
	/* "driver:///path" has no host part: this machine's daemon. */
	const char *s = uri ? strstr(uri, "://") : NULL;
	return s && s[3] == '/';
}

static bool valid_label(const char *s, size_t len)
{
	if (len == 0 || len >= HOSTPOOL_LABEL_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("_.:=-", c)))
			return false;
	}
	return true;
}

static bool valid_uri(const char *s, size_t len)
{
	if (len == 0 || len >= HOSTPOOL_URI_MAX || !strstr(s, "://"))
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f || s[i] == '"' ||
		    s[i] == '\\')
			return false;
	return true;
}

static int default_slots(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return cores >= 4 ? (int)(cores / 2) : 1;
}

static struct hostpool *pool_alloc(void)
{
	struct hostpool *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->pin_lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	return p;
}

static int host_init(struct hostpool *p, const char *uri, int slots)
{
	struct host *h = &p->hosts[p->n];
	h->pool = p;
	h->uri = strdup(uri);
	if (!h->uri)
		return -ENOMEM;
	h->slots = slots;
	h->up = true;
	p->n++;
	return 0;
}

int hostpool_from_json(json_object *hv, const char *prefix, struct hostpool **ret,
		       struct sl_error *err)
{
	char path[256];
	if (!prefix)
		prefix = "hypervisors";
	struct hostpool *p = pool_alloc();
	if (!p)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int r = 0;
	if (!hv) {
		if (host_init(p, HOSTPOOL_LOCAL_URI, default_slots()) < 0)
			r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		goto out;
	}
	if (!json_object_is_type(hv, json_type_array)) {
		r = error_set_path(err, ERR_INVALID, prefix,
				   "'%s' must be an array of {uri, slots, labels} objects.",
				   prefix);
		goto out;
	}
	size_t len = json_object_array_length(hv);
	if (len < 1 || len > HOSTPOOL_MAX_HOSTS) {
		r = error_set_path(err, ERR_INVALID, prefix,
				   "'%s' lists %zu hosts; it must list 1 to %d.", prefix, len,
				   HOSTPOOL_MAX_HOSTS);
		goto out;
	}
	for (size_t i = 0; i < len; i++) {
		json_object *o = json_object_array_get_idx(hv, i), *v = NULL;
		snprintf(path, sizeof(path), "%s[%zu]", prefix, i);
		if (!json_object_is_type(o, json_type_object)) {
			r = error_set_path(err, ERR_INVALID, path,
					   "Host %s must be an object with a 'uri'.", path);
			goto out;
		}
		json_object_object_foreach(o, key, val)
		{
			(void)val;
			if (strcmp(key, "uri") != 0 && strcmp(key, "slots") != 0 &&
			    strcmp(key, "labels") != 0) {
				snprintf(path, sizeof(path), "%s[%zu].%.64s", prefix, i, key);
				r = error_set_path(err, ERR_INVALID, path,
						   "Host field '%.64s' is unknown; the fields are "
						   "'uri', 'slots' and 'labels'.",
						   key);
				goto out;
			}
		}
		snprintf(path, sizeof(path), "%s[%zu].uri", prefix, i);
		if (!json_object_object_get_ex(o, "uri", &v) ||
		    !json_object_is_type(v, json_type_string) ||
		    !valid_uri(json_object_get_string(v), (size_t)json_object_get_string_len(v))) {
			r = error_set_path(err, ERR_INVALID, path,
					   "Host %s[%zu] needs a 'uri' such as "
					   "'qemu+ssh://user@host/system' (printable, under %d "
					   "characters).",
					   prefix, i, HOSTPOOL_URI_MAX);
			goto out;
		}
		const char *uri = json_object_get_string(v);
		for (size_t j = 0; j < p->n; j++)
			if (strcmp(p->hosts[j].uri, uri) == 0) {
				r = error_set_path(err, ERR_INVALID, path,
						   "Host '%s' is listed twice.", uri);
				goto out;
			}
		int slots = 1;
		if (json_object_object_get_ex(o, "slots", &v)) {
			snprintf(path, sizeof(path), "%s[%zu].slots", prefix, i);
			int64_t s = json_object_get_int64(v);
			if (!json_object_is_type(v, json_type_int) || s < 1 ||
			    s > HOSTPOOL_MAX_SLOTS) {
				r = error_set_path(err, ERR_INVALID, path,
						   "The slots of host '%s' must be an integer from "
						   "1 to %d.",
						   uri, HOSTPOOL_MAX_SLOTS);
				goto out;
			}
			slots = (int)s;
		} else if (hostpool_uri_is_local(uri)) {
			slots = default_slots();
		}
		if (host_init(p, uri, slots) < 0) {
			r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			goto out;
		}
		struct host *h = &p->hosts[p->n - 1];
		if (json_object_object_get_ex(o, "labels", &v)) {
			snprintf(path, sizeof(path), "%s[%zu].labels", prefix, i);
			if (!json_object_is_type(v, json_type_array) ||
			    json_object_array_length(v) > HOSTPOOL_MAX_LABELS) {
				r = error_set_path(err, ERR_INVALID, path,
						   "The labels of host '%s' must be an array of at "
						   "most %d strings.",
						   uri, HOSTPOOL_MAX_LABELS);
				goto out;
			}
			for (size_t k = 0; k < json_object_array_length(v); k++) {
				json_object *l = json_object_array_get_idx(v, k);
				if (!json_object_is_type(l, json_type_string) ||
				    !valid_label(json_object_get_string(l),
						 (size_t)json_object_get_string_len(l))) {
					snprintf(path, sizeof(path), "%s[%zu].labels[%zu]", prefix,
						 i, k);
					r = error_set_path(err, ERR_INVALID, path,
							   "Label %zu of host '%s' must be 1 to %d "
							   "letters, digits "
							   "or '_.:=-'.",
							   k, uri, HOSTPOOL_LABEL_MAX - 1);
					goto out;
				}
				h->labels[k] = strdup(json_object_get_string(l));
				if (!h->labels[k]) {
					r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
					goto out;
				}
			}
		}
	}
out:
	if (r < 0) {
		hostpool_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

static void close_cb(virConnectPtr conn, int reason, void *opaque)
{
	struct host *h = opaque;
	(void)reason;
	pthread_mutex_lock(&h->pool->lock);
	/* A buried connection closing says nothing about the current one. */
	if (h->conn == conn)
		h->dropped = true;
	pthread_cond_broadcast(&h->pool->cond);
	pthread_mutex_unlock(&h->pool->lock);
}

static void host_close(struct host *h)
{
	if (h->conn) {
		virConnectUnregisterCloseCallback(h->conn, close_cb);
		virConnectClose(h->conn);
	}
	guest_host_free(h->guest);
	h->conn = NULL;
	h->guest = NULL;
}

void hostpool_free(struct hostpool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		struct host *h = &p->hosts[i];
		host_close(h);
		free(h->uri);
		for (int k = 0; h->labels[k]; k++)
			free(h->labels[k]);
	}
	while (p->dead) {
		struct graveyard *g = p->dead;
		p->dead = g->next;
		if (g->conn) {
			virConnectUnregisterCloseCallback(g->conn, close_cb);
			virConnectClose(g->conn);
		}
		guest_host_free(g->guest);
		free(g);
	}
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->pin_lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}

size_t hostpool_size(const struct hostpool *p)
{
	return p->n;
}

const char *hostpool_uri(const struct hostpool *p, size_t i)
{
	return i < p->n ? p->hosts[i].uri : NULL;
}

int hostpool_slots(const struct hostpool *p, size_t i)
{
	return i < p->n ? p->hosts[i].slots : 0;
}

bool hostpool_is_local(const struct hostpool *p, size_t i)
{
	return i < p->n && hostpool_uri_is_local(p->hosts[i].uri);
}

static bool has_label(const struct host *h, const char *l)
{
	for (int k = 0; h->labels[k]; k++)
		if (strcmp(h->labels[k], l) == 0)
			return true;
	return false;
}

bool hostpool_eligible(const struct hostpool *p, size_t i, const struct hostpool_constraints *c)
{
	if (i >= p->n)
		return false;
	const struct host *h = &p->hosts[i];
	if (!c)
		return true;
	if (c->accel && strcmp(c->accel, "kvm") == 0 && !has_label(h, "kvm"))
		return false;
	if (c->min_cores > 0 && h->cores > 0 && h->cores < c->min_cores)
		return false;
	for (size_t k = 0; c->labels && c->labels[k]; k++)
		if (!has_label(h, c->labels[k]))
			return false;
	return true;
}

/* Up, or down with its backoff over (worth a reconnect). Lock held. */
static bool host_available(const struct host *h, double now)
{
	return (h->up && !h->dropped) || now >= h->retry_at;
}

static int no_host(struct hostpool *p, const struct hostpool_constraints *c, struct sl_error *err)
{
	char list[1024] = "";
	size_t off = 0;
	for (size_t i = 0; i < p->n && off < sizeof(list) - 1; i++) {
		const struct host *h = &p->hosts[i];
		int w =
		    snprintf(list + off, sizeof(list) - off, "%s'%s' (%s)", i ? ", " : "", h->uri,
			     !hostpool_eligible(p, i, c) ? "does not meet the job's needs"
			     : (h->up && !h->dropped)	 ? "excluded"
							 : "down");
		if (w < 0)
			break;
		off += (size_t)w;
	}
	return error_set(err, ERR_INFRA, EHOSTUNREACH, "No hypervisor host can take the job: %s.",
			 list);
}

int hostpool_choose(struct hostpool *p, const struct hostpool_constraints *c, const bool *exclude,
		    struct sl_error *err)
{
	int best = -1;
	double now = time_monotonic_s();
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n; i++) {
		struct host *h = &p->hosts[i];
		if ((exclude && exclude[i]) || !hostpool_eligible(p, i, c) ||
		    !host_available(h, now))
			continue;
		if (best < 0) {
			best = (int)i;
			continue;
		}
		struct host *b = &p->hosts[best];
		int free_h = h->slots - h->busy, free_b = b->slots - b->busy;
		if (free_h > free_b || (free_h == free_b && h->jobs < b->jobs))
			best = (int)i;
	}
	if (best < 0)
		best = no_host(p, c, err);
	pthread_mutex_unlock(&p->lock);
	return best < 0 ? -EHOSTUNREACH : best;
}

int hostpool_choose_spread(struct hostpool *p, const struct hostpool_constraints *c, int round,
			   const bool *exclude, struct sl_error *err)
{
	int idx[HOSTPOOL_MAX_HOSTS], n = 0, r;
	double now = time_monotonic_s();
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n; i++)
		if (!(exclude && exclude[i]) && hostpool_eligible(p, i, c) &&
		    host_available(&p->hosts[i], now))
			idx[n++] = (int)i;
	if (n == 0) {
		no_host(p, c, err);
		r = -EHOSTUNREACH;
	} else {
		r = idx[(round < 0 ? -round : round) % n];
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

/* Lock held. */
static void host_down_locked(struct host *h)
{
	double backoff = HOSTPOOL_BACKOFF_MIN_S;
	for (int k = 0; k < h->failures && backoff < HOSTPOOL_BACKOFF_MAX_S; k++)
		backoff *= 2;
	if (backoff > HOSTPOOL_BACKOFF_MAX_S)
		backoff = HOSTPOOL_BACKOFF_MAX_S;
	if (h->up)
		h->down_count++;
	h->failures++;
	h->up = false;
	h->retry_at = time_monotonic_s() + backoff;
	pthread_cond_broadcast(&h->pool->cond);
}

/* Moves the host's connections to the graveyard. Lock held. */
static void host_bury_locked(struct host *h)
{
	if (!h->conn && !h->guest)
		return;
	struct graveyard *g = calloc(1, sizeof(*g));
	if (!g)
		return; /* leak rather than free under a running guest */
	g->guest = h->guest;
	g->conn = h->conn;
	g->next = h->pool->dead;
	h->pool->dead = g;
	h->guest = NULL;
	h->conn = NULL;
}

int hostpool_connect(struct hostpool *p, size_t i, struct guest_host **ret_guest,
		     virConnectPtr *ret_conn, struct sl_error *err)
{
	if (i >= p->n)
		return error_set(err, ERR_INTERNAL, EINVAL, "Host %zu is not in the pool.", i);
	struct host *h = &p->hosts[i];
	pthread_mutex_lock(&p->lock);
	if (h->dropped && h->up)
		host_down_locked(h);
	if (h->up && h->guest && h->conn) {
		if (ret_guest)
			*ret_guest = h->guest;
		if (ret_conn)
			*ret_conn = h->conn;
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	if (!h->up && time_monotonic_s() < h->retry_at) {
		pthread_mutex_unlock(&p->lock);
		return error_set(err, ERR_INFRA, EHOSTDOWN,
				 "The hypervisor host '%s' is down; the next reconnect is in "
				 "%.0f s.",
				 h->uri, h->retry_at - time_monotonic_s());
	}
	host_bury_locked(h);
	/* Connecting can take seconds (a first connect probes QEMU): not under
	 * the lock. Two threads may race here; the loser's connection is buried. */
	pthread_mutex_unlock(&p->lock);

	struct guest_host *g = guest_host_open(h->uri, err);
	virConnectPtr c = g ? guest_connect(h->uri, guest_connect_timeout_s(), err) : NULL;
	virNodeInfo info;
	int cores = 0;
	if (c) {
		if (virNodeGetInfo(c, &info) == 0)
			cores = (int)info.cpus;
		if (virConnectRegisterCloseCallback(c, close_cb, h, NULL) < 0)
			virResetLastError();
	}

	pthread_mutex_lock(&p->lock);
	if (!c) {
		host_down_locked(h);
		pthread_mutex_unlock(&p->lock);
		guest_host_free(g);
		return -EHOSTDOWN;
	}
	host_bury_locked(h);
	h->guest = g;
	h->conn = c;
	h->cores = cores;
	h->up = true;
	h->dropped = false;
	h->failures = 0;
	if (ret_guest)
		*ret_guest = g;
	if (ret_conn)
		*ret_conn = c;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int hostpool_acquire(struct hostpool *p, size_t i, int (*cancelled)(void *), void *userdata)
{
	if (i >= p->n)
		return -EINVAL;
	struct host *h = &p->hosts[i];
	int r = 0;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (h->dropped && h->up)
			host_down_locked(h);
		if (!host_available(h, time_monotonic_s())) {
			r = -EHOSTDOWN;
			break;
		}
		if (h->busy < h->slots) {
			h->busy++;
			break;
		}
		if (cancelled && cancelled(userdata)) {
			r = -ECANCELED;
			break;
		}
		struct timespec ts = time_deadline(CLOCK_REALTIME, 0.2);
		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

void hostpool_release(struct hostpool *p, size_t i)
{
	if (i >= p->n)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->hosts[i].busy > 0)
		p->hosts[i].busy--;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void hostpool_pin(struct hostpool *p, size_t i, int vcpus, struct guest_pinning *out)
{
	memset(out, 0, sizeof(*out));
	out->n_vcpus = vcpus;
	if (i >= p->n) {
		snprintf(out->reason, sizeof(out->reason), "no such host");
		return;
	}
	struct host *h = &p->hosts[i];
	pthread_mutex_lock(&p->pin_lock);
	pthread_mutex_lock(&p->lock);
	virConnectPtr c = h->conn;
	pthread_mutex_unlock(&p->lock);
	unsigned char online[PIN_MAP_BYTES], held[PIN_MAP_BYTES];
	struct sl_error e = {0};
	if (!c || host_cpus_read(c, online, held, &e) < 0) {
		snprintf(out->reason, sizeof(out->reason), "%.200s",
			 c ? e.message : "the host is not connected");
	} else {
		for (int b = 0; b < PIN_MAP_BYTES; b++)
			held[b] |= h->pinned[b];
		pinning_choose(online, held, vcpus, out);
		for (int v = 0; out->pinned && v < vcpus; v++)
			pin_map_set(h->pinned, out->vcpu_cpu[v], true);
	}
	pthread_mutex_unlock(&p->pin_lock);
}

void hostpool_unpin(struct hostpool *p, size_t i, const struct guest_pinning *pin)
{
	if (i >= p->n || !pin->pinned)
		return;
	pthread_mutex_lock(&p->pin_lock);
	for (int v = 0; v < pin->n_vcpus; v++)
		pin_map_set(p->hosts[i].pinned, pin->vcpu_cpu[v], false);
	pthread_mutex_unlock(&p->pin_lock);
}

void hostpool_job_placed(struct hostpool *p, size_t i, int delta)
{
	if (i >= p->n)
		return;
	pthread_mutex_lock(&p->lock);
	p->hosts[i].jobs += delta;
	if (p->hosts[i].jobs < 0)
		p->hosts[i].jobs = 0;
	pthread_mutex_unlock(&p->lock);
}

void hostpool_mark_down(struct hostpool *p, size_t i, const char *reason)
{
	(void)reason; /* the caller logs it once; kept for a future state page */
	if (i >= p->n)
		return;
	pthread_mutex_lock(&p->lock);
	host_down_locked(&p->hosts[i]);
	pthread_mutex_unlock(&p->lock);
}

bool hostpool_is_up(struct hostpool *p, size_t i)
{
	if (i >= p->n)
		return false;
	pthread_mutex_lock(&p->lock);
	struct host *h = &p->hosts[i];
	if (h->dropped && h->up)
		host_down_locked(h);
	bool up = h->up;
	if (up && h->conn && virConnectIsAlive(h->conn) == 0) {
		host_down_locked(h);
		up = false;
	}
	pthread_mutex_unlock(&p->lock);
	return up;
}

int hostpool_down_count(struct hostpool *p, size_t i)
{
	if (i >= p->n)
		return 0;
	pthread_mutex_lock(&p->lock);
	int n = p->hosts[i].down_count;
	pthread_mutex_unlock(&p->lock);
	return n;
}

int hostpool_write_metrics(struct hostpool *p, FILE *f)
{
	bool up[HOSTPOOL_MAX_HOSTS] = {0};
	for (size_t i = 0; i < p->n; i++)
		up[i] = hostpool_is_up(p, i);
	pthread_mutex_lock(&p->lock);
	fputs("# HELP schedlab_host_up Whether the hypervisor host's libvirt connection is up.\n"
	      "# TYPE schedlab_host_up gauge\n",
	      f);
	/* URIs are validated printable without '"' or '\\': safe as label values. */
	for (size_t i = 0; i < p->n; i++)
		fprintf(f, "schedlab_host_up{uri=\"%s\"} %d\n", p->hosts[i].uri, up[i] ? 1 : 0);
	fputs("# HELP schedlab_host_slots Guest slots of the hypervisor host by state.\n"
	      "# TYPE schedlab_host_slots gauge\n",
	      f);
	for (size_t i = 0; i < p->n; i++) {
		const struct host *h = &p->hosts[i];
		fprintf(f, "schedlab_host_slots{uri=\"%s\",state=\"busy\"} %d\n", h->uri, h->busy);
		fprintf(f, "schedlab_host_slots{uri=\"%s\",state=\"free\"} %d\n", h->uri,
			h->slots - h->busy);
	}
	pthread_mutex_unlock(&p->lock);
	return ferror(f) ? -EIO : 0;
}

json_object *hostpool_to_json(struct hostpool *p)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < p->n; i++) {
		bool up = hostpool_is_up(p, i);
		pthread_mutex_lock(&p->lock);
		const struct host *h = &p->hosts[i];
		json_object *o = json_object_new_object(), *l = json_object_new_array();
		json_object_object_add(o, "uri", json_object_new_string(h->uri));
		json_object_object_add(o, "slots", json_object_new_int(h->slots));
		json_object_object_add(o, "busy", json_object_new_int(h->busy));
		json_object_object_add(o, "up", json_object_new_boolean(up));
		json_object_object_add(o, "down_count", json_object_new_int(h->down_count));
		for (int k = 0; h->labels[k]; k++)
			json_object_array_add(l, json_object_new_string(h->labels[k]));
		json_object_object_add(o, "labels", l);
		pthread_mutex_unlock(&p->lock);
		json_object_array_add(a, o);
	}
	return a;
}
