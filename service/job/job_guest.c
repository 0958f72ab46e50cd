/* A job's guest shape: vcpus, memory, topology, NUMA nodes and pinning
 * (docs/guests.md), checked and copied into the expanded guest (split
 * from job.c). */
#include <stdio.h>
#include <string.h>

#include "job/job.h"
#include "job/job-internal.h"
#include "util/cpu_list.h"
#include "util/macro.h"

/* sockets x cores x threads of a guest.topology object (each 1 when unset),
 * 0 when there is none or one is out of 1..GUEST_TOPOLOGY_MAX. */
int job_topology_product(json_object *t)
{
	int p = 1;
	if (!t)
		return 0;
	const char *keys[] = {"sockets", "cores", "threads"};
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		int v = json_member_int(t, keys[i], 1);
		if (v < 1 || v > GUEST_TOPOLOGY_MAX)
			return 0;
		p *= v;
	}
	return p;
}

/* guest.topology (docs/guests.md "Topology"): copied into the expanded
 * guest with every field set, when its product is the guest's vcpus. */
int job_expand_topology(json_object *t, json_object *guest, struct sl_error *err)
{
	if (!t)
		return 0;
	int vcpus = json_member_int(guest, "vcpus", 0);
	int s = json_member_int(t, "sockets", 1), c = json_member_int(t, "cores", 1),
	    h = json_member_int(t, "threads", 1);
	int cpus = job_topology_product(t);
	if (cpus == 0)
		return error_set_path(err, ERR_INVALID, "$.guest.topology",
				      "sockets, cores and threads must each be between 1 and %d.",
				      GUEST_TOPOLOGY_MAX);
	if (cpus != vcpus)
		return error_set_path(
		    err, ERR_INVALID, "$.guest.topology",
		    "%d socket(s) x %d core(s) x %d thread(s) is %d CPUs, not the "
		    "guest's %d vcpus.",
		    s, c, h, cpus, vcpus);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "sockets", json_object_new_int(s));
	json_object_object_add(o, "cores", json_object_new_int(c));
	json_object_object_add(o, "threads", json_object_new_int(h));
	json_object_object_add(guest, "topology", o);
	return 0;
}

/* guest.numa (docs/guests.md "NUMA"): 1..GUEST_NUMA_MAX nodes, each
 * {"cpus": "0-1", "memory_mb": N}; every vCPU in exactly one node, each
 * node at least GUEST_NUMA_MIN_MB, and the memory adding up to the guest's.
 * Copied into the expanded guest with each list in its shortest form. */
