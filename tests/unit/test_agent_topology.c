/* Guest agent: the CPU topology read back from a fake sysfs tree (2 sockets
 * x 2 cores x 2 threads with core ids that repeat across sockets, a
 * non-uniform one, a missing CPU) and CPU 0's sched domain names, with 6.12's
 * debug/sched/verbose turned on around the read and restored (inotify counts
 * the writes: a fake tree cannot rebuild the directory as the kernel does).
 * The agent is a separate static binary, so its sources are compiled in. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/topology.c"
#include "agent/util.c"

struct tree {
	char dir[64];
};

static int tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/test_agent_topology.XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", t->dir);
	assert_int_equal(system(cmd), 0);
	free(t);
	return 0;
}

static void put(const char *root, const char *rel, const char *text)
{
	_cleanup_free_ char *p = agent_path(root, rel);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* CPU c in package pkg, core core. */
static void cpu(const char *root, int c, int pkg, int core)
{
	char rel[128], v[16];
	snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
	snprintf(v, sizeof(v), "%d\n", pkg);
	put(root, rel, v);
	snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
	snprintf(v, sizeof(v), "%d\n", core);
	put(root, rel, v);
}

static int get_int(json_object *o, const char *key)
{
	json_object *v = NULL;
	assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_int(v);
}

static void test_uniform(void **state)
{
	struct tree *t = *state;
	/* 2 sockets x 2 cores x 2 threads; core ids 0, 1 in each socket */
	for (int c = 0; c < 8; c++)
		cpu(t->dir, c, c / 4, (c / 2) % 2);
	put(t->dir, "/sys/kernel/debug/sched/domains/cpu0/domain0/name", "SMT\n");
	put(t->dir, "/sys/kernel/debug/sched/domains/cpu0/domain1/name", "MC\n");
	put(t->dir, "/sys/kernel/debug/sched/domains/cpu0/domain2/name", "PKG\n");
	json_object *o = agent_topology_read(t->dir, 8);
	assert_int_equal(get_int(o, "cpus"), 8);
	assert_int_equal(get_int(o, "sockets"), 2);
	assert_int_equal(get_int(o, "cores"), 2);
	assert_int_equal(get_int(o, "threads"), 2);
	json_object *d = NULL, *errors = NULL;
	assert_true(json_object_object_get_ex(o, "sched_domains", &d));
	assert_string_equal(json_object_to_json_string(d), "[ \"SMT\", \"MC\", \"PKG\" ]");
	assert_true(json_object_object_get_ex(o, "errors", &errors));
	assert_int_equal(json_object_array_length(errors), 0);
	json_object *numa = NULL;
	assert_true(json_object_object_get_ex(o, "numa", &numa));
	assert_null(numa); /* no NUMA in this kernel */
	json_object_put(o);

	/* NUMA nodes: the kernel's cpulist as printed, memory from meminfo */
	put(t->dir, "/sys/devices/system/node/node0/cpulist", "0-3\n");
	put(t->dir, "/sys/devices/system/node/node0/meminfo",
	    "Node 0 MemTotal:         250000 kB\nNode 0 MemFree:  1 kB\n");
	put(t->dir, "/sys/devices/system/node/node1/cpulist", "4-7\n");
	o = agent_topology_read(t->dir, 8);
	assert_true(json_object_object_get_ex(o, "numa", &numa));
	assert_string_equal(json_object_to_json_string_ext(numa, JSON_C_TO_STRING_PLAIN),
			    "[{\"node\":0,\"cpus\":\"0-3\",\"memory_kb\":250000},"
			    "{\"node\":1,\"cpus\":\"4-7\",\"memory_kb\":null}]");
	json_object_put(o);
}

static void test_not_uniform_and_missing(void **state)
{
	struct tree *t = *state;
	/* socket 0: 2 cores, socket 1: 1 core; CPU 3 has no topology */
	cpu(t->dir, 0, 0, 0);
	cpu(t->dir, 1, 0, 1);
	cpu(t->dir, 2, 1, 0);
	json_object *o = agent_topology_read(t->dir, 4);
	assert_int_equal(get_int(o, "cpus"), 3);
	assert_int_equal(get_int(o, "sockets"), 2);
	assert_int_equal(get_int(o, "cores"), 0);
	json_object *d = NULL, *errors = NULL;
	assert_true(json_object_object_get_ex(o, "sched_domains", &d));
	assert_null(d); /* no debugfs */
	assert_true(json_object_object_get_ex(o, "errors", &errors));
	assert_int_equal(json_object_array_length(errors), 2);
	assert_non_null(strstr(json_object_to_json_string(errors), "CPU 3"));
	assert_non_null(strstr(json_object_to_json_string(errors), "not uniform"));
	json_object_put(o);
}

/* The text of root/rel, in a static buffer. */
static const char *text(const char *root, const char *rel)
{
	static char buf[64];
	_cleanup_free_ char *p = agent_path(root, rel);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* Writes to root/rel (IN_MODIFY events; IN_OPEN is watched too, because
 * inotify merges identical adjacent events) while topology is read. */
static int writes_during_read(const char *root, const char *rel, json_object **ret)
{
	_cleanup_free_ char *p = agent_path(root, rel);
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(inotify_add_watch(fd, p, IN_MODIFY | IN_OPEN) >= 0);
	*ret = agent_topology_read(root, 2);
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int events = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (char *e = buf; e < buf + n;
		     e += sizeof(struct inotify_event) + ((struct inotify_event *)e)->len)
			events += !!(((struct inotify_event *)e)->mask & IN_MODIFY);
	close(fd);
	return events;
}

#define VERBOSE "/sys/kernel/debug/sched/verbose"

static void test_sched_verbose_turned_on_and_restored(void **state)
{
	struct tree *t = *state;
	cpu(t->dir, 0, 0, 0);
	cpu(t->dir, 1, 1, 0);
	put(t->dir, VERBOSE, "N\n");
	put(t->dir, "/sys/kernel/debug/sched/domains/cpu0/domain0/name", "PKG\n");
	json_object *o = NULL;
	/* Y written, then N written back */
	assert_int_equal(writes_during_read(t->dir, VERBOSE, &o), 2);
	assert_string_equal(text(t->dir, VERBOSE), "N\n");
	json_object *d = NULL;
	assert_true(json_object_object_get_ex(o, "sched_domains", &d));
	assert_string_equal(json_object_to_json_string(d), "[ \"PKG\" ]");
	json_object_put(o);
}

static void test_sched_verbose_already_on(void **state)
{
	struct tree *t = *state;
	cpu(t->dir, 0, 0, 0);
	cpu(t->dir, 1, 1, 0);
	put(t->dir, VERBOSE, "Y\n");
	put(t->dir, "/sys/kernel/debug/sched/domains/cpu0/domain0/name", "PKG\n");
	json_object *o = NULL;
	/* left alone: not written, so not turned off afterwards */
	assert_int_equal(writes_during_read(t->dir, VERBOSE, &o), 0);
	assert_string_equal(text(t->dir, VERBOSE), "Y\n");
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_uniform, tree_setup, tree_teardown),
	    cmocka_unit_test_setup_teardown(test_not_uniform_and_missing, tree_setup,
					    tree_teardown),
	    cmocka_unit_test_setup_teardown(test_sched_verbose_turned_on_and_restored, tree_setup,
					    tree_teardown),
	    cmocka_unit_test_setup_teardown(test_sched_verbose_already_on, tree_setup,
					    tree_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
