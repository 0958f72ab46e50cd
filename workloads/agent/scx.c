/* Starting, checking and stopping the sched_ext scheduler; see scx.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/run.h"
#include "agent/scx.h"
#include "agent/util.h"

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *agent_scx_ops_name(const char *scheduler)
{
	return strncmp(scheduler, "scx_", 4) == 0 ? scheduler + 4 : scheduler;
}

/* The first line of root+rel into buf ("" when it cannot be read). */
static void read_line(const char *root, const char *rel, char *buf, size_t len)
{
	_cleanup_free_ char *path = agent_path(root, rel);
	_cleanup_free_ char *data = NULL;
	size_t n = 0;
	buf[0] = '\0';
	if (agent_read_file(path, 4096, &data, &n) < 0)
		return;
	data[strcspn(data, "\r\n")] = '\0';
	_cleanup_free_ char *clean = agent_utf8_clean(data, strlen(data));
	snprintf(buf, len, "%s", clean);
}

/* Reaps the loader if it has exited; true when it has. */
static bool loader_gone(struct agent_scx *s)
{
	int st;
	if (s->exited)
		return true;
	pid_t w = waitpid(s->pid, &st, WNOHANG);
	if (w == s->pid) {
		s->wait_status = st;
		s->exited = true;
		agent_run_watch(0, NULL, NULL);
	}
	return s->exited;
}

static void describe_exit(struct agent_scx *s)
{
	if (!s->exited)
		snprintf(s->exit_status, sizeof(s->exit_status), "running");
	else if (WIFSIGNALED(s->wait_status))
		snprintf(s->exit_status, sizeof(s->exit_status), "signal %d",
			 WTERMSIG(s->wait_status));
	else
		snprintf(s->exit_status, sizeof(s->exit_status), "exit %d",
			 WEXITSTATUS(s->wait_status));
}

/* Reads the loader's stderr once: its last "EXIT: " line into s->exit_reason,
 * its last line into tail (when given), and with log its last 3000 bytes
 * (libbpf's and the verifier's complaints) to the console, for the run's
 * console excerpt. */
static void read_loader_stderr(const char *root, struct agent_scx *s, char *tail, size_t tail_len,
			       bool log)
{
	_cleanup_free_ char *path = agent_path(root, SCX_ERR_PATH);
	_cleanup_free_ char *data = NULL;
	size_t n = 0;
	s->exit_reason[0] = '\0';
	if (tail)
		tail[0] = '\0';
	if (agent_read_file(path, 256 * 1024, &data, &n) < 0)
		return;
	if (log && n > 0) {
		size_t keep = n > 3000 ? 3000 : n;
		_cleanup_free_ char *last_bytes = agent_utf8_clean(data + n - keep, keep);
		fprintf(stderr, "schedlab-agent: the sched_ext loader's last output:\n%s\n",
			last_bytes);
	}
	_cleanup_free_ char *clean = agent_utf8_clean(data, n);
	char *last = NULL, *last_line = NULL;
	for (char *line = strtok(clean, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "EXIT: ", 6) == 0)
			last = line + 6;
		if (*line)
			last_line = line;
	}
	if (last)
		snprintf(s->exit_reason, sizeof(s->exit_reason), "%s", last);
	if (tail && last_line)
		snprintf(tail, tail_len, "%.400s", last_line);
}

static void kill_and_wait(struct agent_scx *s, int sig, long long grace_ms)
{
	if (loader_gone(s))
		return;
	kill(s->pid, sig);
	for (long long end = now_ms() + grace_ms; !loader_gone(s) && now_ms() < end;)
		usleep(20 * 1000);
}

