/* Reading the guest's CPU topology back; see topology.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/topology.h"
#include "agent/util.h"

/* The leading integer of root/rel, or -1. */
static long read_long(const char *root, const char *rel)
{
	_cleanup_free_ char *path = agent_path(root, rel);
	_cleanup_free_ char *data = NULL;
	size_t n = 0;
	if (agent_read_file(path, 64, &data, &n) < 0 || n == 0)
		return -1;
	char *end;
	long v = strtol(data, &end, 10);
	return end == data || v < 0 ? -1 : v;
}

/* Index of v in seen[0..*n), added when absent. */
static int intern(long *seen, int *n, long v)
{
	for (int i = 0; i < *n; i++)
		if (seen[i] == v)
			return i;
	seen[*n] = v;
	return (*n)++;
}

#define SCHED_VERBOSE "/sys/kernel/debug/sched/verbose"

/* Turns debugfs's sched/verbose on when the file exists and is off: 6.12's
 * kernel/sched/debug.c fills sched/domains/ only while it is on (6.1 always
 * does), and writing Y builds the directory at once. Returns true when it
 * was turned on here, so sched_verbose_restore turns it off again (which
 * removes the directory, as before). */
static bool sched_verbose_on(const char *root)
{
	_cleanup_free_ char *path = agent_path(root, SCHED_VERBOSE);
	_cleanup_free_ char *data = NULL;
	size_t n = 0;
	if (agent_read_file(path, 16, &data, &n) < 0 || n == 0 || data[0] == 'Y')
		return false;
	return agent_write_file(path, "Y", 0) == 0;
}

static void sched_verbose_restore(const char *root, bool was_turned_on)
{
	if (!was_turned_on)
		return;
	_cleanup_free_ char *path = agent_path(root, SCHED_VERBOSE);
	(void)agent_write_file(path, "N", 0);
}

/* The names of cpu0's sched domains, lowest level first, or NULL when
 * debugfs has no sched/domains (no SCHED_DEBUG, or not mounted). */
static json_object *sched_domains(const char *root)
{
	bool turned_on = sched_verbose_on(root);
	json_object *names = NULL;
	for (int d = 0; d < 8; d++) {
		char rel[96];
		snprintf(rel, sizeof(rel), "/sys/kernel/debug/sched/domains/cpu0/domain%d/name", d);
		_cleanup_free_ char *path = agent_path(root, rel);
		_cleanup_free_ char *data = NULL;
		size_t n = 0;
		if (agent_read_file(path, 64, &data, &n) < 0)
			break;
		data[strcspn(data, "\n")] = '\0';
		if (!names)
			names = json_object_new_array();
		_cleanup_free_ char *clean = agent_utf8_clean(data, strlen(data));
		json_object_array_add(names, json_object_new_string(clean));
	}
	sched_verbose_restore(root, turned_on);
	return names;
}

/* The NUMA nodes from /sys/devices/system/node (a kernel with NUMA):
 * [{"node", "cpus" (the kernel's cpulist, as printed), "memory_kb"}] for
 * node0..node7 that exist, or NULL when there is no node0. The host parses
 * and checks the lists (run_record.c). */
static json_object *numa_nodes(const char *root)
{
	json_object *nodes = NULL;
	for (int n = 0; n < 8; n++) {
		char rel[96];
		snprintf(rel, sizeof(rel), "/sys/devices/system/node/node%d/cpulist", n);
		_cleanup_free_ char *path = agent_path(root, rel);
		_cleanup_free_ char *data = NULL;
		size_t len = 0;
		if (agent_read_file(path, 256, &data, &len) < 0)
			continue;
		data[strcspn(data, "\n")] = '\0';
		_cleanup_free_ char *clean = agent_utf8_clean(data, strlen(data));
		json_object *o = json_object_new_object();
		json_object_object_add(o, "node", json_object_new_int(n));
		json_object_object_add(o, "cpus", json_object_new_string(clean));
		/* "Node 0 MemTotal:         250000 kB" */
		snprintf(rel, sizeof(rel), "/sys/devices/system/node/node%d/meminfo", n);
		_cleanup_free_ char *mpath = agent_path(root, rel);
		_cleanup_free_ char *mem = NULL;
		const char *t;
		long long kb = -1;
		if (agent_read_file(mpath, 4096, &mem, &len) == 0 && (t = strstr(mem, "MemTotal:")))
			kb = strtoll(t + 9, NULL, 10);
		json_object_object_add(o, "memory_kb", kb >= 0 ? json_object_new_int64(kb) : NULL);
		if (!nodes)
			nodes = json_object_new_array();
		json_object_array_add(nodes, o);
	}
	return nodes;
}

json_object *agent_topology_read(const char *root, int nr_cpus)
{
	json_object *o = json_object_new_object();
	json_object *errors = json_object_new_array();
	if (nr_cpus > AGENT_TOPOLOGY_MAX_CPUS)
		nr_cpus = AGENT_TOPOLOGY_MAX_CPUS;
	long pkgs[AGENT_TOPOLOGY_MAX_CPUS], cores[AGENT_TOPOLOGY_MAX_CPUS];
	int n_pkgs = 0, n_cores = 0, per_core[AGENT_TOPOLOGY_MAX_CPUS] = {0};
	int cores_in_pkg[AGENT_TOPOLOGY_MAX_CPUS] = {0};
	int cpus = 0;
	for (int c = 0; c < nr_cpus; c++) {
		char rel[96];
		snprintf(rel, sizeof(rel),
			 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		long pkg = read_long(root, rel);
		snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
		long core = read_long(root, rel);
		if (pkg < 0 || core < 0) {
			agent_error_add(errors, "CPU %d has no readable topology in sysfs.", c);
			continue;
		}
		cpus++;
		int p = intern(pkgs, &n_pkgs, pkg);
		/* a core is (package, core_id): core ids repeat across packages */
		int before = n_cores;
		int k = intern(cores, &n_cores, pkg * 65536 + core);
		if (n_cores > before)
			cores_in_pkg[p]++;
		per_core[k]++;
	}
	int cores_per_pkg = n_pkgs ? cores_in_pkg[0] : 0;
	int threads = n_cores ? per_core[0] : 0;
	for (int p = 1; p < n_pkgs; p++)
		if (cores_in_pkg[p] != cores_per_pkg)
			cores_per_pkg = 0;
	for (int k = 1; k < n_cores; k++)
		if (per_core[k] != threads)
			threads = 0;
	if (cpus && (!cores_per_pkg || !threads))
		agent_error_add(errors,
				"The CPUs are not uniform: %d package(s) do not all have the same "
				"number of cores and threads.",
				n_pkgs);
	json_object_object_add(o, "cpus", json_object_new_int(cpus));
	json_object_object_add(o, "sockets", json_object_new_int(n_pkgs));
	json_object_object_add(o, "cores", json_object_new_int(cores_per_pkg));
	json_object_object_add(o, "threads", json_object_new_int(threads));
	json_object_object_add(o, "sched_domains", sched_domains(root));
	json_object_object_add(o, "numa", numa_nodes(root));
	json_object_object_add(o, "errors", errors);
	return o;
}
