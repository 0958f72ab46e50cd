/* Admission: whether a submitted job may join the queue, and who may
 * cancel a job. Checked after the spec is expanded and before it is stored:
 *
 *   priority above 0           needs the admin role: 403, field "priority"
 *   the global queue cap       quotas.max_queued_total: 429
 *   per token (not admin)      quotas.max_queued_per_token, quotas.
 *                              guest_seconds_per_day (job_budget_s() of the
 *                              jobs submitted in the last 24 h, those
 *                              cancelled before they started not counted),
 *                              quotas.max_bytes_per_token: 429
 *
 * A 429 names the limit in the error's path and carries the seconds after
 * which the same request can succeed (Retry-After). A job whose budget alone
 * is over the daily quota can never be admitted: 400. */
#pragma once

#include <stdbool.h>
#include "server/config.h"
#include "server/store.h"
#include "util/error.h"

struct admission_request {
	const char *owner; /* the token's name; "" without tokens */
	bool admin;
	int priority;
	long long budget_s;
	long long bytes;
};

/* 0 when the job may be stored and queued; otherwise a negative errno with
 * err set (ERR_FORBIDDEN, ERR_QUOTA, ERR_INVALID) and, for ERR_QUOTA,
 * *ret_retry_after_s. Takes a process-wide lock the caller releases with
 * admission_done() after storing the job (admitted or not), so two
 * submissions cannot both take the last slot. */
int admission_check(const struct service_config *c, struct store *s,
		    const struct admission_request *a, int *ret_retry_after_s,
		    struct sl_error *err);
void admission_done(void);

/* Whether a request (owner, admin) may cancel job id: its owner or an
 * admin; ERR_FORBIDDEN (403) otherwise, ERR_NOT_FOUND for an unknown id. */
int admission_may_cancel(struct store *s, const char *id, const char *owner, bool admin,
			 struct sl_error *err);
