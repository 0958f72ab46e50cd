/* Loads: workloads that keep the guest busy while the measured workloads
 * run (plan "load": true, docs/workloads.md "Loads"). The agent starts every
 * load before the first measured workload, restarts one whenever it exits
 * (counting restarts and failures), gives up on one that fails
 * LOAD_MAX_CONSECUTIVE_FAILURES times in a row, and after the last measured
 * workload stops them (SIGTERM to each load's process group, SIGKILL after
 * LOAD_STOP_GRACE_MS) and reaps them. Each load's CPU time over the measured
 * window is recorded so the host can tell a load that loaded from one that
 * crashed or slept. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/plan.h"
#include "agent/run.h"

#define LOAD_MAX_CONSECUTIVE_FAILURES 5
#define LOAD_STOP_GRACE_MS	      2000
/* Completed iterations whose output is kept (the last ones), and how much
 * of each: the host parses each with the tool's own parser. */
#define LOAD_KEPT_ITERATIONS 16
#define LOAD_ITER_OUT_MAX    (16 * 1024)
/* How long the loads run before the first measured workload starts. */
#define LOAD_SETTLE_MS 1000

struct load_iteration {
	char *out; /* stdout and stderr of one completed iteration, NUL-terminated */
	size_t out_len;
	char *json; /* its json_out file, or NULL */
	size_t json_len;
};

struct agent_load {
	const struct plan_workload *w;
	size_t index; /* in the plan's workloads */
	char *cgroup_procs;
	struct run_request req;
	int out_fd; /* memfd: the running iteration's stdout and stderr */
	pid_t pid;  /* the running iteration (its process group), or 0 */
	unsigned starts, completed, failures, consecutive_failures;
	bool gave_up, stopping;
	char error[512];	/* why the load could not load, or "" */
	char last_failure[256]; /* "exit 1", "signal 11", ... */
	int64_t reaped_cpu_us;	/* user + system CPU of finished iterations */
	int target_cpus;	/* the CPUs it should occupy: its cpus, or every online one */
	int64_t cpu_begin_us, cpu_end_us;
	long long window_begin_ms, window_end_ms;
	struct load_iteration kept[LOAD_KEPT_ITERATIONS];
	size_t n_kept, next_kept;
};

struct agent_loads {
	struct agent_load *v;
	size_t n;
	int ncpus;	  /* online CPUs: the target of a load not pinned */
	const char *proc; /* "/proc" (tests may point it elsewhere) */
};

/* Starts every workload of plan with "load": true. cgroup_procs[i] is the
 * cgroup.procs file workload i joins, or NULL. Installs the reap hook
 * (agent_run_set_reap_hook) that restarts them. Returns 0 or -ENOMEM; a
 * load that cannot start is recorded in its error. */
int agent_loads_start(struct agent_loads *L, const struct agent_plan *plan,
		      char *const *cgroup_procs, int ncpus);

/* Waits ms while reaping (loads restart; other children count in
 * *orphans). */
void agent_loads_wait(struct agent_loads *L, int sigfd, long long ms, unsigned *orphans);

/* The measured window: each load's CPU time at its start and end. */
void agent_loads_window_begin(struct agent_loads *L);
void agent_loads_window_end(struct agent_loads *L);

/* Stops and reaps every load (SIGTERM, SIGKILL after LOAD_STOP_GRACE_MS)
 * and removes the reap hook. */
void agent_loads_stop(struct agent_loads *L, int sigfd, unsigned *orphans);

/* The "load" object of a load's workload frame (docs/contracts.md 2). */
json_object *agent_load_json(const struct agent_load *l);

/* CPU time (us) of the live processes of process group pgid, each with
 * the CPU of the children it reaped, read from proc (/proc/<pid>/stat). */
int64_t agent_load_group_cpu_us(const char *proc, pid_t pgid);

void agent_loads_free(struct agent_loads *L);
