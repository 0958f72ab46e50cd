/* Does a libvirt daemon answer? A bounded probe for the service's health
 * endpoint (docs/guests.md, "A daemon that stops answering").
 *
 * A wedged libvirtd accepts connections and never answers them, so a probe
 * is a connect plus one call in a thread of its own, and the caller waits
 * for it at most timeout_s. A probe that never returns is not repeated: at
 * most one thread per daemon can be stuck, and every later check reports
 * "no_answer" with how long that probe has waited. A healthy daemon's last
 * answer is reused for max_age_s, so health checks cost the daemon one
 * connection per max_age_s whatever their rate, and a check waits only for
 * a daemon's very first probe.
 */
#pragma once

#include <json-c/json.h>

#define LIBVIRT_PROBE_MAX_S 5.0	 /* the longest a check waits */
#define LIBVIRT_PROBE_AGE_S 10.0 /* an answer this old is asked again */

struct libvirt_probe;

/* A probe of uri (no connection yet); NULL on out-of-memory. */
struct libvirt_probe *libvirt_probe_new(const char *uri);
/* NULL is fine; a probe still stuck in the daemon frees itself later. */
void libvirt_probe_free(struct libvirt_probe *p);

/* {"uri", "state": "answers" | "no_answer" | "error", "seconds" (the last
 * probe's round trip, or how long the stuck one has waited), "age_seconds",
 * "libvirt_version" (answers) or "message"}; a new reference. */
json_object *libvirt_probe_check(struct libvirt_probe *p, double timeout_s, double max_age_s);
/* The bound a check uses: SCHEDLAB_LIBVIRT_TIMEOUT_S (guest.h), at most
 * LIBVIRT_PROBE_MAX_S. */
double libvirt_probe_timeout_s(void);
