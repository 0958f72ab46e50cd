/* One run's record in a result (docs/contracts.md section 6): who ran it
 * where (run_record_new), what the upload to a remote host cost, how the
 * guest ended, and the workloads' metrics from the agent's frames. Pure:
 * no I/O, unit-tested without guests. Keys come in this order: key, run_id,
 * repeat, status, host, started_at, volumes, accelerator, reason,
 * boot_seconds, duration_seconds, kernel_events, workloads,
 * features_applied, agent_errors, guest_kernel, console_excerpt. */
#pragma once

#include "guest/guest.h"
#include "guest/pinning.h"
#include "guest/volume.h"
#include "job/job.h"
#include "run/run_key.h"
#include "util/error.h"

/* Bytes of the console's tail kept in a failed run's "console_excerpt". */
#define RUN_RECORD_CONSOLE_MAX 4096

/* Bytes of a run id, NUL included. */
#define RUN_RECORD_ID_LEN 17

/* Writes into ret_id a run id for key of the job in job_dir: unguessable
 * enough to be unique across jobs on one host (it hashes the time and the
 * process id too), and safe as a domain name and a file name. */
void run_record_id(const char *job_dir, const char *key, char ret_id[static RUN_RECORD_ID_LEN]);

/* A new run object {key, run_id, repeat, status: "ok", host, started_at}
 * (the caller owns the reference). */
json_object *run_record_new(const struct run_key *key, const char *run_id, const char *host,
			    const char *started_at);

/* Adds "volumes": {kernel, initrd}, each {volume, uploaded, bytes, seconds},
 * what uploading the run's files to a remote host cost. */
void run_record_add_volumes(json_object *run, const struct volume_ref *kernel,
			    const struct volume_ref *initrd);

/* Adds "pinning" (docs/guests.md "Pinning"): {pinned: true, vcpus: [host
 * CPU of each vCPU], emulator: "0", applied: [each vCPU's host CPUs as libvirt
 * reports them after the start, or null]} or {pinned: false, reason}. A
 * pinned run whose applied lists differ from the choice becomes "error". */
void run_record_set_pinning(json_object *run, const struct guest_pinning *pin,
			    json_object *applied);

/* Fills run from the guest's outcome (borrowed): accelerator, status and
 * reason, boot_seconds, duration_seconds, kernel_events, then
 * run_record_fill() from its frames, and for a run that is not ok the last
 * RUN_RECORD_CONSOLE_MAX bytes of the console as "console_excerpt". job
 * (borrowed) gives the noise limit and the workloads. */
void run_record_set_outcome(json_object *run, const struct job *job, const char *accelerator,
			    const struct guest_outcome *out, double duration_s);

/* Fills run (borrowed; already holding "status" from the guest) from frames
 * (array of {"kind": "hello"|"workload"|"summary", "payload": {...}}):
 * "workloads" with per-workload status and metrics, "features_applied", and
 * "agent_errors". An ok run becomes "error" with a "reason" when the summary
 * is missing, the agent reports an error (e.g. a feature the kernel does not
 * know), a workload is missing, failed, timed out, or its output does not
 * parse, or a summary or workload frame is not what the agent sends: every
 * field the record reads is checked first (run/agent_frames.h), and the
 * first that fails is the reason ("The agent's summary frame: payload.errors
 * is an object, not an array."); frames is untrusted in any shape. What is
 * copied from the guest is bounded and valid UTF-8. job (borrowed) is the
 * typed job: its workloads give names, tools and options. */
void run_record_fill(json_object *run, const struct job *job, json_object *frames);

/* Sets run.status = status and run.reason = reason unless the run already
 * failed (the first failure is the one reported). */
void run_record_fail(json_object *run, const char *status, const char *reason);
