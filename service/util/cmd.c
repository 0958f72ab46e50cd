/* The command runner declared in util/cmd.h: fork/exec with argv, its own
 * process group (so a timeout kills make's children too), a captured output
 * tail, per-line callbacks, cancel polling, and a dry-run recorder. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "util/cmd.h"
#include "util/time.h"

extern char **environ;

/* A line longer than this is handed to on_line in pieces: output is untrusted. */
#define CMD_LINE_MAX	 (64 * 1024)
#define CMD_POLL_MS	 200
#define CMD_KILL_GRACE_S 5
/* After the main process exits, how long to wait for EOF from children it
 * left behind holding the pipe before giving up on their output. */
#define CMD_DRAIN_MS 1000

static pthread_mutex_t dry_lock = PTHREAD_MUTEX_INITIALIZER;
static bool dry_active;
static char *dry_buf;
static size_t dry_len;
static bool dry_failed; /* out of memory: the record is incomplete */
static cmd_dry_run_hook dry_hook;
static void *dry_hook_userdata;

/* Shell-quotes s onto the dry-run buffer: bare when it is made of safe
 * characters only, otherwise in single quotes with ' written as '\''. */
static void dry_append(const char *s, size_t n)
{
	if (dry_failed)
		return;
	char *b = realloc(dry_buf, dry_len + n + 1);
	if (!b) {
		dry_failed = true;
		return;
	}
	dry_buf = b;
	memcpy(dry_buf + dry_len, s, n);
	dry_len += n;
	dry_buf[dry_len] = '\0';
}

static void dry_append_quoted(const char *s)
{
	bool safe = *s != '\0';
	for (const char *p = s; *p; p++)
		if (!strchr(
			"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-",
			*p)) {
			safe = false;
			break;
		}
	if (safe) {
		dry_append(s, strlen(s));
		return;
	}
	dry_append("'", 1);
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			dry_append("'\\''", 4);
		else
			dry_append(p, 1);
	}
	dry_append("'", 1);
}

void cmd_dry_run_begin(void)
{
	pthread_mutex_lock(&dry_lock);
	free(dry_buf);
	dry_buf = NULL;
	dry_len = 0;
	dry_failed = false;
	dry_active = true;
	pthread_mutex_unlock(&dry_lock);
}

char *cmd_dry_run_end(void)
{
	pthread_mutex_lock(&dry_lock);
	char *r = dry_failed ? NULL : dry_buf ? dry_buf : strdup("");
	if (dry_failed)
		free(dry_buf);
	dry_buf = NULL;
	dry_len = 0;
	dry_failed = false;
	dry_active = false;
	dry_hook = NULL;
	dry_hook_userdata = NULL;
	pthread_mutex_unlock(&dry_lock);
	return r;
}

bool cmd_dry_run_active(void)
{
	pthread_mutex_lock(&dry_lock);
	bool active = dry_active;
	pthread_mutex_unlock(&dry_lock);
	return active;
}

void cmd_dry_run_set_hook(cmd_dry_run_hook hook, void *userdata)
{
	pthread_mutex_lock(&dry_lock);
	dry_hook = hook;
	dry_hook_userdata = userdata;
	pthread_mutex_unlock(&dry_lock);
}

/* Returns true when the call was recorded instead of run. */
static bool dry_record(char *const argv[], const struct cmd_opts *o)
{
	pthread_mutex_lock(&dry_lock);
	bool active = dry_active;
	if (active) {
		if (o && o->cwd) {
			dry_append("cd ", 3);
			dry_append_quoted(o->cwd);
			dry_append(" && ", 4);
		}
		for (size_t i = 0; argv[i]; i++) {
			if (i > 0)
				dry_append(" ", 1);
			dry_append_quoted(argv[i]);
		}
		dry_append("\n", 1);
	}
	pthread_mutex_unlock(&dry_lock);
	return active;
}

/* The child's environment, built before fork() because the child may only
 * make async-signal-safe calls. Entries of extra replace same-named ones. */
static char **env_build(char *const *extra)
{
	size_t n = 0, m = 0;
	for (char **e = environ; e && *e; e++)
		n++;
	for (char *const *e = extra; e && *e; e++)
		m++;
	char **env = calloc(n + m + 1, sizeof(char *));
	if (!env)
		return NULL;
	size_t k = 0;
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t klen = eq ? (size_t)(eq - *e) : strlen(*e);
		bool replaced = false;
		for (char *const *x = extra; x && *x; x++)
			if (strncmp(*x, *e, klen) == 0 && (*x)[klen] == '=') {
				replaced = true;
				break;
			}
		if (!replaced)
			env[k++] = *e;
	}
	for (char *const *x = extra; x && *x; x++)
		env[k++] = *x;
	env[k] = NULL;
	return env;
}

struct outbuf {
	const struct cmd_opts *o;
	char *tail; /* holds up to 2 * capture_max, trimmed to the last capture_max */
	size_t tail_len;
	char line[CMD_LINE_MAX + 1];
	size_t line_len;
};

