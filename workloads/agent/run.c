/* Workload execution and reaping; see run.h. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "agent/run.h"
#include "agent/util.h"

/* What the child reports through its exec pipe when it fails before execv. */
struct child_failure {
	int stage;
	int errnum;
};

enum child_stage {
	STAGE_SETUP,
	STAGE_CGROUP,
	STAGE_SETGROUPS,
	STAGE_SETGID,
	STAGE_SETUID,
	STAGE_AFFINITY,
	STAGE_NICE,
	STAGE_EXEC,
};

static const char *const stage_names[] = {
    [STAGE_SETUP] = "preparing its file descriptors",
    [STAGE_CGROUP] = "joining its cgroup",
    [STAGE_SETGROUPS] = "setgroups(0)",
    [STAGE_SETGID] = "setgid",
    [STAGE_SETUID] = "setuid",
    [STAGE_AFFINITY] = "sched_setaffinity",
    [STAGE_NICE] = "setpriority",
    [STAGE_EXEC] = "execv",
};

int agent_run_setup_signals(void)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	/* In the guest we are PID 1 and inherit orphans anyway; in host mode
	 * this gives the tests the same behaviour. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	return fd;
}

void agent_run_result_done(struct run_result *r)
{
	if (!r)
		return;
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

static _Noreturn void child_fail(int fd, int stage)
{
	struct child_failure f = {.stage = stage, .errnum = errno};
	ssize_t n = write(fd, &f, sizeof(f));
	(void)n;
	_exit(127);
}

/* In the child, between fork and execv: only async-signal-safe calls. */
static _Noreturn void child_exec(const struct run_request *req, int out_fd, int err_fd,
				 int report_fd)
{
	static char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/", "LANG=C",
				     "TERM=dumb", NULL};
	sigset_t empty;
	int null_fd;

	setpgid(0, 0);
	sigemptyset(&empty);
	sigprocmask(SIG_SETMASK, &empty, NULL);
	signal(SIGPIPE, SIG_DFL);

	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
	    dup2(err_fd, STDERR_FILENO) < 0)
		child_fail(report_fd, STAGE_SETUP);
	if (chdir("/") < 0)
		child_fail(report_fd, STAGE_SETUP);

	if (req->cgroup_procs) {
		/* "0" means the writing process itself */
		int fd = open(req->cgroup_procs, O_WRONLY | O_CLOEXEC | O_CREAT, 0644);
		char num[24];
		int len = 0;
		pid_t self = getpid();
		char rev[24];
		int k = 0;
		/* itoa without stdio */
		do {
			rev[k++] = (char)('0' + self % 10);
			self /= 10;
		} while (self > 0);
		while (k > 0)
			num[len++] = rev[--k];
		num[len++] = '\n';
		if (fd < 0 || write(fd, num, (size_t)len) != len)
			child_fail(report_fd, STAGE_CGROUP);
		close(fd);
	}
	/* a workload or load pinned to named CPUs (plan "cpus") */
	if (req->cpus && sched_setaffinity(0, sizeof(*req->cpus), req->cpus) < 0)
		child_fail(report_fd, STAGE_AFFINITY);
	if (req->nice && setpriority(PRIO_PROCESS, 0, req->nice) < 0)
		child_fail(report_fd, STAGE_NICE);
	if (req->uid != 0) {
		if (setgroups(0, NULL) < 0)
			child_fail(report_fd, STAGE_SETGROUPS);
		if (setgid((gid_t)req->uid) < 0)
			child_fail(report_fd, STAGE_SETGID);
		if (setuid(req->uid) < 0)
			child_fail(report_fd, STAGE_SETUID);
	}
	execve(req->argv[0], req->argv, envp);
	child_fail(report_fd, STAGE_EXEC);
}

static pid_t watched_pid;
static int *watched_status;
static bool *watched_exited;

void agent_run_watch(pid_t pid, int *status, bool *exited)
{
	watched_pid = pid;
	watched_status = status;
	watched_exited = exited;
}

static agent_run_reap_hook reap_hook;
static void *reap_hook_ctx;

void agent_run_set_reap_hook(agent_run_reap_hook hook, void *ctx)
{
	reap_hook = hook;
	reap_hook_ctx = ctx;
}

/* true when w is the watched child (its status is kept) or one the reap
 * hook claims (a load's process). */
static bool watched_reaped(pid_t w, int st, const struct rusage *ru)
{
	if (watched_pid > 0 && w == watched_pid) {
		*watched_status = st;
		*watched_exited = true;
		watched_pid = 0;
		return true;
	}
	return reap_hook && reap_hook(reap_hook_ctx, w, st, ru);
}

unsigned agent_run_reap_all(void)
{
	struct rusage ru;
	unsigned n = 0;
	int st;
	pid_t w;

	while ((w = wait4(-1, &st, WNOHANG, &ru)) > 0)
		if (!watched_reaped(w, st, &ru))
			n++;
	return n;
}

static void drain_signalfd(int sigfd)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == sizeof(si))
		;
}

/* Reads what is available on *fd into t; closes it at EOF or error. */
static void pump(int *fd, struct tail_buf *t)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(*fd, buf, sizeof(buf));
		if (n > 0) {
			tail_buf_append(t, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		close(*fd);
		*fd = -1;
		return;
	}
}

