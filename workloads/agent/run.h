/* Running one workload as a child of PID 1: argv (no shell), its own process
 * group, optional cgroup and uid, stdout and stderr captured through pipes
 * with a size cap, a timeout (SIGTERM to the group, SIGKILL after a grace
 * period), and tini-style reaping of every child, orphans included. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RUN_CAPTURE_MAX	  (1024 * 1024) /* bytes kept per stream: the tail */
#define RUN_KILL_GRACE_MS 2000		/* SIGTERM -> SIGKILL */
/* After SIGKILL a process in D state may linger; the agent moves on rather
 * than hang. */
#define RUN_GIVE_UP_MS 5000

struct run_request {
	char *const *argv;	  /* argv[0] is an absolute path */
	const char *cgroup_procs; /* cgroup.procs file to join before exec, or NULL */
	uid_t uid;		  /* 0 stays root; else setgroups(0), setgid(uid), setuid(uid) */
	const cpu_set_t *cpus;	  /* sched_setaffinity before exec, or NULL: every CPU */
	int nice;		  /* setpriority before exec; 0 leaves it */
	int timeout_s;		  /* > 0 */
	int kill_grace_ms;	  /* <= 0: RUN_KILL_GRACE_MS */
	size_t capture_max;	  /* 0: RUN_CAPTURE_MAX */
};

struct run_result {
	int exit_code; /* valid when signal == 0 and started */
	int signal;    /* the signal that killed it, or 0 */
	pid_t pid;     /* the workload's root process, once forked */
	bool started;  /* execv succeeded */
	bool timed_out;
	bool killed; /* SIGKILL was needed */
	long long duration_ms;
	char *out, *err; /* malloc'd, NUL-terminated; may hold NUL bytes before out_len */
	size_t out_len, err_len;
	bool out_truncated, err_truncated;
	char error[512]; /* a whole sentence when the workload could not run, else "" */
};

/* Call once at start: blocks SIGCHLD (the caller's signalfd gets it instead),
 * ignores SIGPIPE and makes this process the reaper of orphaned descendants
 * even when it is not PID 1. Returns a signalfd for SIGCHLD, or -errno. */
int agent_run_setup_signals(void);

/* Runs one workload to completion (or timeout) while reaping any other child
 * that exits; *orphans_reaped is incremented for each of those. Fills *ret
 * (release with agent_run_result_done). Returns 0 when the workload ran or could
 * not start (ret->error says why), or -errno when the agent itself failed. */
int agent_run_workload(int sigfd, const struct run_request *req, struct run_result *ret,
		       unsigned *orphans_reaped);

/* A long-lived child of the agent (the sched_ext loader, agent/scx.h) that
 * agent_run_workload() and agent_run_reap_all() reap but do not count as an
 * orphan: when it exits its wait status goes to *status and *exited is set.
 * pid 0 stops watching. */
void agent_run_watch(pid_t pid, int *status, bool *exited);

/* Forks and execs req->argv in its own process group with stdout on out_fd
 * and stderr on err_fd (the cgroup, uid and CPUs of req; no timeout: the
 * caller supervises it). *ret_pid gets the child. Returns 0 when execv
 * succeeded, 1 when the child failed before it (error says why; the child
 * still has to be reaped), or -errno when fork failed. */
int agent_run_spawn(const struct run_request *req, int out_fd, int err_fd, pid_t *ret_pid,
		    char *error, size_t errlen);

struct rusage;
/* Called for every child reaped that is neither the running workload nor
 * the watched one, with its wait status and resource use: true when the
 * hook owns that child (a load's process, agent/load.h), which then does not
 * count as an orphan. NULL removes it. */
typedef bool (*agent_run_reap_hook)(void *ctx, pid_t pid, int status, const struct rusage *ru);
void agent_run_set_reap_hook(agent_run_reap_hook hook, void *ctx);

/* Reaps every child that has already exited; returns how many. */
unsigned agent_run_reap_all(void);

void agent_run_result_done(struct run_result *r);