static void out_line_flush(struct outbuf *ob)
{
	if (ob->o->on_line) {
		ob->line[ob->line_len] = '\0';
		ob->o->on_line(ob->o->userdata, ob->line);
	}
	ob->line_len = 0;
}

static void out_feed(struct outbuf *ob, const char *data, size_t n)
{
	const struct cmd_opts *o = ob->o;
	if (o->log_fd >= 0) {
		const char *p = data;
		size_t left = n;
		while (left > 0) {
			ssize_t k = write(o->log_fd, p, left);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break; /* a broken log must not stop the command */
			p += k;
			left -= (size_t)k;
		}
	}
	if (ob->tail) {
		size_t cap = o->capture_max;
		if (n >= cap) {
			memcpy(ob->tail, data + n - cap, cap);
			ob->tail_len = cap;
		} else {
			if (ob->tail_len + n > 2 * cap) {
				size_t keep = cap - n;
				memmove(ob->tail, ob->tail + ob->tail_len - keep, keep);
				ob->tail_len = keep;
			}
			memcpy(ob->tail + ob->tail_len, data, n);
			ob->tail_len += n;
		}
	}
	if (o->on_line)
		for (size_t i = 0; i < n; i++) {
			if (data[i] == '\n') {
				out_line_flush(ob);
				continue;
			}
			if (ob->line_len == CMD_LINE_MAX)
				out_line_flush(ob);
			ob->line[ob->line_len++] = data[i];
		}
}

static char *out_take_tail(struct outbuf *ob)
{
	size_t cap = ob->o->capture_max, len = ob->tail_len, off = 0;
	if (len > cap) {
		off = len - cap;
		len = cap;
	}
	char *r = malloc(len + 1);
	if (!r)
		return NULL;
	if (len)
		memcpy(r, ob->tail + off, len);
	r[len] = '\0';
	return r;
}

static struct outbuf *outbuf_new(const struct cmd_opts *o)
{
	struct outbuf *ob = calloc(1, sizeof(*ob));
	if (!ob)
		return NULL;
	ob->o = o;
	if (o->capture_max > 0 && !(ob->tail = malloc(2 * o->capture_max))) {
		free(ob);
		return NULL;
	}
	return ob;
}

static void outbuf_free(struct outbuf *ob)
{
	if (!ob)
		return;
	free(ob->tail);
	free(ob);
}

/* Sets *ret_output (when not NULL) to the captured tail, or "" without one. */
static int outbuf_take(struct outbuf *ob, char **ret_output, struct sl_error *err)
{
	if (!ret_output)
		return 0;
	*ret_output = ob->tail ? out_take_tail(ob) : strdup("");
	if (!*ret_output)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	return 0;
}

/* The dry run's stand-in for running argv: the hook's exit status, and its
 * output fed through the same path as a real command's. */
static int dry_reply(char *const argv[], const struct cmd_opts *o, int *ret_exit, char **ret_output,
		     struct sl_error *err)
{
	pthread_mutex_lock(&dry_lock);
	cmd_dry_run_hook hook = dry_hook;
	void *userdata = dry_hook_userdata;
	pthread_mutex_unlock(&dry_lock);
	_cleanup_free_ char *text = NULL;
	int ex = hook ? hook(userdata, argv, o->cwd, &text) : 0;
	struct outbuf *ob = outbuf_new(o);
	if (!ob)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory running '%s'.", argv[0]);
	if (text)
		out_feed(ob, text, strlen(text));
	if (ob->line_len > 0)
		out_line_flush(ob);
	int r = outbuf_take(ob, ret_output, err);
	outbuf_free(ob);
	if (r >= 0 && ret_exit)
		*ret_exit = ex;
	return r;
}

/* In the child: joins the cgroup v2 directory dir (cgroup.procs takes "0"
 * for the writer). Only async-signal-safe calls. */
