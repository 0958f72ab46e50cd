/* Loads beside the measured workloads; see load.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/load.h"
#include "agent/util.h"

/* The last LOAD_ITER_OUT_MAX bytes of the memfd, NUL-terminated. */
static char *memfd_tail(int fd, size_t *ret_len)
{
	struct stat st;
	size_t len = 0, off = 0;

	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		len = (size_t)st.st_size;
		if (len > LOAD_ITER_OUT_MAX) {
			off = len - LOAD_ITER_OUT_MAX;
			len = LOAD_ITER_OUT_MAX;
		}
	}
	char *buf = malloc(len + 1);
	if (!buf)
		abort();
	ssize_t n = len ? pread(fd, buf, len, (off_t)off) : 0;
	len = n > 0 ? (size_t)n : 0;
	buf[len] = '\0';
	*ret_len = len;
	return buf;
}

static void iteration_clear(struct load_iteration *it)
{
	free(it->out);
	free(it->json);
	*it = (struct load_iteration){0};
}

/* Keeps the output (and json_out file) of the iteration that just ended
 * with status 0: the host computes the load's throughput from them. */
static void keep_iteration(struct agent_load *l)
{
	struct load_iteration *it = &l->kept[l->next_kept];

	iteration_clear(it);
	it->out = memfd_tail(l->out_fd, &it->out_len);
	if (l->w->json_out &&
	    agent_read_file(l->w->json_out, LOAD_ITER_OUT_MAX, &it->json, &it->json_len) < 0)
		it->json = NULL, it->json_len = 0;
	l->next_kept = (l->next_kept + 1) % LOAD_KEPT_ITERATIONS;
	if (l->n_kept < LOAD_KEPT_ITERATIONS)
		l->n_kept++;
}

/* Starts the next iteration on an emptied output file. */
static void load_spawn(struct agent_load *l)
{
	char err[512] = "";

	if (ftruncate(l->out_fd, 0) < 0 || lseek(l->out_fd, 0, SEEK_SET) < 0) {
		snprintf(l->error, sizeof(l->error),
			 "load '%s': its output file could not be emptied: %s", l->w->name,
			 strerror(errno));
		l->gave_up = true;
		return;
	}
	if (l->w->json_out)
		(void)unlink(l->w->json_out); /* a stale file must not pass for a result */
	int r = agent_run_spawn(&l->req, l->out_fd, l->out_fd, &l->pid, err, sizeof(err));
	if (r < 0) {
		snprintf(l->error, sizeof(l->error), "load '%s' could not be forked: %s",
			 l->w->name, strerror(-r));
		l->gave_up = true;
		l->pid = 0;
		return;
	}
	l->starts++;
	/* r == 1: the child failed before execv and exits 127; the reap hook
	 * counts that as a failure and the reason stays here */
	if (r == 1)
		snprintf(l->last_failure, sizeof(l->last_failure), "%.200s", err);
}

static struct agent_load *load_by_pid(struct agent_loads *L, pid_t pid)
{
	for (size_t i = 0; i < L->n; i++)
		if (L->v[i].pid == pid && pid > 0)
			return &L->v[i];
	return NULL;
}

static int64_t tv_us(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000000 + tv->tv_usec;
}

/* The reap hook (run.h): an iteration of a load ended. */
static bool load_reaped(void *ctx, pid_t pid, int status, const struct rusage *ru)
{
	struct agent_load *l = load_by_pid(ctx, pid);

	if (!l)
		return false;
	l->pid = 0;
	/* what the iteration's group left must not outlive it unaccounted */
	kill(-pid, SIGKILL);
	if (ru)
		l->reaped_cpu_us += tv_us(&ru->ru_utime) + tv_us(&ru->ru_stime);
	bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (ok) {
		/* a load that prints its result on SIGTERM (burn) ends so too */
		l->completed++;
		l->consecutive_failures = 0;
		keep_iteration(l);
	} else if (!l->stopping) {
		l->failures++;
		l->consecutive_failures++;
		if (WIFSIGNALED(status))
			snprintf(l->last_failure, sizeof(l->last_failure), "killed by signal %d",
				 WTERMSIG(status));
		else if (WEXITSTATUS(status) != 127 || !l->last_failure[0])
			snprintf(l->last_failure, sizeof(l->last_failure), "exit status %d",
				 WEXITSTATUS(status));
	}
	if (l->stopping || l->gave_up)
		return true;
	if (l->consecutive_failures >= LOAD_MAX_CONSECUTIVE_FAILURES) {
		snprintf(l->error, sizeof(l->error),
			 "load '%s' failed %u times in a row (the last: %s) and was not "
			 "restarted",
			 l->w->name, l->consecutive_failures, l->last_failure);
		l->gave_up = true;
		return true;
	}
	load_spawn(l);
	return true;
}

