/* The sched_ext scheduler of a run (docs/sched-ext.md): the agent starts the
 * plan's BPF scheduler loader before the workloads, waits (bounded) until
 * /sys/kernel/sched_ext/state reads "enabled" and root/ops names the
 * scheduler, and after the workloads checks it is still enabled (sched_ext's
 * watchdog ejects a scheduler that stalls tasks or calls scx_bpf_error()),
 * stops it with SIGINT and keeps the loader's "EXIT: reason (msg)" line, the
 * user exit info it prints. Paths are under root ("" in the guest). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "agent/plan.h"

#define SCX_STATE_PATH "/sys/kernel/sched_ext/state"
#define SCX_OPS_PATH   "/sys/kernel/sched_ext/root/ops"
/* Counts the schedulers ever enabled since boot (6.12 has it): tells a
 * scheduler ejected before the agent saw it enabled from one that never was. */
#define SCX_ENABLE_SEQ_PATH "/sys/kernel/sched_ext/enable_seq"
/* The loader's output, in the guest's tmpfs (it prints a line a second). */
#define SCX_OUT_PATH "/tmp/schedlab-scx.out"
#define SCX_ERR_PATH "/tmp/schedlab-scx.err"
/* BPF verification and loading under TCG takes seconds; a loader that has
 * not enabled sched_ext by then failed. */
#define SCX_ENABLE_TIMEOUT_MS 60000
/* SIGINT -> SIGKILL */
#define SCX_STOP_GRACE_MS 10000

struct agent_scx {
	const char *scheduler; /* the plan's, borrowed */
	pid_t pid;	       /* the loader; 0 when not started */
	int wait_status;
	bool exited;	       /* the loader has been reaped */
	char state[32];	       /* what the state file read once enabled (or at the timeout) */
	char enable_seq[24];   /* enable_seq before the loader started ("" when absent) */
	char ops[64];	       /* what root/ops read; "" when it was absent */
	char state_end[32];    /* the state file after the workloads */
	long long enable_ms;   /* from exec to "enabled" */
	char exit_reason[512]; /* the loader's EXIT line without "EXIT: ", or "" */
	char exit_status[64];  /* "exit 0", "signal 9" */
	char error[1024];      /* a whole sentence when it failed to load or was ejected */
};

/* The ops name a scheduler registers: its name without the "scx_" prefix
 * ("scx_simple" -> "simple"). */
const char *agent_scx_ops_name(const char *scheduler);

/* Starts plan's scheduler (plan->scx_argv) and waits until it is enabled.
 * Returns 0 when sched_ext reads back enabled with the scheduler's ops, else
 * -1 with s->error set (the loader is stopped then). */
int agent_scx_start(const char *root, const struct agent_plan *plan, struct agent_scx *s);

/* After the workloads: reads the state, records an ejection in s->error,
 * stops the loader (SIGINT, SIGKILL after SCX_STOP_GRACE_MS) and reads its
 * exit reason. Nothing when it was never started. */
void agent_scx_stop(const char *root, struct agent_scx *s);

/* The summary's "sched_ext" section: {scheduler, state, ops, state_end,
 * enable_ms, exit_reason, loader_exit, error}. */
json_object *agent_scx_json(const struct agent_scx *s);
