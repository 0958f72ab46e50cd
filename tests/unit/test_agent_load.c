/* Guest agent: loads beside the measured workloads (agent/load.h), run on
 * the host for real: started before, restarted when they end, given up on
 * after failing in a row, stopped and reaped after, their CPU time over the
 * window. The agent's sources are compiled in here. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "agent/load.c"
#include "agent/plan.c"
#include "agent/run.c"
#include "agent/util.c"

static int sigfd = -1;

static int setup(void **state)
{
	(void)state;
	if (sigfd < 0)
		sigfd = agent_run_setup_signals();
	return sigfd < 0 ? -1 : 0;
}

static struct agent_plan *plan_of(const char *json)
{
	struct agent_plan *p = NULL;
	char err[512] = "";
	if (agent_plan_parse(json, strlen(json), &p, err, sizeof(err)) < 0)
		fail_msg("plan: %s", err);
	return p;
}

/* Starts the plan's loads, lets them settle, measures a window around one
 * measured workload (argv of plan workload `measured`), stops them. */
static void run_with_loads(struct agent_loads *L, const struct agent_plan *p, size_t measured)
{
	struct run_request req = {.argv = p->workloads[measured].argv, .timeout_s = 10};
	struct run_result res;
	unsigned orphans = 0;

	assert_int_equal(agent_loads_start(L, p, NULL, 1), 0);
	agent_loads_wait(L, sigfd, 300, &orphans);
	agent_loads_window_begin(L);
	assert_int_equal(agent_run_workload(sigfd, &req, &res, &orphans), 0);
	assert_int_equal(res.exit_code, 0);
	agent_run_result_done(&res);
	agent_loads_window_end(L);
	agent_loads_stop(L, sigfd, &orphans);
	/* every load's root process was reaped as a load, not as an orphan
	 * (a shell's own children may outlive it and be orphans: the
	 * restart test's `sleep`) */
	assert_true(orphans <= L->v[0].starts);
	for (size_t i = 0; i < L->n; i++)
		assert_int_equal(L->v[i].pid, 0);
}

static void test_plan_load_fields(void **state)
{
	struct agent_plan *p = NULL;
	char err[512] = "";
	(void)state;

	p = plan_of(
	    "{\"workloads\": [{\"name\": \"l\", \"argv\": [\"/bin/true\"], \"load\": true,"
	    " \"cpus\": [0, 3], \"nice\": 19}, {\"name\": \"m\", \"argv\": [\"/bin/true\"]}]}");
	assert_true(p->workloads[0].load);
	assert_int_equal(p->workloads[0].nice, 19);
	assert_int_equal(p->workloads[1].nice, 0);
	assert_true(p->workloads[0].has_cpus);
	assert_int_equal(p->workloads[0].n_cpus, 2);
	assert_true(CPU_ISSET(3, &p->workloads[0].cpus));
	assert_false(CPU_ISSET(1, &p->workloads[0].cpus));
	assert_false(p->workloads[1].load);
	assert_false(p->workloads[1].has_cpus);
	agent_plan_free(p);

	static const char *const bad[] = {
	    "{\"workloads\": [{\"name\": \"l\", \"argv\": [\"/bin/true\"], \"load\": 1}]}",
	    "{\"workloads\": [{\"name\": \"l\", \"argv\": [\"/bin/true\"], \"cpus\": []}]}",
	    "{\"workloads\": [{\"name\": \"l\", \"argv\": [\"/bin/true\"], \"cpus\": [1, 1]}]}",
	    "{\"workloads\": [{\"name\": \"l\", \"argv\": [\"/bin/true\"], \"cpus\": [1024]}]}",
	    "{\"workloads\": [{\"name\": \"l\", \"argv\": [\"/bin/true\"], \"cpus\": [-1]}]}",
	    "{\"workloads\": [{\"name\": \"l\", \"argv\": [\"/bin/true\"], \"cpus\": \"0\"}]}",
	    "{\"workloads\": [{\"name\": \"l\", \"argv\": [\"/bin/true\"], \"nice\": 20}]}",
	    "{\"workloads\": [{\"name\": \"l\", \"argv\": [\"/bin/true\"], \"nice\": -21}]}",
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		p = NULL;
		assert_int_equal(agent_plan_parse(bad[i], strlen(bad[i]), &p, err, sizeof(err)),
				 -EINVAL);
		assert_null(p);
		assert_non_null(strstr(err, "workloads[0]."));
	}
}

