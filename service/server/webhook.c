/* Change-point alerts: the background thread, the payload, the signature
 * and the libcurl POST (see webhook.h). */
#include <curl/curl.h>
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/webhook.h"
#include "server/change_point_bisect.h"
#include "server/counters.h"
#include "report/trend.h"
#include "server/store_trend.h"
#include "util/version.h"
#include "util/json_get.h"

#define TREND_WINDOW_S (3650L * 86400) /* the whole store, as the trend's maximum */

struct webhooks {
	struct webhook_opts opts;
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* held while a bisection starts, so webhooks_set_queue waits for it:
	 * opts.queue is never used once the queue is being freed */
	pthread_mutex_t queue_lock;
	bool stop;
	char (*ids)[STORE_ID_LEN + 1]; /* ring of ended jobs */
	size_t head, n;
};

static void wlog(const struct webhooks *w, const char *fmt, ...) _printf_(2, 3);
static void wlog(const struct webhooks *w, const char *fmt, ...)
{
	char line[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (w->opts.log)
		w->opts.log(line);
	else
		fprintf(stderr, "schedlab: %s\n", line);
}

json_object *webhook_payload(json_object *cp)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "event", json_object_new_string("change_point"));
	json_object_object_foreach(cp, key, val)
	{
		json_object_object_add(o, key, json_object_get(val));
	}
	json_object *before = NULL, *after = NULL;
	json_object_object_get_ex(cp, "last_night_before", &before);
	json_object_object_get_ex(cp, "first_night_after", &after);
	json_object *links = json_object_new_object();
	json_object_object_add(links, "trend", json_object_new_string("/v1/trend"));
	json_object *jobs = json_object_new_array();
	char buf[96];
	json_object *nights[2] = {before, after};
	for (size_t i = 0; i < 2; i++) {
		const char *id = json_member_string_or(nights[i], "job_id", "");
		if (!store_id_valid(id))
			continue;
		snprintf(buf, sizeof(buf), "/v1/jobs/%s", id);
		json_object_array_add(jobs, json_object_new_string(buf));
	}
	json_object_object_add(links, "jobs", jobs);
	json_object_object_add(o, "links", links);
	return o;
}

void webhook_signature(const char *secret, const char *body, size_t len,
		       char ret[WEBHOOK_SIGNATURE_MAX])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	HMAC(EVP_sha256(), secret, (int)strlen(secret), (const unsigned char *)body, len, mac, &n);
	int k = snprintf(ret, WEBHOOK_SIGNATURE_MAX, "sha256=");
	for (unsigned i = 0; i < n && k + 2 < WEBHOOK_SIGNATURE_MAX; i++)
		k += snprintf(ret + k, (size_t)(WEBHOOK_SIGNATURE_MAX - k), "%02x", mac[i]);
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
	(void)p;
	(void)ud;
	return size * n;
}

/* One POST; 0 for a 2xx answer, else -1 with why in reason. */
static int post_once(const struct service_webhook *hook, const char *key, const char *body,
		     long *ret_status, char *reason, size_t reason_size)
{
	CURL *c = curl_easy_init();
	if (!c) {
		snprintf(reason, reason_size, "libcurl could not start");
		return -1;
	}
	struct curl_slist *h = NULL;
	char line[160];
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "X-Schedlab-Event: change_point");
	snprintf(line, sizeof(line), "X-Schedlab-Delivery: %s", key);
	h = curl_slist_append(h, line);
	if (hook->secret) {
		char sig[WEBHOOK_SIGNATURE_MAX];
		webhook_signature(hook->secret, body, strlen(body), sig);
		snprintf(line, sizeof(line), "X-Schedlab-Signature-256: %s", sig);
		h = curl_slist_append(h, line);
	}
	curl_easy_setopt(c, CURLOPT_URL, hook->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(c, CURLOPT_USERAGENT, "schedlab/" SCHEDLAB_VERSION);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)WEBHOOK_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)WEBHOOK_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	*ret_status = status;
	if (rc != CURLE_OK) {
		snprintf(reason, reason_size, "%s", curl_easy_strerror(rc));
		return -1;
	}
	if (status < 200 || status > 299) {
		snprintf(reason, reason_size, "HTTP %ld", status);
		return -1;
	}
	return 0;
}

/* Waits seconds unless the service stops; false when it stops. */
static bool backoff(struct webhooks *w, int seconds)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += seconds;
	pthread_mutex_lock(&w->lock);
	while (!w->stop && pthread_cond_timedwait(&w->cond, &w->lock, &ts) == 0)
		;
	bool go = !w->stop;
	pthread_mutex_unlock(&w->lock);
	return go;
}

