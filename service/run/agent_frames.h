/* The agent's frames as a run record reads them (docs/contracts.md section
 * 2): every payload the record reads is checked first, in one place, with
 * util/json_get.h, for the type and the bound of each field the host uses,
 * so that nothing after it meets a type it does not expect (json-c aborts on
 * an array call on a non-array) or copies an unbounded value. Fields the
 * host does not read are not checked: the agent may add some. */
#pragma once

#include <stddef.h>
#include <json-c/json.h>

#include "util/error.h"

#define AGENT_ERRORS_MAX      256	 /* items in each of the summary's errors lists */
#define AGENT_ERROR_MAX_BYTES 1024	 /* bytes of one error the agent reports */
#define AGENT_ERRORS_KEPT     32	 /* errors copied into a run's agent_errors */
#define AGENT_NAME_MAX_BYTES  64	 /* a feature, a state, an ops name */
#define AGENT_UNAME_MAX_BYTES 512	 /* the agent's uname buffer */
#define AGENT_TEXT_MAX_BYTES  (1u << 20) /* stdout, stderr, json_file, a snapshot */
#define AGENT_LIST_MAX	      64	 /* features applied, sched domains, NUMA nodes */

/* The payloads of frames (borrowed; an array of {"kind", "payload"} as the
 * guest stage builds it, or anything): the first valid summary, and per
 * workload 0..n_workloads-1 the first valid workload frame whose index it
 * is. */
struct agent_frames {
	json_object *summary;
	json_object **workloads; /* n_workloads entries, NULL where none came */
	size_t n_workloads;
};

/* Fills af from frames, checking each summary and workload payload (its
 * position in frames names it). Returns 0, or the first violation as a
 * negative errno with err filled ("The agent's summary frame: payload.errors
 * is an object, not an array."); af is filled in either case and holds no
 * frame that failed. Free with agent_frames_done(). */
int agent_frames_read(json_object *frames, size_t n_workloads, struct agent_frames *af,
		      struct sl_error *err);

/* Frees what agent_frames_read allocated (not the payloads, which are
 * borrowed). */
void agent_frames_done(struct agent_frames *af);

/* Checks one summary payload (what names it in messages). 0 or -EINVAL. */
int agent_summary_check(json_object *payload, const char *what, struct sl_error *err);

/* Checks one workload payload, whose index must be below n_workloads. */
int agent_workload_check(json_object *payload, size_t n_workloads, const char *what,
			 struct sl_error *err);
