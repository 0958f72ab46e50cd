/* schedlab-agent: PID 1 of the guest initramfs. Mounts the kernel's
 * filesystems, reads /schedlab/plan.json, sets sched features, tunables and
 * per-uid CPU groups, runs each workload, sends hello/workload/summary frames
 * on /dev/ttyS1 and powers off. Whatever fails, a summary is sent and the
 * guest powers off: the host must never wait for a timeout to learn why.
 *
 * Host mode (--root) runs the same code against a fake root directory for
 * tests: no mounts, no power-off, frames to a file. See docs/agent.md. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <termios.h>

#include "agent/decode.h"
#include "agent/load.h"
#include "agent/plan.h"
#include "agent/run.h"
#include "agent/sched.h"
#include "agent/scx.h"
#include "agent/taskstats.h"
#include "agent/topology.h"
#include "agent/util.h"
#include "agent/workload_frame.h"
#include "proto/frame.h"

#define AGENT_VERSION	"0.1.0"
#define AGENT_SERIAL	"/dev/ttyS1"
#define AGENT_PLAN_PATH "/schedlab/plan.json"
/* stdout + stderr + json_file must fit one frame after JSON escaping */
#define JSON_OUT_MAX (1024 * 1024)

struct agent {
	const char *root; /* "" in the guest */
	bool host_mode;
	bool poweroff;
	const char *plan_path;
	const char *out_path;
	int frame_fd;
	int sigfd;
	char uname[512];
	json_object *errors; /* agent-level errors for the summary; owned */
	int taskstats_fd;    /* exits of every CPU (agent/taskstats.h), or -1 */
	pid_t scx_loader;    /* not one of a workload's tasks */
	unsigned orphans_reaped;
	unsigned workload_errors; /* workloads whose frame carries an error */
};

static void help(void)
{
	printf("Usage: agent [--root DIR --out FILE [--plan FILE] --no-poweroff]\n"
	       "\n"
	       "schedlab's guest agent. As PID 1 (no options) it mounts proc, sysfs, devtmpfs,\n"
	       "debugfs, cgroup2 and /tmp, reads %s, applies sched features,\n"
	       "tunables and per-uid CPU groups, runs the workloads, sends frames on %s\n"
	       "and powers off.\n"
	       "\n"
	       "  --root DIR      host mode: kernel files live under DIR, nothing is mounted\n"
	       "  --out FILE      host mode: write the frames to FILE\n"
	       "  --plan FILE     read the plan from FILE (default DIR%s)\n"
	       "  --no-poweroff   exit instead of powering off (host mode always does)\n"
	       "  --decode FILE   print the frames in FILE (a captured serial stream) one\n"
	       "                  per line as KIND PAYLOAD; exit 1 on any frame error\n"
	       "  --help          show this text\n"
	       "  --version       show the version\n"
	       "\n"
	       "Exit status in host mode: 0 when the summary has no error, 1 when it has, 2 on\n"
	       "bad usage.\n",
	       AGENT_PLAN_PATH, AGENT_SERIAL, AGENT_PLAN_PATH);
}

