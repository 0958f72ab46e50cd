/* CPU lists as the kernel prints them (/sys/devices/system/node/nodeN/cpulist,
 * "0-1,4") and libvirt reads them (<cell cpus='0-1,4'>), for CPUs 0..63. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CPU_LIST_MAX_CPUS 64
#define CPU_LIST_TEXT_MAX 192 /* bytes of the longest list of 64 CPUs, NUL included */

/* Parses s ("N", "N-M", comma-separated, no spaces; a trailing newline is
 * allowed) into *mask. -EINVAL when s is empty, malformed, has a range that
 * runs backwards, or names a CPU >= CPU_LIST_MAX_CPUS. */
int cpu_list_parse(const char *s, uint64_t *mask);
/* The same for CPUs 0..max_cpus-1 of any representation: checks the whole
 * of s, then calls add(lo, hi, userdata) for each of its ranges. */
int cpu_list_each(const char *s, int max_cpus, void (*add)(int lo, int hi, void *userdata),
		  void *userdata);
/* The shortest list of the CPUs c < max_cpus with has(c, userdata), cut at a
 * whole entry when buf (len bytes) is too short. */
void cpu_list_format_each(int max_cpus, bool (*has)(int cpu, const void *userdata),
			  const void *userdata, char *buf, size_t len);
/* The shortest list for mask ("0-1,4"; "" for none) into buf of len bytes
 * (CPU_LIST_TEXT_MAX always suffices). */
void cpu_list_format(uint64_t mask, char *buf, size_t len);