static void deliver(struct webhooks *w, const struct service_webhook *hook, const char *key,
		    const char *body)
{
	int wait = w->opts.backoff_s > 0 ? w->opts.backoff_s : WEBHOOK_BACKOFF_S;
	for (int attempt = 1; attempt <= WEBHOOK_ATTEMPTS; attempt++) {
		char reason[256] = "";
		long status = 0;
		int r = post_once(hook, key, body, &status, reason, sizeof(reason));
		struct sl_error err = {0};
		if (store_webhook_attempt(w->opts.store, key, hook->url, attempt, status,
					  r < 0 ? reason : NULL, r == 0, &err) < 0)
			wlog(w, "webhook: %s", err.message);
		if (r == 0) {
			wlog(w, "webhook: change point %.12s delivered (attempt %d)", key, attempt);
			return;
		}
		wlog(w, "webhook: change point %.12s, attempt %d of %d failed: %s", key, attempt,
		     WEBHOOK_ATTEMPTS, reason);
		if (attempt == WEBHOOK_ATTEMPTS || !backoff(w, wait))
			break;
		wait *= 2;
	}
	counters_webhook_gave_up(store_counters(w->opts.store), 1);
}

static void link_bisection(json_object *payload, const char *job_id)
{
	json_object *links = NULL;
	char buf[96];
	snprintf(buf, sizeof(buf), "/v1/jobs/%s/report", job_id);
	if (json_object_object_get_ex(payload, "links", &links))
		json_object_object_add(links, "bisection", json_object_new_string(buf));
}

/* Whether the night job's gates (the job's, or its workloads' defaults, as
 * the expanded job lists them) name the change point's workload and metric. */