int job_expand_numa(json_object *numa, json_object *guest, struct sl_error *err)
{
	if (!numa)
		return 0;
	int vcpus = json_member_int(guest, "vcpus", 0),
	    memory = json_member_int(guest, "memory_mb", 0);
	size_t n = json_object_is_type(numa, json_type_array) ? json_object_array_length(numa) : 0;
	if (n < 1 || n > GUEST_NUMA_MAX)
		return error_set_path(err, ERR_INVALID, "$.guest.numa",
				      "numa must be a list of 1 to %d nodes.", GUEST_NUMA_MAX);
	uint64_t all = vcpus >= 64 ? UINT64_MAX : (UINT64_C(1) << vcpus) - 1, seen = 0;
	int total = 0;
	json_object *out = json_object_new_array();
	json_object_object_add(guest, "numa", out);
	for (size_t i = 0; i < n; i++) {
		char path[64], mpath[64];
		snprintf(path, sizeof(path), "$.guest.numa[%zu].cpus", i);
		snprintf(mpath, sizeof(mpath), "$.guest.numa[%zu].memory_mb", i);
		json_object *cell = json_object_array_get_idx(numa, i);
		const char *cpus = json_member_string(cell, "cpus");
		int mb = json_member_int(cell, "memory_mb", -1);
		uint64_t mask = 0;
		if (!cpus || cpu_list_parse(cpus, &mask) < 0 || strchr(cpus, '\n'))
			return error_set_path(
			    err, ERR_INVALID, path,
			    "cpus must be a CPU list such as \"0-1\" or \"0,2\".");
		if (mask & ~all)
			return error_set_path(
			    err, ERR_INVALID, path,
			    "cpus '%.64s' names a vCPU the guest's %d do not have.", cpus, vcpus);
		if (mask & seen)
			return error_set_path(err, ERR_INVALID, path,
					      "cpus '%.64s' names a vCPU of an earlier node.",
					      cpus);
		if (mb < GUEST_NUMA_MIN_MB || mb > memory)
			return error_set_path(err, ERR_INVALID, mpath,
					      "memory_mb must be between %d and the guest's %d.",
					      GUEST_NUMA_MIN_MB, memory);
		seen |= mask;
		total += mb;
		char list[CPU_LIST_TEXT_MAX];
		cpu_list_format(mask, list, sizeof(list));
		json_object *o = json_object_new_object();
		json_object_object_add(o, "cpus", json_object_new_string(list));
		json_object_object_add(o, "memory_mb", json_object_new_int(mb));
		json_object_array_add(out, o);
	}
	if (seen != all)
		return error_set_path(err, ERR_INVALID, "$.guest.numa",
				      "Every one of the guest's %d vCPUs must be in a node.",
				      vcpus);
	if (total != memory)
		return error_set_path(err, ERR_INVALID, "$.guest.numa",
				      "The nodes' memory_mb add up to %d, not the guest's %d.",
				      total, memory);
	return 0;
}

/* Defaults of a guest that does not say (docs/guests.md). */
#define DEFAULT_VCPUS	  2
#define DEFAULT_MEMORY_MB 512

int job_expand_guest(json_object *guest_in, const struct job_limits *limits, json_object *out,
		     int *ret_vcpus, struct sl_error *err)
{
	int r;
	/* Without vcpus, a topology gives the count (a bad one: expand_topology
	 * names it below). */
	int from_topology = job_topology_product(json_member(guest_in, "topology"));
	int vcpus =
	    json_member_int(guest_in, "vcpus", from_topology ? from_topology : DEFAULT_VCPUS);
	int memory = json_member_int(guest_in, "memory_mb", DEFAULT_MEMORY_MB);
	if (vcpus < 1 || vcpus > limits->max_vcpus)
		return error_set_path(err, ERR_INVALID, "$.guest.vcpus",
				      "vcpus must be between 1 and %d, not %d.", limits->max_vcpus,
				      vcpus);
	if (memory < 128 || memory > limits->max_memory_mb)
		return error_set_path(err, ERR_INVALID, "$.guest.memory_mb",
				      "memory_mb must be between 128 and %d, not %d.",
				      limits->max_memory_mb, memory);
	json_object *guest = json_object_new_object();
	json_object_object_add(guest, "vcpus", json_object_new_int(vcpus));
	json_object_object_add(guest, "memory_mb", json_object_new_int(memory));
	json_object_object_add(out, "guest", guest);
	r = job_expand_topology(json_member(guest_in, "topology"), guest, err);
	if (r < 0)
		return r;
	r = job_expand_numa(json_member(guest_in, "numa"), guest, err);
	if (r < 0)
		return r;
	/* guest.pinning (docs/guests.md "Pinning"): kept when set, so a job
	 * without it expands as before. */
	json_object *pinning = json_member(guest_in, "pinning");
	if (pinning) {
		const char *pv = json_object_is_type(pinning, json_type_string)
				     ? json_object_get_string(pinning)
				     : NULL;
		if (!pv || (strcmp(pv, "auto") != 0 && strcmp(pv, "off") != 0))
			return error_set_path(err, ERR_INVALID, "$.guest.pinning",
					      "pinning must be \"auto\" or \"off\".");
		json_object_object_add(guest, "pinning", json_object_new_string(pv));
	}
	*ret_vcpus = vcpus;
	return 0;
}