int agent_scx_start(const char *root, const struct agent_plan *plan, struct agent_scx *s)
{
	memset(s, 0, sizeof(*s));
	s->scheduler = plan->scx_scheduler;
	_cleanup_free_ char *out = agent_path(root, SCX_OUT_PATH);
	_cleanup_free_ char *errp = agent_path(root, SCX_ERR_PATH);
	read_line(root, SCX_ENABLE_SEQ_PATH, s->enable_seq, sizeof(s->enable_seq));
	long long start = now_ms();
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(s->error, sizeof(s->error),
			 "the sched_ext scheduler '%s' could not be started: %s", s->scheduler,
			 strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* dispositions the agent inherited (SIGINT is ignored when it was
		 * started in the background of a shell) must not reach the loader:
		 * SIGINT is how it is stopped */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		setpgid(0, 0);
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (o < 0 || e < 0 || dup2(o, STDOUT_FILENO) < 0 || dup2(e, STDERR_FILENO) < 0)
			_exit(126);
		if (nul >= 0)
			dup2(nul, STDIN_FILENO);
		execv(plan->scx_argv[0], plan->scx_argv);
		dprintf(STDERR_FILENO, "EXIT: the loader '%s' could not be executed: %s\n",
			plan->scx_argv[0], strerror(errno));
		_exit(127);
	}
	s->pid = pid;
	agent_run_watch(pid, &s->wait_status, &s->exited);
	/* a user's own scheduler declares the ops name it likes: any is its */
	const char *want = plan->scx_own ? NULL : agent_scx_ops_name(s->scheduler);
	for (;;) {
		read_line(root, SCX_STATE_PATH, s->state, sizeof(s->state));
		read_line(root, SCX_OPS_PATH, s->ops, sizeof(s->ops));
		if (strcmp(s->state, "enabled") == 0 && s->ops[0] &&
		    (!want || strcmp(s->ops, want) == 0)) {
			s->enable_ms = now_ms() - start;
			return 0;
		}
		if (loader_gone(s) || now_ms() - start > SCX_ENABLE_TIMEOUT_MS)
			break;
		usleep(50 * 1000);
	}
	bool gone = loader_gone(s);
	kill_and_wait(s, SIGINT, SCX_STOP_GRACE_MS);
	kill_and_wait(s, SIGKILL, 2000);
	char tail[512];
	read_loader_stderr(root, s, tail, sizeof(tail), true);
	describe_exit(s);
	const char *why = s->exit_reason[0] ? s->exit_reason : tail[0] ? tail : "no output";
	/* enable_seq moved: it was enabled, then ejected before this loop saw
	 * it (a stall stalls the agent too) */
	char seq_now[sizeof(s->enable_seq)];
	read_line(root, SCX_ENABLE_SEQ_PATH, seq_now, sizeof(seq_now));
	bool was_enabled = s->enable_seq[0] && seq_now[0] && strcmp(seq_now, s->enable_seq) != 0;
	if (gone && was_enabled)
		snprintf(s->error, sizeof(s->error),
			 "sched_ext ejected the scheduler '%s' right after it was enabled, "
			 "before the workloads (loader %s): %s",
			 s->scheduler, s->exit_status, why);
	else if (gone)
		snprintf(s->error, sizeof(s->error),
			 "the sched_ext scheduler '%s' did not load: its loader ended (%s) "
			 "before sched_ext was enabled: %s",
			 s->scheduler, s->exit_status, why);
	else
		snprintf(s->error, sizeof(s->error),
			 "the sched_ext scheduler '%s' was not enabled within %d s: state '%s', "
			 "ops '%s'",
			 s->scheduler, SCX_ENABLE_TIMEOUT_MS / 1000, s->state, s->ops);
	return -1;
}

void agent_scx_stop(const char *root, struct agent_scx *s)
{
	if (s->pid <= 0 || s->error[0])
		return;
	read_line(root, SCX_STATE_PATH, s->state_end, sizeof(s->state_end));
	bool ejected = loader_gone(s) || strcmp(s->state_end, "enabled") != 0;
	kill_and_wait(s, SIGINT, SCX_STOP_GRACE_MS);
	kill_and_wait(s, SIGKILL, 2000);
	agent_run_watch(0, NULL, NULL);
	read_loader_stderr(root, s, NULL, 0, false);
	describe_exit(s);
	if (ejected)
		snprintf(s->error, sizeof(s->error),
			 "sched_ext ejected the scheduler '%s' during the run (state '%s' after "
			 "the workloads): %s",
			 s->scheduler, s->state_end,
			 s->exit_reason[0] ? s->exit_reason : "the loader printed no exit reason");
}

static json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

json_object *agent_scx_json(const struct agent_scx *s)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "scheduler", json_object_new_string(s->scheduler));
	json_object_object_add(o, "state", json_object_new_string(s->state));
	json_object_object_add(o, "ops", json_object_new_string(s->ops));
	json_object_object_add(o, "state_end", str_or_null(s->state_end));
	json_object_object_add(o, "enable_ms", json_object_new_int64(s->enable_ms));
	json_object_object_add(o, "exit_reason", str_or_null(s->exit_reason));
	json_object_object_add(o, "loader_exit", str_or_null(s->exit_status));
	json_object_object_add(o, "error", str_or_null(s->error));
	return o;
}
