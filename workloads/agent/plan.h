/* The run plan the host puts at /schedlab/plan.json (docs/contracts.md
 * section 1), parsed and validated strictly: it decides what PID 1 writes
 * into the kernel and executes. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PLAN_MAX_BYTES	       (1024 * 1024)
#define PLAN_MAX_FEATURES      64
#define PLAN_MAX_TUNABLES      64
#define PLAN_MAX_SHARES	       256
#define PLAN_MAX_WORKLOADS     64
#define PLAN_MAX_ARGS	       256
#define PLAN_MAX_ARG_LEN       4096
#define PLAN_MAX_NAME	       63
#define PLAN_DEFAULT_TIMEOUT_S 300
#define PLAN_MAX_TIMEOUT_S     86400
#define PLAN_MAX_UID	       2147483646u
#define PLAN_MAX_CPU	       1024 /* CPU_SETSIZE */
#define PLAN_MAX_SCX_ARGS      32
#define PLAN_MAX_SCX_ARG_LEN   256

struct plan_tunable {
	char *name;
	long long value;
};

struct plan_share {
	uid_t uid;
	long long share;
};

struct plan_workload {
	char *name;
	char **argv; /* NULL-terminated; argv[0] is an absolute path */
	size_t argc;
	char *json_out; /* absolute path, or NULL */
	int timeout_s;	/* PLAN_DEFAULT_TIMEOUT_S when the plan gave none */
	uid_t uid;
	/* "load": true: runs beside the measured workloads (agent/load.h);
	 * timeout_s does not apply to it */
	bool load;
	/* "nice": -20..19, set before exec (0: unchanged) */
	int nice;
	/* "cpus": [0, 1]: pinned to these CPUs (sched_setaffinity before exec) */
	bool has_cpus;
	cpu_set_t cpus;
	int n_cpus;
};

struct agent_plan {
	char *run_id; /* "" when absent */
	char **features;
	size_t n_features;
	struct plan_tunable *tunables;
	size_t n_tunables;
	struct plan_share *shares;
	size_t n_shares;
	struct plan_workload *workloads;
	size_t n_workloads;
	/* sched_ext (agent/scx.h): the BPF scheduler's name ("scx_simple") and
	 * its loader's argv (NULL-terminated, argv[0] absolute), or NULL. */
	char *scx_scheduler;
	bool scx_own; /* a user's own scheduler: any ops name is its own (scx.h) */
	char **scx_argv;
	size_t scx_argc;
	/* "schedstat": true: turn kernel.sched_schedstats on and send
	 * /proc/schedstat before and after each workload (docs/workloads.md
	 * "schedstat"). */
	bool schedstat;
};

/* Parses and validates len bytes of plan JSON. On success *ret owns a new plan
 * (free with agent_plan_free). On failure returns -EINVAL (or -E2BIG, -ENOMEM) and
 * writes a whole sentence naming the field into err[errlen]. */
int agent_plan_parse(const char *text, size_t len, struct agent_plan **ret, char *err,
		     size_t errlen);

/* NULL is fine. */
void agent_plan_free(struct agent_plan *p);

/* 1 when name is a valid sched feature token ([A-Z0-9_], 1..63 chars), else 0. */
int agent_plan_feature_name_valid(const char *name);

/* 1 when name may be used as a file name under /sys/kernel/debug/sched/:
 * 1..63 chars, no '/', not "." or "..", no "..", no control characters. */
int agent_plan_tunable_name_valid(const char *name);