int agent_loads_start(struct agent_loads *L, const struct agent_plan *plan,
		      char *const *cgroup_procs, int ncpus)
{
	size_t n = 0;

	*L = (struct agent_loads){.ncpus = ncpus > 0 ? ncpus : 1, .proc = "/proc"};
	for (size_t i = 0; i < plan->n_workloads; i++)
		n += plan->workloads[i].load;
	if (n == 0)
		return 0;
	L->v = calloc(n, sizeof(*L->v));
	if (!L->v)
		return -ENOMEM;
	for (size_t i = 0; i < plan->n_workloads; i++) {
		const struct plan_workload *w = &plan->workloads[i];
		if (!w->load)
			continue;
		struct agent_load *l = &L->v[L->n++];
		l->w = w;
		l->index = i;
		l->target_cpus = w->has_cpus ? w->n_cpus : L->ncpus;
		l->cgroup_procs = cgroup_procs && cgroup_procs[i] ? strdup(cgroup_procs[i]) : NULL;
		l->req = (struct run_request){
		    .argv = w->argv,
		    .cgroup_procs = l->cgroup_procs,
		    .uid = w->uid,
		    .cpus = w->has_cpus ? &w->cpus : NULL,
		    .nice = w->nice,
		    .timeout_s = 1,
		};
		l->out_fd = memfd_create("schedlab-load", MFD_CLOEXEC);
		if (l->out_fd < 0) {
			snprintf(l->error, sizeof(l->error),
				 "load '%s': its output file could not be created: %s", w->name,
				 strerror(errno));
			l->gave_up = true;
		}
	}
	agent_run_set_reap_hook(load_reaped, L);
	for (size_t i = 0; i < L->n; i++)
		if (!L->v[i].gave_up)
			load_spawn(&L->v[i]);
	return 0;
}

/* Reaps what exits for ms (or, with until_idle, until no load runs). */
static void wait_reaping(struct agent_loads *L, int sigfd, long long ms, bool until_idle,
			 unsigned *orphans)
{
	long long end = agent_now_ms() + ms;

	for (;;) {
		struct signalfd_siginfo si;
		while (read(sigfd, &si, sizeof(si)) == sizeof(si))
			;
		unsigned n = agent_run_reap_all();
		if (orphans)
			*orphans += n;
		bool running = false;
		for (size_t i = 0; i < L->n; i++)
			running |= L->v[i].pid > 0;
		long long left = end - agent_now_ms();
		if (left <= 0 || (until_idle && !running))
			return;
		struct pollfd p = {.fd = sigfd, .events = POLLIN};
		(void)poll(&p, 1, left > 200 ? 200 : (int)left);
	}
}

void agent_loads_wait(struct agent_loads *L, int sigfd, long long ms, unsigned *orphans)
{
	if (L->n > 0)
		wait_reaping(L, sigfd, ms, false, orphans);
}

