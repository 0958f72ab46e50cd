/* Retention on a timer: a thread that runs the store's retention pass
 * (store_purge_finished, docs/service.md "Quotas, budgets and retention")
 * every retention.interval_s seconds, so finished jobs past their age go
 * on an idle service too, not only when a job is submitted or the service
 * starts. */
#pragma once

#include "server/config.h"
#include "server/store.h"
#include "util/error.h"

struct retention_timer;

/* Starts the thread; its first pass is one interval from now (`schedlab
 * serve` runs one at start itself). config and store are borrowed and must
 * outlive the timer; log (NULL: stderr) gets one line per pass that purged
 * something or failed. interval_s 0 in the config: no thread, *ret NULL. */
int retention_timer_start(const struct service_config *config, struct store *store,
			  void (*log)(const char *line), struct retention_timer **ret,
			  struct sl_error *err);
/* Stops the thread (a pass under way finishes its batch) and frees. NULL is
 * a no-op. */
void retention_timer_free(struct retention_timer *t);