static bool gated(json_object *expanded, json_object *cp)
{
	json_object *gates = NULL;
	if (!json_object_object_get_ex(expanded, "gates", &gates) ||
	    !json_object_is_type(gates, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(gates); i++) {
		json_object *g = json_object_array_get_idx(gates, i);
		if (strcmp(json_member_string_or(g, "workload", ""),
			   json_member_string_or(cp, "workload", "")) == 0 &&
		    strcmp(json_member_string_or(g, "metric", ""),
			   json_member_string_or(cp, "metric", "")) == 0)
			return true;
	}
	return false;
}

/* The config's "bisect_change_points" (docs/service.md "From change point
 * to culprit"): a change point on one of the night job's gated metrics is
 * bisected, once per commit range: when a bisection of the same series,
 * variant and commits exists (started for another gated metric, this night
 * or an earlier one, and not cancelled) the change point shares it, else
 * one starts. Either way the payload's links name the job. A change point on
 * another metric is alerted only (a request can bisect it); one that cannot
 * be bisected (no commit range, not a git source) is logged. */
static void bisect(struct webhooks *w, const char *owner, json_object *expanded, json_object *cp,
		   json_object *payload)
{
	if (!w->opts.config->bisect_change_points)
		return;
	const char *key = json_member_string_or(cp, "key", "");
	if (!gated(expanded, cp)) {
		wlog(w,
		     "change point %.12s: not bisected by itself: %s %s is not one of the "
		     "night job's gates (POST /v1/change-points/%s/bisect starts one)",
		     key, json_member_string_or(cp, "workload", ""),
		     json_member_string_or(cp, "metric", ""), key);
		return;
	}
	json_object *range = NULL, *variant = NULL;
	json_object_object_get_ex(cp, "commit_range", &range);
	json_object_object_get_ex(cp, "variant", &variant);
	char job[STORE_ID_LEN + 1];
	struct sl_error err = {0};
	_cleanup_json_ json_object *commits = NULL;
	if (range && store_bisection_of_range(
			 w->opts.store, json_member_string_or(cp, "series", ""),
			 variant ? json_object_get_string(variant) : NULL,
			 json_member_string_or(range, "from", ""),
			 json_member_string_or(range, "to", ""), job, &commits, &err) == 0) {
		if (store_bisection_share(w->opts.store, key, job, commits, &err) < 0) {
			wlog(w, "change point %.12s: %s", key, err.message);
			return;
		}
		wlog(w, "change point %.12s: bisected by job %s (the same commits)", key, job);
		link_bisection(payload, job);
		return;
	}
	/* charged to the series' owner (a schedule's "schedule:NAME", or the
	 * token whose jobs form the series) and held by its quotas: a series
	 * cannot start bisections nobody pays for (docs/service.md "Tenancy") */
	struct change_point_bisect_request rq = {
	    .config = w->opts.config,
	    .store = w->opts.store,
	    .owner = owner,
	    .admission = true,
	};
	_cleanup_json_ json_object *answer = NULL;
	int retry = 0, r = -1;
	err = (struct sl_error){0};
	pthread_mutex_lock(&w->queue_lock);
	rq.queue = w->opts.queue;
	if (rq.queue)
		r = change_point_bisect_start(&rq, cp, &answer, &retry, &err);
	pthread_mutex_unlock(&w->queue_lock);
	if (!rq.queue) {
		wlog(w, "change point %.12s: not bisected: the job queue is not running", key);
		return;
	}
	if (r < 0) {
		wlog(w, "change point %.12s: not bisected: %s", key, err.message);
		return;
	}
	const char *id = json_member_string_or(answer, "job_id", "");
	wlog(w, "change point %.12s: bisection job %s started", key, id);
	link_bisection(payload, id);
}

/* Judges the series of job id and alerts on its new change points. */
static void judge(struct webhooks *w, const char *id)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *job = NULL, *cps = NULL, *expanded = NULL;
	if (store_job_get(w->opts.store, id, &job, &err) < 0) {
		wlog(w, "change points after job %s: %s", id, err.message);
		return;
	}
	char bisected[65];
	int r = store_bisection_of_job(w->opts.store, id, bisected, &err);
	if (r == 0)
		return; /* a bisection, not a night of its series */
	if (r != -ENOENT)
		wlog(w, "bisection job %s: %s", id, err.message);
	/* the job's series is its (owner, name): a token's job named after a
	 * schedule is judged in a series of its own (trend_series_id) */
	char owner[80], series[160];
	if (!json_member_string_or(job, "name", "")[0])
		return;
	if (store_job_owner(w->opts.store, id, owner, &err) < 0) {
		wlog(w, "change points after job %s: %s", id, err.message);
		return;
	}
	trend_series_id(owner, json_member_string_or(job, "name", ""), series, sizeof(series));
	if (store_trend_change_points(store_state_dir(w->opts.store), series, TREND_WINDOW_S,
				      time(NULL), &cps, &err) < 0) {
		wlog(w, "change points of '%.64s': %s", series, err.message);
		return;
	}
	if (store_job_expanded(w->opts.store, id, &expanded, &err) < 0)
		expanded = NULL; /* no gates known: nothing is bisected by itself */
	for (size_t i = 0; i < json_object_array_length(cps); i++) {
		json_object *cp = json_object_array_get_idx(cps, i);
		const char *key =
		    json_member_string_or(cp, "key", ""); /* trend_change_point_key's */
		bool is_new = false;
		if (!key[0])
			continue;
		_cleanup_json_ json_object *payload = webhook_payload(cp);
		if (store_change_point_claim(w->opts.store, key, series, payload, &is_new, &err) <
		    0) {
			wlog(w, "change points of '%.64s': %s", series, err.message);
			return;
		}
		if (!is_new)
			continue;
		wlog(w, "series '%.64s': new change point %.12s (%s %s)", series, key,
		     json_member_string_or(cp, "workload", ""),
		     json_member_string_or(cp, "metric", ""));
		bisect(w, owner, expanded, cp, payload);
		const char *body = json_object_to_json_string_ext(
		    payload, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		for (size_t k = 0; k < w->opts.config->n_webhooks; k++)
			deliver(w, &w->opts.config->webhooks[k], key, body);
	}
}

static void *thread_main(void *arg)
{
	struct webhooks *w = arg;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->stop && w->n == 0)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop)
			break;
		char id[STORE_ID_LEN + 1];
		memcpy(id, w->ids[w->head], sizeof(id));
		w->head = (w->head + 1) % WEBHOOK_QUEUE_MAX;
		w->n--;
		pthread_mutex_unlock(&w->lock);
		judge(w, id);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int webhooks_start(const struct webhook_opts *opts, struct webhooks **ret, struct sl_error *err)
{
	struct webhooks *w = calloc(1, sizeof(*w));
	if (!w || !(w->ids = calloc(WEBHOOK_QUEUE_MAX, sizeof(*w->ids)))) {
		free(w);
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	w->opts = *opts;
	curl_global_init(CURL_GLOBAL_DEFAULT); /* before any thread uses libcurl */
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->queue_lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (pthread_create(&w->thread, NULL, thread_main, w) != 0) {
		webhooks_free(w);
		return error_set(err, ERR_INTERNAL, EAGAIN, "Cannot start the webhooks' thread.");
	}
	w->running = true;
	*ret = w;
	return 0;
}

void webhooks_free(struct webhooks *w)
{
	if (!w)
		return;
	if (w->running) {
		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
	}
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->queue_lock);
	pthread_cond_destroy(&w->cond);
	free(w->ids);
	free(w);
}

void webhooks_set_queue(struct webhooks *w, struct queue *queue)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->queue_lock);
	w->opts.queue = queue;
	pthread_mutex_unlock(&w->queue_lock);
}

void webhooks_job_ended(void *cls, const char *job_id)
{
	struct webhooks *w = cls;
	if (!w || !store_id_valid(job_id))
		return;
	pthread_mutex_lock(&w->lock);
	bool full = w->n == WEBHOOK_QUEUE_MAX;
	if (!full) {
		snprintf(w->ids[(w->head + w->n) % WEBHOOK_QUEUE_MAX], STORE_ID_LEN + 1, "%s",
			 job_id);
		w->n++;
		pthread_cond_signal(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	if (full)
		wlog(w, "change points after job %s: not judged, %d jobs already wait", job_id,
		     WEBHOOK_QUEUE_MAX);
}