/* A load that crashes is restarted, then given up on with a reason that
 * names it, never left as a quiet idle measurement. */
static void test_load_that_crashes(void **state)
{
	struct agent_loads L;
	(void)state;
	struct agent_plan *p =
	    plan_of("{\"workloads\": [{\"name\": \"crash\", \"argv\": [\"/bin/sh\", \"-c\", "
		    "\"echo dying >&2; kill -SEGV $$\"], \"load\": true},"
		    " {\"name\": \"m\", \"argv\": [\"/bin/sleep\", \"0.5\"]}]}");

	run_with_loads(&L, p, 1);
	assert_int_equal(L.n, 1);
	struct agent_load *l = &L.v[0];
	assert_true(l->gave_up);
	assert_int_equal(l->failures, LOAD_MAX_CONSECUTIVE_FAILURES);
	assert_int_equal(l->starts, LOAD_MAX_CONSECUTIVE_FAILURES);
	assert_int_equal(l->completed, 0);
	assert_string_equal(l->last_failure, "killed by signal 11");
	assert_non_null(strstr(l->error, "load 'crash' failed 5 times in a row"));
	assert_true(l->cpu_end_us - l->cpu_begin_us < 200000);

	_cleanup_json_ json_object *o = agent_load_json(l);
	assert_true(json_object_get_boolean(json_object_object_get(o, "gave_up")));
	assert_int_equal(json_object_get_int(json_object_object_get(o, "failures")), 5);
	assert_int_equal(json_object_array_length(json_object_object_get(o, "outputs")), 0);
	agent_loads_free(&L);
	agent_plan_free(p);
}

/* A program that cannot start is a failure with the exec error kept. */
static void test_load_that_cannot_start(void **state)
{
	struct agent_loads L;
	(void)state;
	struct agent_plan *p = plan_of("{\"workloads\": [{\"name\": \"gone\", \"argv\": "
				       "[\"/nonexistent/load\"], \"load\": true},"
				       " {\"name\": \"m\", \"argv\": [\"/bin/true\"]}]}");

	run_with_loads(&L, p, 1);
	assert_true(L.v[0].gave_up);
	assert_non_null(strstr(L.v[0].last_failure, "execv failed"));
	assert_non_null(strstr(L.v[0].error, "load 'gone'"));
	agent_loads_free(&L);
	agent_plan_free(p);
}

/* A load that ends by itself is restarted; each completed iteration's
 * output is kept (the last LOAD_KEPT_ITERATIONS), oldest first. */
static void test_load_restarts_and_keeps_output(void **state)
{
	struct agent_loads L;
	(void)state;
	struct agent_plan *p =
	    plan_of("{\"workloads\": [{\"name\": \"hb\", \"argv\": [\"/bin/sh\", \"-c\", "
		    "\"sleep 0.05; echo Time: 0.05\"], \"load\": true},"
		    " {\"name\": \"m\", \"argv\": [\"/bin/sleep\", \"0.6\"]}]}");

	run_with_loads(&L, p, 1);
	struct agent_load *l = &L.v[0];
	assert_false(l->gave_up);
	assert_string_equal(l->error, "");
	assert_true(l->completed >= 3);
	assert_int_equal(l->failures, 0);
	/* the last one was stopped by SIGTERM: started, not completed */
	assert_true(l->starts >= l->completed);
	assert_true(l->n_kept >= 3);
	_cleanup_json_ json_object *o = agent_load_json(l);
	json_object *outs = json_object_object_get(o, "outputs");
	assert_int_equal(json_object_array_length(outs), l->n_kept);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(outs, 0)),
			    "Time: 0.05\n");
	agent_loads_free(&L);
	agent_plan_free(p);
}

