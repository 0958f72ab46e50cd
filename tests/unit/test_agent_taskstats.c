/* Guest agent, taskstats (agent/taskstats.h): which exit records are the
 * workload's (its process tree, threads first and parents last, the orphans
 * the agent reaped; not kernel threads, not the sched_ext loader, not the
 * agent's own), their sums, and the same against this host's kernel: a
 * child with threads and a grandchild, each burning CPU, read back through
 * a real taskstats socket. That part is skipped when the host kernel has no
 * taskstats or the test may not register (not root). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/taskstats.c"
#include "agent/util.c"

static struct agent_taskstats_rec rec(uint32_t pid, uint32_t tgid, uint32_t ppid, uint64_t delay,
				      const char *comm)
{
	struct agent_taskstats_rec r = {.pid = pid, .tgid = tgid, .ppid = ppid};
	r.delay_ns = delay;
	r.count = 2;
	r.run_ns = 1000;
	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	return r;
}

static void test_which_records_are_the_workloads(void **state)
{
	(void)state;
	/* agent 1, workload root 100 (threads 101, 102), its child 200 whose
	 * child 300 exits first, an orphan 400 reparented to the agent (its
	 * thread 401), the sched_ext loader 50 (a child of the agent), a
	 * kworker 60 (child of kthreadd 2), an unrelated 70 */
	struct agent_taskstats_rec r[] = {
	    rec(300, 300, 200, 7, "grandchild"), rec(101, 100, 1, 10, "thread-a"),
	    rec(60, 60, 2, 999, "kworker/0:1"),	 rec(401, 400, 1, 3, "orphan-thr"),
	    rec(400, 400, 1, 4, "orphan"),	 rec(200, 200, 100, 5, "child"),
	    rec(50, 50, 1, 888, "scx_loader"),	 rec(102, 100, 1, 20, "thread-b"),
	    rec(70, 70, 9, 777, "other"),	 rec(100, 100, 1, 1, "root"),
	};
	struct agent_taskstats_sum s = {0};
	agent_taskstats_sum_records(r, ELEMENTSOF(r), 100, 1, 50, &s);
	assert_int_equal(s.tasks, 7);
	assert_int_equal(s.run_delay_ns, 7 + 10 + 3 + 4 + 5 + 20 + 1);
	assert_int_equal(s.run_delay_max_ns, 20);
	assert_string_equal(s.max_comm, "thread-b");
	assert_int_equal(s.timeslices, 14);
	assert_int_equal(s.run_ns, 7000);

	/* nothing of the workload's: zeros */
	struct agent_taskstats_rec none[] = {rec(60, 60, 2, 9, "kworker")};
	memset(&s, 0, sizeof(s));
	agent_taskstats_sum_records(none, 1, 100, 1, 0, &s);
	assert_int_equal(s.tasks, 0);
	assert_int_equal(s.run_delay_ns, 0);
}

/* A datagram as the kernel sends it: nlmsghdr, genlmsghdr, AGGR_PID
 * {PID, STATS}, then AGGR_TGID {TGID, STATS}, which must not count twice. */
static size_t put_attr(char *p, uint16_t type, const void *data, size_t len)
{
	struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type};
	memcpy(p, &a, sizeof(a));
	if (data)
		memcpy(p + NLA_HDRLEN, data, len);
	return NLA_ALIGN(a.nla_len);
}

static size_t aggr(char *p, uint16_t outer, uint16_t inner, uint32_t id, const struct taskstats *t)
{
	char body[sizeof(struct taskstats) + 64];
	size_t n = put_attr(body, inner, &id, sizeof(id));
	n += put_attr(body + n, TASKSTATS_TYPE_STATS, t, sizeof(*t));
	return put_attr(p, outer | NLA_F_NESTED, body, n);
}

