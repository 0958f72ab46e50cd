/* What job.c (validation and expansion of the JSON spec), job_struct.c (the
 * typed job built from the expanded spec) and the other parts of the spec's
 * expansion in service/job/ share: the reading of a local file a spec
 * names (members are read through util/json_get.h). Not for use outside
 * service/job/. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "util/error.h"
#include "util/json_get.h"

/* Reads the local file rel (relative to base_dir, "." when NULL; absolute
 * as it is) that a CLI job names by path into *ret (malloc'd, NUL-ended) and
 * *ret_len: at most max bytes, no NUL byte. The service (!local_files)
 * refuses paths: "send the file's content <how>". Every error names where,
 * is ERR_TOO_LARGE for a file over max and ERR_INVALID otherwise (a file
 * that cannot be read is the spec's error). */
int job_read_local_file(const char *rel, bool local_files, const char *base_dir, size_t max,
			const char *where, const char *how, char **ret, size_t *ret_len,
			struct sl_error *err);

/* The default seconds a workload may run (job.schema.json "timeout_s"). */
#define JOB_DEFAULT_TIMEOUT_S 120
/* A run's deadline: the boot allowance plus each workload's timeout and
 * slack (job_run_deadline_s, job_workloads.c). */
#define BOOT_ALLOWANCE_TCG_S 90
#define BOOT_ALLOWANCE_KVM_S 45
#define WORKLOAD_SLACK_S     5

/* A name that is safe as a file name component: the schema's pattern,
 * checked again because patch and workload names become file names. */
bool job_safe_name(const char *s);

/* job_workloads.c: the workloads with their defaults (names, args,
 * timeout, uid), checked (argument rules, unique names, loads) into *ret;
 * *ret_seconds their summed timeouts. */
int job_expand_workloads(json_object *in, json_object **ret, int *ret_seconds,
			 struct sl_error *err);
/* The gates as run (the job's own, checked against the workloads, or the
 * workloads' defaults); see job_workloads.c. */
int job_expand_gates(json_object *full, json_object *workloads, bool defaults, json_object **ret,
		     bool *ret_opted_out, struct sl_error *err);

/* job_guest.c: sockets x cores x threads of a guest.topology object (each 1
 * when unset), 0 when there is none or one is out of range. */
int job_topology_product(json_object *t);
/* guest.topology and guest.numa checked and copied into guest. */
int job_expand_topology(json_object *t, json_object *guest, struct sl_error *err);
int job_expand_numa(json_object *numa, json_object *guest, struct sl_error *err);
/* The guest shape of guest_in (the job's "guest", may be NULL): vcpus
 * (from the topology when unset) and memory_mb within limits, topology,
 * NUMA nodes and pinning, added to out as "guest"; *ret_vcpus the count. */
struct job_limits;
int job_expand_guest(json_object *guest_in, const struct job_limits *limits, json_object *out,
		     int *ret_vcpus, struct sl_error *err);