int agent_run_spawn(const struct run_request *req, int out_fd, int err_fd, pid_t *ret_pid,
		    char *error, size_t errlen)
{
	int rep_pipe[2];
	struct child_failure fail;
	pid_t pid;
	ssize_t n;

	if (pipe2(rep_pipe, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(rep_pipe[0]);
		close(rep_pipe[1]);
		return -e;
	}
	if (pid == 0)
		child_exec(req, out_fd, err_fd, rep_pipe[1]);
	*ret_pid = pid;
	/* both sides set the group, so neither a kill nor the child races it */
	setpgid(pid, pid);
	close(rep_pipe[1]);
	/* EOF: execv succeeded (the pipe is close-on-exec) */
	do
		n = read(rep_pipe[0], &fail, sizeof(fail));
	while (n < 0 && errno == EINTR);
	close(rep_pipe[0]);
	if (n == (ssize_t)sizeof(fail) && fail.stage >= 0 && fail.stage <= STAGE_EXEC) {
		snprintf(error, errlen, "'%s' could not be started: %s failed: %s", req->argv[0],
			 stage_names[fail.stage], strerror(fail.errnum));
		return 1;
	}
	return 0;
}

int agent_run_workload(int sigfd, const struct run_request *req, struct run_result *ret,
		       unsigned *orphans_reaped)
{
	int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
	struct tail_buf out = {0}, err = {0};
	long long start, deadline, term_at = -1, kill_at = -1, give_up_at = -1, drain_until = -1;
	int grace = req->kill_grace_ms > 0 ? req->kill_grace_ms : RUN_KILL_GRACE_MS;
	size_t cap = req->capture_max ? req->capture_max : RUN_CAPTURE_MAX;
	bool reaped = false;
	int status = 0, r = 0;
	pid_t pid = -1;

	memset(ret, 0, sizeof(*ret));
	if (tail_buf_init(&out, cap) < 0 || tail_buf_init(&err, cap) < 0) {
		r = -ENOMEM;
		goto cleanup;
	}
	if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0) {
		r = -errno;
		goto cleanup;
	}

	start = agent_now_ms();
	r = agent_run_spawn(req, out_pipe[1], err_pipe[1], &pid, ret->error, sizeof(ret->error));
	if (r < 0)
		goto cleanup;
	ret->pid = pid;
	ret->started = r == 0;
	r = 0;
	close(out_pipe[1]);
	close(err_pipe[1]);
	out_pipe[1] = err_pipe[1] = -1;

	fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
	fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
	deadline = start + (long long)req->timeout_s * 1000;

	for (;;) {
		long long now = agent_now_ms();
		long long next;
		struct pollfd pfd[3];
		int nfd = 0;

		/* reap first: a child that exits also closes its pipes */
		drain_signalfd(sigfd);
		for (;;) {
			struct rusage ru;
			int st;
			pid_t w = wait4(-1, &st, WNOHANG, &ru);
			if (w <= 0)
				break;
			if (w == pid) {
				reaped = true;
				status = st;
				ret->duration_ms = now - start;
				/* leftovers of the workload must not disturb the next one */
				kill(-pid, SIGKILL);
				drain_until = now + 500;
			} else if (!watched_reaped(w, st, &ru) && orphans_reaped) {
				(*orphans_reaped)++;
			}
		}
		if (reaped && ((out_pipe[0] < 0 && err_pipe[0] < 0) || now >= drain_until))
			break;
		if (!reaped) {
			if (now >= deadline && term_at < 0) {
				ret->timed_out = true;
				term_at = now;
				kill(-pid, SIGTERM);
				kill(pid, SIGTERM);
				kill_at = now + grace;
			}
			if (kill_at >= 0 && now >= kill_at && give_up_at < 0) {
				ret->killed = true;
				kill(-pid, SIGKILL);
				kill(pid, SIGKILL);
				give_up_at = now + RUN_GIVE_UP_MS;
			}
			if (give_up_at >= 0 && now >= give_up_at) {
				snprintf(ret->error, sizeof(ret->error),
					 "'%s' (pid %d) did not exit %d ms after SIGKILL",
					 req->argv[0], (int)pid, RUN_GIVE_UP_MS);
				ret->duration_ms = now - start;
				break;
			}
		}

		next = reaped		 ? drain_until
		       : term_at < 0	 ? deadline
		       : give_up_at >= 0 ? give_up_at
					 : kill_at;
		int timeout = next - now > 1000 ? 1000 : next - now < 0 ? 0 : (int)(next - now);
		pfd[nfd++] = (struct pollfd){.fd = sigfd, .events = POLLIN};
		if (out_pipe[0] >= 0)
			pfd[nfd++] = (struct pollfd){.fd = out_pipe[0], .events = POLLIN};
		if (err_pipe[0] >= 0)
			pfd[nfd++] = (struct pollfd){.fd = err_pipe[0], .events = POLLIN};
		if (poll(pfd, (nfds_t)nfd, timeout) < 0 && errno != EINTR) {
			r = -errno;
			goto cleanup;
		}
		if (out_pipe[0] >= 0)
			pump(&out_pipe[0], &out);
		if (err_pipe[0] >= 0)
			pump(&err_pipe[0], &err);
	}

	if (reaped) {
		if (WIFEXITED(status))
			ret->exit_code = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			ret->signal = WTERMSIG(status);
	}
	ret->out = tail_buf_take(&out, &ret->out_len);
	ret->err = tail_buf_take(&err, &ret->err_len);
	ret->out_truncated = tail_buf_truncated(&out);
	ret->err_truncated = tail_buf_truncated(&err);

cleanup:
	for (int i = 0; i < 2; i++) {
		if (out_pipe[i] >= 0)
			close(out_pipe[i]);
		if (err_pipe[i] >= 0)
			close(err_pipe[i]);
	}
	tail_buf_done(&out);
	tail_buf_done(&err);
	return r;
}