static void test_parse_datagram(void **state)
{
	(void)state;
	static char buf[4096] __attribute__((aligned(8)));
	memset(buf, 0, sizeof(buf));
	struct taskstats t = {.version = TASKSTATS_VERSION, .ac_pid = 42, .ac_ppid = 7};
	t.ac_tgid = 41;
	t.cpu_delay_total = 123456;
	t.cpu_count = 9;
	t.cpu_run_virtual_total = 555;
	memcpy(t.ac_comm, "hackbench", 10);
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	char *p = buf + NLMSG_LENGTH(GENL_HDRLEN);
	p += aggr(p, TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, 42, &t);
	p += aggr(p, TASKSTATS_TYPE_AGGR_TGID, TASKSTATS_TYPE_TGID, 41, &t);
	h->nlmsg_len = (uint32_t)(p - buf);
	h->nlmsg_type = 0x20;

	struct agent_taskstats_rec out[4];
	unsigned version = 0;
	uint64_t seen = 0;
	assert_int_equal(parse_datagram(buf, h->nlmsg_len, out, 4, &version, &seen), 1);
	assert_int_equal(seen, 1);
	assert_int_equal(version, TASKSTATS_VERSION);
	assert_int_equal(out[0].pid, 42);
	assert_int_equal(out[0].tgid, 41);
	assert_int_equal(out[0].ppid, 7);
	assert_int_equal(out[0].delay_ns, 123456);
	assert_int_equal(out[0].count, 9);
	assert_int_equal(out[0].run_ns, 555);
	assert_string_equal(out[0].comm, "hackbench");

	/* cut anywhere: never a record out of bounds, never a crash */
	for (size_t cut = 0; cut < h->nlmsg_len; cut++) {
		h->nlmsg_len = (uint32_t)cut;
		seen = 0;
		size_t k = parse_datagram(buf, cut, out, 4, &version, &seen);
		assert_true(k <= 1);
	}
	/* no room: seen but not kept */
	h->nlmsg_len = (uint32_t)(p - buf);
	seen = 0;
	assert_int_equal(parse_datagram(buf, h->nlmsg_len, out, 0, &version, &seen), 0);
	assert_int_equal(seen, 1);
}

static void burn_ms(int ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

static void *burner(void *arg)
{
	(void)arg;
	burn_ms(30);
	return NULL;
}

static void test_live_kernel(void **state)
{
	(void)state;
	char root[] = "/tmp/test_agent_taskstats.XXXXXX";
	assert_non_null(mkdtemp(root));
	char path[128];
	const char *dirs[] = {"/proc", "/proc/sys", "/proc/sys/kernel"};
	for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
		snprintf(path, sizeof(path), "%s%s", root, dirs[i]);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	snprintf(path, sizeof(path), "%s/proc/sys/kernel/task_delayacct", root);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	char msg[256] = "";
	int fd = agent_taskstats_open(root, (int)sysconf(_SC_NPROCESSORS_CONF), msg, sizeof(msg));
	if (fd < 0) {
		print_message("skipped: %s\n", msg);
		skip();
	}
	agent_taskstats_drain(fd);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* two threads and a grandchild, 30 ms of CPU each */
		pthread_t t[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, burner, NULL);
		pid_t g = fork();
		if (g == 0) {
			burn_ms(30);
			_exit(0);
		}
		burner(NULL);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		waitpid(g, NULL, 0);
		_exit(0);
	}
	assert_int_equal(waitpid(child, NULL, 0), child);
	struct agent_taskstats_sum s;
	agent_taskstats_collect(fd, child, getpid(), 0, &s);
	close(fd);
	/* the child, its two threads, the grandchild */
	assert_int_equal(s.tasks, 4);
	assert_false(s.lost);
	assert_true(s.version >= 8);
	assert_true(s.timeslices >= 4);
	/* at least 4 x 30 ms of CPU time (each burns its own thread's) */
	print_message("4 tasks: %.1f ms on a CPU, %.1f ms waiting, %llu timeslices\n",
		      (double)s.run_ns / 1e6, (double)s.run_delay_ns / 1e6,
		      (unsigned long long)s.timeslices);
	if (s.run_ns < 120 * 1000000ull)
		fail_msg("run_ns %llu", (unsigned long long)s.run_ns);
	json_object *o = agent_taskstats_json(&s);
	assert_int_equal(json_object_get_int(json_object_object_get(o, "tasks")), 4);
	json_object_put(o);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_which_records_are_the_workloads),
	    cmocka_unit_test(test_parse_datagram),
	    cmocka_unit_test(test_live_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
