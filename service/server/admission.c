/* Admission control for submissions and cancellations; see admission.h.
 * The numbers come from the config's "quotas" block; their defaults and
 * reasons are in docs/service.md. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "server/admission.h"

#define DAY_S 86400

static pthread_mutex_t admission_lock = PTHREAD_MUTEX_INITIALIZER;

/* A 429 naming limit; the message ends with the Retry-After seconds. */
static int quota_error(struct sl_error *err, const char *limit, int retry, int *ret_retry,
		       const char *fmt, ...) _printf_(5, 6);
static int quota_error(struct sl_error *err, const char *limit, int retry, int *ret_retry,
		       const char *fmt, ...)
{
	char msg[sizeof(err->message) - 32];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	*ret_retry = retry < 1 ? 1 : retry;
	return error_set_path(err, ERR_QUOTA, limit, "%s Retry in %d s.", msg, *ret_retry);
}

int admission_check(const struct service_config *c, struct store *s,
		    const struct admission_request *a, int *ret_retry_after_s, struct sl_error *err)
{
	pthread_mutex_lock(&admission_lock);
	const struct service_quotas *q = &c->quotas;
	if (a->priority > 0 && !a->admin)
		return error_set_path(err, ERR_FORBIDDEN, "priority",
				      "A priority above 0 (%d) needs a token with the 'admin' "
				      "role.",
				      a->priority);
	long long now = (long long)time(NULL), since = now - DAY_S;
	struct store_usage u = {0};
	int r = store_usage(s, a->owner, since, &u, err);
	if (r < 0)
		return r;
	if (q->max_queued_total > 0 && u.queued_total >= q->max_queued_total)
		return quota_error(err, "quotas.max_queued_total", q->retry_after_s,
				   ret_retry_after_s, "The queue holds %d jobs, its limit is %d.",
				   u.queued_total, q->max_queued_total);
	if (a->admin)
		return 0;
	if (q->max_queued_per_token > 0 && u.queued_owner >= q->max_queued_per_token)
		return quota_error(err, "quotas.max_queued_per_token", q->retry_after_s,
				   ret_retry_after_s,
				   "This token has %d queued jobs, its limit is %d.",
				   u.queued_owner, q->max_queued_per_token);
	if (q->guest_seconds_per_day > 0) {
		long long limit = q->guest_seconds_per_day;
		if (a->budget_s > limit)
			return error_set_path(err, ERR_INVALID, "quotas.guest_seconds_per_day",
					      "The job is budgeted at %lld s, more than this "
					      "token's daily quota of %lld s on its own.",
					      a->budget_s, limit);
		if (u.budget_owner + a->budget_s > limit) {
			long long wait = 0;
			if ((r = store_budget_frees_in(s, a->owner, since, limit - a->budget_s,
						       &wait, err)) < 0)
				return r;
			return quota_error(
			    err, "quotas.guest_seconds_per_day", (int)(wait > DAY_S ? DAY_S : wait),
			    ret_retry_after_s,
			    "This token's jobs of the last 24 h are budgeted at %lld "
			    "s, its daily quota is %lld s; this one (%lld s) would "
			    "pass it.",
			    u.budget_owner, limit, a->budget_s);
		}
	}
	if (q->max_bytes_per_token > 0 && u.bytes_owner + a->bytes > q->max_bytes_per_token)
		return quota_error(err, "quotas.max_bytes_per_token", q->retry_after_s,
				   ret_retry_after_s,
				   "This token's stored jobs take %lld bytes, its quota is %lld; "
				   "old jobs free theirs once retention removes them.",
				   u.bytes_owner, q->max_bytes_per_token);
	return 0;
}

void admission_done(void)
{
	pthread_mutex_unlock(&admission_lock);
}

int admission_may_cancel(struct store *s, const char *id, const char *owner, bool admin,
			 struct sl_error *err)
{
	char job_owner[80];
	int r = store_job_owner(s, id, job_owner, err);
	if (r < 0 || admin)
		return r;
	if (strcmp(job_owner, owner ? owner : "") != 0)
		return error_set_path(err, ERR_FORBIDDEN, "id",
				      "Job '%s' was submitted by another token; only its owner or "
				      "an 'admin' token may cancel it.",
				      id);
	return 0;
}