int64_t agent_load_group_cpu_us(const char *proc, pid_t pgid)
{
	long hz = sysconf(_SC_CLK_TCK);
	DIR *d = opendir(proc);
	struct dirent *de;
	int64_t ticks = 0;

	if (!d || hz <= 0) {
		if (d)
			closedir(d);
		return 0;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		char path[300], buf[1024];
		snprintf(path, sizeof(path), "%s/%s/stat", proc, de->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* the command may hold spaces and ')': fields follow the last ')' */
		char *p = strrchr(buf, ')');
		long long pgrp, ut, st, cut, cst;
		if (!p ||
		    sscanf(p + 1,
			   " %*c %*d %lld %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld %lld %lld",
			   &pgrp, &ut, &st, &cut, &cst) != 5)
			continue;
		if (pgrp == pgid && ut >= 0 && st >= 0 && cut >= 0 && cst >= 0)
			ticks += ut + st + cut + cst;
	}
	closedir(d);
	return ticks * 1000000 / hz;
}

/* Finished iterations plus the running one's process group. */
static int64_t load_cpu_us(const struct agent_loads *L, const struct agent_load *l)
{
	return l->reaped_cpu_us + (l->pid > 0 ? agent_load_group_cpu_us(L->proc, l->pid) : 0);
}

void agent_loads_window_begin(struct agent_loads *L)
{
	for (size_t i = 0; i < L->n; i++) {
		L->v[i].window_begin_ms = agent_now_ms();
		L->v[i].cpu_begin_us = load_cpu_us(L, &L->v[i]);
	}
}

void agent_loads_window_end(struct agent_loads *L)
{
	for (size_t i = 0; i < L->n; i++) {
		L->v[i].window_end_ms = agent_now_ms();
		L->v[i].cpu_end_us = load_cpu_us(L, &L->v[i]);
	}
}

void agent_loads_stop(struct agent_loads *L, int sigfd, unsigned *orphans)
{
	bool any = false;

	for (size_t i = 0; i < L->n; i++) {
		struct agent_load *l = &L->v[i];
		l->stopping = true;
		if (l->pid > 0) {
			kill(-l->pid, SIGTERM);
			kill(l->pid, SIGTERM);
			any = true;
		}
	}
	if (any)
		wait_reaping(L, sigfd, LOAD_STOP_GRACE_MS, true, orphans);
	any = false;
	for (size_t i = 0; i < L->n; i++) {
		struct agent_load *l = &L->v[i];
		if (l->pid > 0) {
			kill(-l->pid, SIGKILL);
			kill(l->pid, SIGKILL);
			any = true;
		}
	}
	if (any)
		wait_reaping(L, sigfd, RUN_GIVE_UP_MS, true, orphans);
	for (size_t i = 0; i < L->n; i++)
		if (L->v[i].pid > 0 && !L->v[i].error[0])
			snprintf(L->v[i].error, sizeof(L->v[i].error),
				 "load '%s' (pid %d) did not exit %d ms after SIGKILL",
				 L->v[i].w->name, (int)L->v[i].pid, RUN_GIVE_UP_MS);
	agent_run_set_reap_hook(NULL, NULL);
}

json_object *agent_load_json(const struct agent_load *l)
{
	json_object *o = json_object_new_object();
	json_object *outs = json_object_new_array(), *jsons = json_object_new_array();

	json_object_object_add(o, "starts", json_object_new_int64(l->starts));
	json_object_object_add(o, "completed", json_object_new_int64(l->completed));
	json_object_object_add(o, "failures", json_object_new_int64(l->failures));
	json_object_object_add(o, "gave_up", json_object_new_boolean(l->gave_up));
	json_object_object_add(o, "last_failure",
			       l->last_failure[0] ? json_object_new_string(l->last_failure) : NULL);
	json_object_object_add(o, "cpu_us", json_object_new_int64(l->cpu_end_us - l->cpu_begin_us));
	json_object_object_add(o, "window_ms",
			       json_object_new_int64(l->window_end_ms - l->window_begin_ms));
	json_object_object_add(o, "cpus", json_object_new_int(l->target_cpus));
	/* oldest first */
	for (size_t k = 0; k < l->n_kept; k++) {
		size_t i =
		    (l->next_kept + LOAD_KEPT_ITERATIONS - l->n_kept + k) % LOAD_KEPT_ITERATIONS;
		const struct load_iteration *it = &l->kept[i];
		_cleanup_free_ char *clean = agent_utf8_clean(it->out, it->out_len);
		json_object_array_add(outs, json_object_new_string(clean));
		if (it->json) {
			_cleanup_free_ char *cj = agent_utf8_clean(it->json, it->json_len);
			json_object_array_add(jsons, json_object_new_string(cj));
		} else {
			json_object_array_add(jsons, NULL);
		}
	}
	json_object_object_add(o, "outputs", outs);
	json_object_object_add(o, "json_files", jsons);
	return o;
}

void agent_loads_free(struct agent_loads *L)
{
	for (size_t i = 0; i < L->n; i++) {
		struct agent_load *l = &L->v[i];
		for (size_t k = 0; k < LOAD_KEPT_ITERATIONS; k++)
			iteration_clear(&l->kept[k]);
		if (l->out_fd >= 0)
			close(l->out_fd);
		free(l->cgroup_procs);
	}
	free(L->v);
	*L = (struct agent_loads){0};
}