static void agent_log(const char *fmt, ...) _agent_printf_(1, 2);
static void agent_log(const char *fmt, ...)
{
	va_list ap;

	fputs("schedlab-agent: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* One frame at a time on the results port: the heartbeat thread writes
 * between the main thread's frames, never inside one. */
static pthread_mutex_t frame_lock = PTHREAD_MUTEX_INITIALIZER;

static void send_frame(struct agent *a, const char *kind, json_object *payload)
{
	size_t len = 0;
	const char *s = json_object_to_json_string_length(
	    payload, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	pthread_mutex_lock(&frame_lock);
	int r = frame_write(a->frame_fd, kind, s, len);
	pthread_mutex_unlock(&frame_lock);

	if (r < 0)
		agent_log("could not send the '%s' frame of %zu bytes: %s", kind, len,
			  strerror(-r));
}

/* The heartbeat (docs/contracts.md 2): a "heartbeat" frame {"n": N} every
 * AGENT_HEARTBEAT_S while the agent runs, so the host tells a guest that is
 * busy from one whose kernel stopped (docs/kernel-bugs.md). A plain thread
 * of normal priority: when it cannot run for half a minute, the kernel is
 * what is stuck. No allocation: frame_write() and snprintf() only. */
#define AGENT_HEARTBEAT_S 1
static void *heartbeat_main(void *arg)
{
	struct agent *a = arg;
	unsigned long n = 0;
	char payload[40];

	for (;;) {
		sleep(AGENT_HEARTBEAT_S);
		int len = snprintf(payload, sizeof(payload), "{\"n\":%lu}", ++n);
		pthread_mutex_lock(&frame_lock);
		frame_write(a->frame_fd, "heartbeat", payload, (size_t)len);
		pthread_mutex_unlock(&frame_lock);
	}
	return NULL;
}

/* Mounts what the workloads and this agent need. A failure is an error in
 * the summary, not fatal: the missing piece fails loudly later. */
static void mount_all(struct agent *a)
{
	static const struct {
		const char *src, *target, *type;
		unsigned long flags;
		const char *data;
	} mounts[] = {
	    {"proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL},
	    {"sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL},
	    {"devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755"},
	    {"debugfs", "/sys/kernel/debug", "debugfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL},
	    {"cgroup2", "/sys/fs/cgroup", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL},
	    {"tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"},
	    {"tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"},
	};

	for (size_t i = 0; i < ELEMENTSOF(mounts); i++) {
		(void)mkdir(mounts[i].target, 0755);
		if (mount(mounts[i].src, mounts[i].target, mounts[i].type, mounts[i].flags,
			  mounts[i].data) < 0 &&
		    errno != EBUSY)
			agent_error_add(a->errors, "%s could not be mounted on '%s': %s",
					mounts[i].type, mounts[i].target, strerror(errno));
	}
}

/* PID 1 may start without fds 0-2 when the initramfs lacks /dev/console. */
static void ensure_console(void)
{
	if (fcntl(STDERR_FILENO, F_GETFD) >= 0)
		return;
	int fd = open("/dev/console", O_RDWR | O_NOCTTY);
	if (fd < 0)
		return;
	for (int i = 0; i < 3; i++)
		if (fd != i)
			dup2(fd, i);
	if (fd > 2)
		close(fd);
}

static int open_serial(struct agent *a)
{
	struct termios t;
	int fd = open(AGENT_SERIAL, O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0) {
		agent_error_add(a->errors, "the frame port '%s' could not be opened: %s",
				AGENT_SERIAL, strerror(errno));
		return -1;
	}
	/* raw: the tty layer must not turn "\n" into "\r\n" */
	if (tcgetattr(fd, &t) == 0) {
		cfmakeraw(&t);
		/* no modem lines or flow control: nothing may block a write */
		t.c_cflag &= ~(tcflag_t)CRTSCTS;
		t.c_cflag |= CLOCAL;
		t.c_iflag &= ~(tcflag_t)(IXON | IXOFF);
		cfsetispeed(&t, B115200);
		cfsetospeed(&t, B115200);
		tcsetattr(fd, TCSANOW, &t);
	}
	return fd;
}

static void run_one(struct agent *a, size_t index, const struct plan_workload *w,
		    const char *cgroup_procs, bool schedstat)
{
	struct run_request req = {
	    .argv = w->argv,
	    .cgroup_procs = cgroup_procs,
	    .uid = w->uid,
	    .cpus = w->has_cpus ? &w->cpus : NULL,
	    .nice = w->nice,
	    .timeout_s = w->timeout_s,
	};
	struct run_result res;
	_cleanup_free_ char *json_file = NULL;
	size_t json_len = 0;
	char error[1024] = "";
	int r;

	agent_log("running workload %zu '%s' (uid %u, timeout %d s)", index, w->name,
		  (unsigned)w->uid, w->timeout_s);
	if (w->json_out)
		(void)unlink(w->json_out); /* a stale file must not pass for a result */
	struct schedstat_snap ss = {0};
	if (schedstat) {
		schedstat_read(a->root, &ss.before, &ss.before_len);
		ss.ru = getrusage(RUSAGE_CHILDREN, &ss.ru_before) == 0;
		if (a->taskstats_fd >= 0)
			agent_taskstats_drain(a->taskstats_fd);
	}
	r = agent_run_workload(a->sigfd, &req, &res, &a->orphans_reaped);
	if (schedstat && a->taskstats_fd >= 0 && res.pid > 0) {
		agent_taskstats_collect(a->taskstats_fd, res.pid, getpid(), a->scx_loader,
					&ss.tasks);
		ss.has_tasks = true;
	}
	if (schedstat) {
		schedstat_read(a->root, &ss.after, &ss.after_len);
		ss.ru = ss.ru && getrusage(RUSAGE_CHILDREN, &ss.ru_after) == 0;
	}
	if (r < 0) {
		snprintf(error, sizeof(error), "workload '%s' could not be run: %s", w->name,
			 strerror(-r));
	} else if (res.error[0]) {
		snprintf(error, sizeof(error), "workload '%s': %s", w->name, res.error);
	} else if (res.timed_out) {
		snprintf(error, sizeof(error), "workload '%s' timed out after %d s", w->name,
			 w->timeout_s);
	}
	if (w->json_out && res.started) {
		r = agent_read_file(w->json_out, JSON_OUT_MAX, &json_file, &json_len);
		if (r == -EFBIG && !error[0])
			snprintf(error, sizeof(error),
				 "workload '%s' wrote a json_out file '%s' larger than %d bytes",
				 w->name, w->json_out, JSON_OUT_MAX);
		else if (r < 0 && r != -ENOENT && !error[0])
			snprintf(error, sizeof(error),
				 "workload '%s' json_out file '%s' could not be read: %s", w->name,
				 w->json_out, strerror(-r));
	}
	if (error[0]) {
		a->workload_errors++;
		agent_log("%s", error);
	}
	agent_log("workload %zu '%s' ended: exit %d, signal %d%s, %lld ms", index, w->name,
		  res.exit_code, res.signal, res.timed_out ? ", timed out" : "", res.duration_ms);

	/* JSON escaping can grow text up to six times: shrink until it fits */
	static const size_t keeps[] = {0, 256 * 1024, 16 * 1024, 1024};
	for (size_t k = 0; k < ELEMENTSOF(keeps); k++) {
		_cleanup_json_ json_object *o =
		    workload_json(index, w, &res, json_file, json_len, error, keeps[k], &ss);
		size_t len = 0;
		json_object_to_json_string_length(
		    o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
		if (len <= FRAME_MAX_PAYLOAD || k + 1 == ELEMENTSOF(keeps)) {
			send_frame(a, "workload", o);
			break;
		}
	}
	agent_run_result_done(&res);
	free(ss.before);
	free(ss.after);
}

/* A load's workload frame: its output as a workload's (the last completed
 * iteration) and the "load" object (agent/load.h). */
static void send_load_frame(struct agent *a, const struct agent_load *l)
{
	size_t nk = l->n_kept;
	const struct load_iteration *last =
	    nk ? &l->kept[(l->next_kept + LOAD_KEPT_ITERATIONS - 1) % LOAD_KEPT_ITERATIONS] : NULL;
	struct run_result res = {
	    .exit_code = l->gave_up ? 1 : 0,
	    .started = l->starts > 0,
	    .duration_ms = l->window_end_ms - l->window_begin_ms,
	    .out = last ? last->out : NULL,
	    .out_len = last ? last->out_len : 0,
	};
	_cleanup_json_ json_object *o =
	    workload_json(l->index, l->w, &res, last ? last->json : NULL, last ? last->json_len : 0,
			  l->error, 0, NULL);
	json_object_object_add(o, "load", agent_load_json(l));
	agent_log("load %zu '%s': %u starts, %u completed, %u failures, %.1f CPU s in %.1f s%s%s",
		  l->index, l->w->name, l->starts, l->completed, l->failures,
		  (double)(l->cpu_end_us - l->cpu_begin_us) / 1e6,
		  (double)(l->window_end_ms - l->window_begin_ms) / 1e3, l->error[0] ? ": " : "",
		  l->error);
	if (l->error[0])
		a->workload_errors++;
	send_frame(a, "workload", o);
}

/* The loads start first and run through every measured workload; then they
 * are stopped and each sends its frame. */
static void run_workloads(struct agent *a, const struct agent_plan *plan, const bool *group_ok,
			  bool schedstat_on)
{
	_cleanup_free_ char **procs = calloc(plan->n_workloads + 1, sizeof(char *));
	struct agent_loads loads = {0};
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (!procs)
		abort();
	for (size_t i = 0; i < plan->n_workloads; i++) {
		const struct plan_workload *w = &plan->workloads[i];
		for (size_t s = 0; s < plan->n_shares && !procs[i]; s++)
			if (plan->shares[s].uid == w->uid && group_ok[s])
				procs[i] = agent_sched_cgroup_procs_path(a->root, w->uid);
	}
	/* the workloads listed before the first load run idle; the loads start
	 * together where the first of them is listed */
	for (size_t i = 0; i < plan->n_workloads; i++) {
		if (!plan->workloads[i].load) {
			run_one(a, i, &plan->workloads[i], procs[i], schedstat_on);
			continue;
		}
		if (loads.v)
			continue;
		if (agent_loads_start(&loads, plan, procs, (int)ncpus) < 0)
			abort();
		agent_log("started %zu load(s); measuring after %d ms", loads.n, LOAD_SETTLE_MS);
		agent_loads_wait(&loads, a->sigfd, LOAD_SETTLE_MS, &a->orphans_reaped);
		agent_loads_window_begin(&loads);
	}
	if (loads.n > 0) {
		agent_loads_window_end(&loads);
		agent_loads_stop(&loads, a->sigfd, &a->orphans_reaped);
		for (size_t i = 0; i < loads.n; i++)
			send_load_frame(a, &loads.v[i]);
	}
	agent_loads_free(&loads);
	for (size_t i = 0; i < plan->n_workloads; i++)
		free(procs[i]);
}

static json_object *run_plan(struct agent *a, const struct agent_plan *plan)
{
	json_object *summary = json_object_new_object();
	json_object *feat = json_object_new_object(), *applied = json_object_new_array(),
		    *ferr = json_object_new_array();
	json_object *tun = json_object_new_object(), *tapplied = json_object_new_object(),
		    *terr = json_object_new_array();
	json_object *cg = json_object_new_object(), *weights = json_object_new_object(),
		    *cerr = json_object_new_array();
	_cleanup_free_ bool *group_ok = calloc(plan->n_shares + 1, sizeof(bool));
	char msg[1024];

	if (!group_ok)
		abort();
	for (size_t i = 0; i < plan->n_features; i++) {
		if (agent_sched_apply_feature(a->root, plan->features[i], msg, sizeof(msg)) < 0)
			agent_error_add(ferr, "%s", msg);
		else
			json_object_array_add(applied, json_object_new_string(plan->features[i]));
	}
	json_object_object_add(feat, "requested", strv_to_json(plan->features, plan->n_features));
	json_object_object_add(feat, "applied", applied);
	json_object_object_add(feat, "errors", ferr);
	json_object_object_add(summary, "features", feat);

	for (size_t i = 0; i < plan->n_tunables; i++) {
		const struct plan_tunable *t = &plan->tunables[i];
		if (agent_sched_apply_tunable(a->root, t->name, t->value, msg, sizeof(msg)) < 0)
			agent_error_add(terr, "%s", msg);
		else
			json_object_object_add(tapplied, t->name, json_object_new_int64(t->value));
	}
	json_object_object_add(tun, "applied", tapplied);
	json_object_object_add(tun, "errors", terr);
	json_object_object_add(summary, "tunables", tun);

	if (plan->n_shares > 0) {
		if (agent_sched_cgroup_prepare(a->root, msg, sizeof(msg)) < 0) {
			agent_error_add(cerr, "%s", msg);
		} else {
			for (size_t i = 0; i < plan->n_shares; i++) {
				const struct plan_share *s = &plan->shares[i];
				unsigned wgt = agent_sched_share_to_weight(s->share);
				char key[16];
				if (agent_sched_cgroup_add_uid(a->root, s->uid, wgt, msg,
							       sizeof(msg)) < 0) {
					agent_error_add(cerr, "%s", msg);
					continue;
				}
				group_ok[i] = true;
				snprintf(key, sizeof(key), "%u", (unsigned)s->uid);
				json_object_object_add(weights, key, json_object_new_int((int)wgt));
			}
		}
	}
	json_object_object_add(cg, "uid_weights", weights);
	json_object_object_add(cg, "errors", cerr);
	json_object_object_add(summary, "cgroups", cg);

	/* schedstat: the counters run only while kernel.sched_schedstats is
	 * on; a kernel without CONFIG_SCHEDSTATS has no such file. */
	/* Snapshots are taken only while they count: with the switch off the
	 * counters stand still and every difference would read as zero. */
	bool schedstat_on = false;
	if (plan->schedstat) {
		_cleanup_free_ char *path =
		    agent_path(a->root, "/proc/sys/kernel/sched_schedstats");
		int sr = agent_write_file(path, "1", 0);
		schedstat_on = sr == 0;
		json_object_object_add(summary, "schedstat", json_object_new_boolean(schedstat_on));
		if (sr < 0) {
			agent_log("schedstat: cannot turn kernel.sched_schedstats on: %s",
				  strerror(-sr));
			agent_error_add(a->errors,
					"schedstat: cannot turn kernel.sched_schedstats on: %s",
					strerror(-sr));
		}
	}
	/* taskstats: each of a workload's tasks' run delay as it exits. A
	 * kernel without it (a user's config that drops NET) still gives the
	 * snapshots; the summary says why the tasks' delays are missing. */
	if (schedstat_on) {
		char tmsg[256] = "";
		long ncpus = sysconf(_SC_NPROCESSORS_CONF);
		a->taskstats_fd =
		    agent_taskstats_open(a->root, ncpus > 0 ? (int)ncpus : 1, tmsg, sizeof(tmsg));
		json_object_object_add(summary, "taskstats",
				       json_object_new_boolean(a->taskstats_fd >= 0));
		if (a->taskstats_fd < 0) {
			agent_log("taskstats: %s", tmsg);
			json_object_object_add(summary, "taskstats_error",
					       json_object_new_string(tmsg));
		}
	}

	/* sched_ext: the scheduler runs under every workload; one that does
	 * not load leaves the workloads unrun (the run failed already). */
	struct agent_scx scx = {0};
	bool scx_ok = true;
	if (plan->scx_scheduler) {
		agent_log("starting the sched_ext scheduler '%s'", plan->scx_scheduler);
		scx_ok = agent_scx_start(a->root, plan, &scx) == 0;
		a->scx_loader = scx.pid;
		if (scx_ok)
			agent_log("sched_ext: state '%s', ops '%s' after %lld ms", scx.state,
				  scx.ops, scx.enable_ms);
		else
			agent_log("%s", scx.error);
	}
	if (scx_ok)
		run_workloads(a, plan, group_ok, schedstat_on);
	if (plan->scx_scheduler) {
		agent_scx_stop(a->root, &scx);
		if (scx_ok && scx.error[0])
			agent_log("%s", scx.error);
		agent_log("sched_ext scheduler '%s' stopped (%s): %s", plan->scx_scheduler,
			  scx.exit_status, scx.exit_reason[0] ? scx.exit_reason : "no exit reason");
		json_object_object_add(summary, "sched_ext", agent_scx_json(&scx));
	}
	json_object_object_add(summary, "workloads",
			       json_object_new_int64((int64_t)plan->n_workloads));
	return summary;
}

static void send_summary(struct agent *a, json_object *summary, const char *run_id)
{
	long nr = sysconf(_SC_NPROCESSORS_ONLN);

	a->orphans_reaped += agent_run_reap_all();
	json_object_object_add(summary, "run_id", json_object_new_string(run_id ? run_id : ""));
	json_object_object_add(summary, "uname", json_object_new_string(a->uname));
	json_object_object_add(summary, "nr_cpus", json_object_new_int((int)nr));
	json_object_object_add(summary, "topology", agent_topology_read(a->root, (int)nr));
	json_object_object_add(summary, "agent_version", json_object_new_string(AGENT_VERSION));
	json_object_object_add(summary, "orphans_reaped",
			       json_object_new_int((int)a->orphans_reaped));
	json_object_object_add(summary, "errors", json_object_get(a->errors));
	send_frame(a, "summary", summary);
}

/* Every error the summary lists, at top level or per section. */
static size_t summary_error_count(json_object *summary)
{
	static const char *const sections[] = {"features", "tunables", "cgroups"};
	json_object *sec, *errs;
	size_t n = 0;

	if (json_object_object_get_ex(summary, "errors", &errs))
		n += json_object_array_length(errs);
	for (size_t i = 0; i < ELEMENTSOF(sections); i++)
		if (json_object_object_get_ex(summary, sections[i], &sec) &&
		    json_object_object_get_ex(sec, "errors", &errs))
			n += json_object_array_length(errs);
	if (json_object_object_get_ex(summary, "sched_ext", &sec) &&
	    json_object_object_get_ex(sec, "error", &errs) && errs)
		n++;
	return n;
}

static void power_off(void)
{
	sync();
	/* PID 1 returning would panic the kernel; power off instead */
	reboot(RB_POWER_OFF);
	agent_log("reboot(RB_POWER_OFF) failed: %s; waiting for the host", strerror(errno));
	for (;;)
		pause();
}

static int parse_args(struct agent *a, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"root", required_argument, NULL, 'r'},   {"out", required_argument, NULL, 'o'},
	    {"plan", required_argument, NULL, 'p'},   {"no-poweroff", no_argument, NULL, 'n'},
	    {"decode", required_argument, NULL, 'd'}, {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0},
	};
	int c;

	/* the kernel may hand init arguments from the command line: ignore
	 * anything unknown when we are PID 1 */
	if (getpid() == 1)
		opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
		switch (c) {
		case 'r':
			a->root = optarg;
			a->host_mode = true;
			break;
		case 'o':
			a->out_path = optarg;
			break;
		case 'p':
			a->plan_path = optarg;
			break;
		case 'n':
			a->poweroff = false;
			break;
		case 'd':
			exit(agent_decode_frames(optarg));
		case 'h':
			help();
			exit(0);
		case 'V':
			printf("schedlab-agent %s\n", AGENT_VERSION);
			exit(0);
		default:
			if (getpid() == 1)
				break;
			fprintf(stderr, "agent: unknown option; see 'agent --help'.\n");
			return -EINVAL;
		}
	}
	if (getpid() != 1 && !a->host_mode) {
		fprintf(stderr, "agent: not running as PID 1; use --root DIR --out FILE for host "
				"mode.\n");
		return -EINVAL;
	}
	if (a->host_mode && !a->out_path) {
		fprintf(stderr, "agent: --root needs --out FILE.\n");
		return -EINVAL;
	}
	if (a->host_mode)
		a->poweroff = false;
	return 0;
}

int main(int argc, char **argv)
{
	struct agent a = {
	    .root = "", .poweroff = true, .frame_fd = -1, .sigfd = -1, .taskstats_fd = -1};
	_cleanup_json_ json_object *errors = json_object_new_array();
	_cleanup_json_ json_object *summary = NULL;
	_cleanup_json_ json_object *hello = NULL;
	_cleanup_free_ char *plan_path = NULL;
	_cleanup_free_ char *text = NULL;
	struct agent_plan *plan = NULL;
	struct utsname u;
	size_t len = 0;
	char msg[1024];
	int r;

	a.errors = errors;
	if (parse_args(&a, argc, argv) < 0)
		return 2;

	if (!a.host_mode) {
		ensure_console();
		mount_all(&a);
		ensure_console();
		a.frame_fd = open_serial(&a);
		if (a.frame_fd < 0)
			a.frame_fd = STDOUT_FILENO; /* the console: better than nothing */
	} else {
		a.frame_fd = open(a.out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (a.frame_fd < 0) {
			fprintf(stderr, "agent: '%s' could not be opened: %s.\n", a.out_path,
				strerror(errno));
			return 2;
		}
	}
	a.sigfd = agent_run_setup_signals();
	if (a.sigfd < 0)
		agent_error_add(a.errors, "the SIGCHLD signalfd could not be created: %s",
				strerror(-a.sigfd));

	if (uname(&u) == 0)
		snprintf(a.uname, sizeof(a.uname), "%s %s %s", u.release, u.version, u.machine);
	hello = json_object_new_object();
	json_object_object_add(hello, "agent", json_object_new_string("schedlab-agent"));
	json_object_object_add(hello, "version", json_object_new_string(AGENT_VERSION));
	json_object_object_add(hello, "uname", json_object_new_string(a.uname));
	/* The host arms its silence rule on this: a workload may hang the
	 * kernel before the first heartbeat leaves. */
	if (!a.host_mode)
		json_object_object_add(hello, "heartbeat_s",
				       json_object_new_int(AGENT_HEARTBEAT_S));
	send_frame(&a, "hello", hello);
	/* In a guest only: host mode writes a file that tests read frame by frame. */
	pthread_t heartbeat;
	if (!a.host_mode && pthread_create(&heartbeat, NULL, heartbeat_main, &a) == 0)
		pthread_detach(heartbeat);

	plan_path = a.plan_path ? strdup(a.plan_path) : agent_path(a.root, AGENT_PLAN_PATH);
	r = agent_read_file(plan_path, PLAN_MAX_BYTES, &text, &len);
	if (r == -EFBIG)
		agent_error_add(a.errors, "the plan '%s' is larger than %d bytes", plan_path,
				PLAN_MAX_BYTES);
	else if (r < 0)
		agent_error_add(a.errors, "the plan '%s' could not be read: %s", plan_path,
				strerror(-r));
	/* without the SIGCHLD signalfd no workload can be supervised: the plan
	 * is not run, and the summary carries that error */
	else if (a.sigfd >= 0 && agent_plan_parse(text, len, &plan, msg, sizeof(msg)) < 0)
		agent_error_add(a.errors, "the plan '%s' is invalid: %s", plan_path, msg);

	if (plan) {
		summary = run_plan(&a, plan);
	} else {
		/* nothing ran, but the host still learns why */
		summary = json_object_new_object();
		json_object_object_add(summary, "workloads", json_object_new_int(0));
	}
	send_summary(&a, summary, plan ? plan->run_id : NULL);
	/* No heartbeat after the summary: a frame cut off by the power-off would
	 * read as a transport error. Held until the end. */
	pthread_mutex_lock(&frame_lock);
	r = summary_error_count(summary) + a.workload_errors > 0 ? 1 : 0;
	agent_plan_free(plan);
	agent_log("done");
	/* Every byte of the summary must leave the UART before power-off: the
	 * 16550 drains at about 40 KB/s, and reboot() does not wait for it. */
	if (isatty(a.frame_fd))
		tcdrain(a.frame_fd);
	/* The UART is empty, but on a busy host libvirt may not have read the
	 * last bytes from QEMU's side before the power-off tears it down (a
	 * summary frame cut off at 172 of 345 bytes was seen at load 7). */
	if (a.poweroff)
		usleep(300 * 1000);
	if (a.poweroff)
		power_off();
	if (a.frame_fd > STDERR_FILENO)
		close(a.frame_fd);
	if (a.sigfd >= 0)
		close(a.sigfd);
	return r;
}