/* A busy load's CPU time over the window is measured while it runs (the
 * live process group) and it is stopped with SIGTERM without counting as a
 * failure. */
static void test_busy_load_cpu(void **state)
{
	struct agent_loads L;
	(void)state;
	struct agent_plan *p =
	    plan_of("{\"workloads\": [{\"name\": \"spin\", \"argv\": [\"/bin/sh\", \"-c\", "
		    "\"while :; do :; done\"], \"load\": true, \"cpus\": [0], \"nice\": 10},"
		    " {\"name\": \"m\", \"argv\": [\"/bin/sleep\", \"1\"]}]}");

	run_with_loads(&L, p, 1);
	struct agent_load *l = &L.v[0];
	assert_false(l->gave_up);
	assert_int_equal(l->starts, 1);
	assert_int_equal(l->failures, 0);
	assert_int_equal(l->target_cpus, 1);
	long long window = l->window_end_ms - l->window_begin_ms;
	assert_true(window >= 900);
	/* a shared host gives a spinning shell less than a CPU, but some */
	double frac = (double)(l->cpu_end_us - l->cpu_begin_us) / ((double)window * 1000);
	print_message("busy load: %.2f of a CPU over %lld ms\n", frac, window);
	assert_true(frac > 0.05 && frac < 1.2);
	agent_loads_free(&L);

	/* while it runs, the load has the plan's nice value */
	unsigned orphans = 0;
	assert_int_equal(agent_loads_start(&L, p, NULL, 1), 0);
	agent_loads_wait(&L, sigfd, 200, &orphans);
	char path[64], buf[512] = "";
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)L.v[0].pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	int nice = 99;
	/* field 19 (nice) counts from the state, the 3rd field, after ')' */
	assert_int_equal(
	    sscanf(strrchr(buf, ')') + 1,
		   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %d", &nice),
	    1);
	assert_int_equal(nice, 10);
	agent_loads_stop(&L, sigfd, &orphans);
	agent_loads_free(&L);
	agent_plan_free(p);
}

/* /proc/<pid>/stat: the fields after the last ')', one process group. */
static void test_group_cpu_from_proc(void **state)
{
	char dir[] = "/tmp/test_agent_load.XXXXXX";
	char path[300];
	(void)state;
	assert_non_null(mkdtemp(dir));
	static const struct {
		const char *pid, *stat;
	} procs[] = {
	    /* the command holds ") " and a space */
	    {"7", "7 (x) y) S 1 7 7 0 -1 4194304 1 2 3 4 100 50 25 25 20 0 1 0\n"},
	    {"8", "8 (w) S 7 7 7 0 -1 0 1 2 3 4 10 10 0 0 20 0 1 0\n"},
	    {"9", "9 (other) S 1 9 9 0 -1 0 1 2 3 4 1000 1000 0 0 20 0 1 0\n"},
	    {"10", "garbage\n"},
	};
	for (size_t i = 0; i < ELEMENTSOF(procs); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, procs[i].pid);
		assert_int_equal(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/%s/stat", dir, procs[i].pid);
		assert_int_equal(agent_write_file(path, procs[i].stat, O_CREAT), 0);
	}
	long hz = sysconf(_SC_CLK_TCK);
	assert_int_equal(agent_load_group_cpu_us(dir, 7), 220 * 1000000LL / hz);
	assert_int_equal(agent_load_group_cpu_us(dir, 9), 2000 * 1000000LL / hz);
	assert_int_equal(agent_load_group_cpu_us(dir, 11), 0);
	assert_int_equal(agent_load_group_cpu_us("/nonexistent", 7), 0);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plan_load_fields),
	    cmocka_unit_test_setup(test_load_that_crashes, setup),
	    cmocka_unit_test_setup(test_load_that_cannot_start, setup),
	    cmocka_unit_test_setup(test_load_restarts_and_keeps_output, setup),
	    cmocka_unit_test_setup(test_busy_load_cpu, setup),
	    cmocka_unit_test(test_group_cpu_from_proc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
