/* The CPU topology the guest kernel sees (docs/guests.md "Topology"): read
 * from /sys/devices/system/cpu/cpuN/topology/ and, when SCHED_DEBUG's
 * debugfs is there, the names of CPU 0's sched domains (SMT, MC, PKG...),
 * which say whether the scheduler built the levels the topology implies.
 * Paths are under root ("" in the guest). */
#pragma once

#include <json-c/json.h>

/* At most this many CPUs are read (the job's vCPU limit). */
#define AGENT_TOPOLOGY_MAX_CPUS 64

/* {"cpus", "sockets", "cores" (per socket), "threads" (per core),
 * "sched_domains": [names] or null, "errors": [...]} for CPUs 0..nr_cpus-1.
 * cores and threads are 0 when the CPUs are not uniform (an error says so). */
json_object *agent_topology_read(const char *root, int nr_cpus);