static int child_cgroup(const char *dir)
{
	if (!dir)
		return 0;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	int fd = openat(dfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return -1;
	ssize_t k = write(fd, "0", 1);
	int e = errno;
	close(fd);
	errno = e;
	return k == 1 ? 0 : -1;
}

/* In the child: o->pass_fds[i] at 3 + i. Each is first moved above the
 * targets, so that placing one cannot close a source not yet placed. */
static int child_pass_fds(const struct cmd_opts *o)
{
	int tmp[CMD_PASS_FDS_MAX];
	size_t n = o->n_pass_fds;
	if (n > CMD_PASS_FDS_MAX) {
		errno = EMFILE;
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if ((tmp[i] = fcntl(o->pass_fds[i], F_DUPFD_CLOEXEC, 3 + (int)n)) < 0)
			return -1;
	for (size_t i = 0; i < n; i++)
		if (dup2(tmp[i], 3 + (int)i) < 0) /* dup2 clears FD_CLOEXEC */
			return -1;
	return 0;
}

__attribute__((noreturn)) static void child_exec(char *const argv[], const struct cmd_opts *o,
						 char **env, int out_fd, int err_fd)
{
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigaction(SIGPIPE, &dfl, NULL);
	setpgid(0, 0);
	int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		goto fail;
	if (o->cwd && chdir(o->cwd) < 0)
		goto fail;
	if (child_cgroup(o->cgroup_dir) < 0 || child_pass_fds(o) < 0)
		goto fail;
	execvpe(argv[0], argv, env);
fail:;
	int e = errno;
	ssize_t _unused_ k = write(err_fd, &e, sizeof(e));
	_exit(127);
}

static void reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

int cmd_run(char *const argv[], const struct cmd_opts *opts, int *ret_exit, char **ret_output,
	    struct sl_error *err)
{
	static const struct cmd_opts none = {.log_fd = -1};
	const struct cmd_opts *o = opts ? opts : &none;

	if (!argv || !argv[0])
		return error_set(err, ERR_INTERNAL, EINVAL, "No command to run.");
	if (dry_record(argv, o))
		return dry_reply(argv, o, ret_exit, ret_output, err);

	struct outbuf *ob = outbuf_new(o);
	_cleanup_free_ char **env = env_build(o->env_extra);
	if (!ob || !env) {
		outbuf_free(ob);
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory running '%s'.", argv[0]);
	}

	int r = 0, status = 0;
	_cleanup_close_ int out_r = -1, out_w = -1, err_r = -1, err_w = -1;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		r = error_set(err, ERR_INTERNAL, errno, "Cannot create a pipe for '%s': %s.",
			      argv[0], strerror(errno));
		goto cleanup;
	}
	out_r = p[0];
	out_w = p[1];
	if (pipe2(p, O_CLOEXEC) < 0) {
		r = error_set(err, ERR_INTERNAL, errno, "Cannot create a pipe for '%s': %s.",
			      argv[0], strerror(errno));
		goto cleanup;
	}
	err_r = p[0];
	err_w = p[1];

	pid_t pid = fork();
	if (pid < 0) {
		r = error_set(err, ERR_INTERNAL, errno, "Cannot fork to run '%s': %s.", argv[0],
			      strerror(errno));
		goto cleanup;
	}
	if (pid == 0)
		child_exec(argv, o, env, out_w, err_w);
	/* Both sides set the group, so a kill right after fork() cannot miss it. */
	setpgid(pid, pid);
	close(TAKE_FD(out_w));
	close(TAKE_FD(err_w));

	int child_errno = 0;
	ssize_t k;
	while ((k = read(err_r, &child_errno, sizeof(child_errno))) < 0 && errno == EINTR)
		;
	if (k == (ssize_t)sizeof(child_errno)) {
		reap(pid, &status);
		r = error_set(err, ERR_INTERNAL, child_errno, "Cannot run '%s': %s.", argv[0],
			      strerror(child_errno));
		goto cleanup;
	}

	double start = time_monotonic_s(), term_at = 0, exited_at = 0;
	bool exited = false, timed_out = false, cancelled = false, eof = false;
	char buf[16384];
	while (!eof) {
		struct pollfd pfd = {.fd = out_r, .events = POLLIN};
		int pr = poll(&pfd, 1, CMD_POLL_MS);
		if (pr < 0 && errno != EINTR) {
			r = error_set(err, ERR_INTERNAL, errno, "Cannot poll '%s': %s.", argv[0],
				      strerror(errno));
			kill(-pid, SIGKILL);
			reap(pid, &status);
			goto cleanup;
		}
		if (pr > 0) {
			k = read(out_r, buf, sizeof(buf));
			if (k > 0)
				out_feed(ob, buf, (size_t)k);
			else if (k == 0 || (errno != EINTR && errno != EAGAIN))
				eof = true;
		}
		if (!exited) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid) {
				exited = true;
				exited_at = time_monotonic_s();
			}
		}
		double t = time_monotonic_s();
		if (exited) {
			if (t - exited_at > CMD_DRAIN_MS / 1000.0)
				break;
			continue;
		}
		if (!timed_out && !cancelled) {
			if (o->timeout_s > 0 && t - start >= o->timeout_s)
				timed_out = true;
			else if (o->cancelled && o->cancelled(o->userdata))
				cancelled = true;
			if (timed_out || cancelled) {
				kill(-pid, SIGTERM);
				term_at = t;
			}
		} else if (term_at > 0 && t - term_at >= CMD_KILL_GRACE_S) {
			kill(-pid, SIGKILL);
			term_at = 0;
		}
	}
	if (!exited)
		reap(pid, &status);
	if (ob->line_len > 0)
		out_line_flush(ob);

	if (timed_out) {
		r = error_set(err, ERR_TIMEOUT, ETIMEDOUT,
			      "Command '%s' did not finish within %d s and was killed.", argv[0],
			      o->timeout_s);
		goto cleanup;
	}
	if (cancelled) {
		r = error_set(err, ERR_CANCELLED, ECANCELED, "Command '%s' was cancelled.",
			      argv[0]);
		goto cleanup;
	}
	r = outbuf_take(ob, ret_output, err);
	if (r < 0)
		goto cleanup;
	if (ret_exit)
		*ret_exit = WIFEXITED(status)	  ? WEXITSTATUS(status)
			    : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
						  : 255;
cleanup:
	outbuf_free(ob);
	return r;
}
