/* Each exiting task's scheduler statistics from the kernel's taskstats
 * interface (generic netlink; the kernel's
 * Documentation/accounting/taskstats.rst). The agent registers once for the
 * exits on every CPU; around a workload it discards what came before and,
 * after, sums the records of the workload's own tasks: every thread of the
 * processes descended from its root, and of the orphans the agent reaped.
 * /proc/<pid>/schedstat holds the same run delay, but the tasks are gone by
 * the time the workload ends; taskstats hands each one over as it exits.
 * Needs CONFIG_NET, CONFIG_TASKSTATS and CONFIG_TASK_DELAY_ACCT (the
 * schedstat fragment adds them) and kernel.task_delayacct on. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

/* Records kept per workload; more (a fork bomb) are counted in dropped. */
#define TASKSTATS_MAX_RECORDS 65536

struct agent_taskstats_sum {
	uint64_t tasks;		   /* the workload's tasks (threads) that exited */
	uint64_t run_delay_ns;	   /* their time runnable on a runqueue, not running */
	uint64_t run_delay_max_ns; /* the most one task waited */
	uint64_t timeslices;	   /* times they were put on a CPU (cpu_count) */
	uint64_t run_ns;	   /* their time on a CPU (cpu_run_virtual_total) */
	uint64_t records;	   /* every exit read, the workload's or not */
	uint64_t dropped;	   /* records past TASKSTATS_MAX_RECORDS */
	bool lost;		   /* the socket overflowed (ENOBUFS): tasks are missing */
	unsigned version;	   /* the kernel's TASKSTATS_VERSION */
	char max_comm[32];	   /* the command of the task that waited most */
};

/* One record, as the collector keeps it (exposed for the unit test). */
struct agent_taskstats_rec {
	uint32_t pid, tgid, ppid;
	uint64_t delay_ns, count, run_ns;
	char comm[32];
};

/* Opens the socket, turns kernel.task_delayacct on (under root) and
 * registers for the exits of CPUs 0..ncpus-1. Returns the fd, or -errno
 * with a whole sentence in msg. */
int agent_taskstats_open(const char *root, int ncpus, char *msg, size_t msglen);

/* Discards every record queued so far (exits before the workload). */
void agent_taskstats_drain(int fd);

/* Reads every queued record and sums those of the workload whose root
 * process was root_pid; self is the agent's pid (its reaped orphans
 * count, other children named in exclude do not). */
void agent_taskstats_collect(int fd, pid_t root_pid, pid_t self, pid_t exclude,
			     struct agent_taskstats_sum *sum);

/* The sum over recs[0..n) of the records that belong to the workload (see
 * above); recs is reordered. Pure: the unit test's entry point. */
void agent_taskstats_sum_records(struct agent_taskstats_rec *recs, size_t n, pid_t root_pid,
				 pid_t self, pid_t exclude, struct agent_taskstats_sum *sum);

/* The workload frame's "tasks_delay" object. */
json_object *agent_taskstats_json(const struct agent_taskstats_sum *sum);
