/* Host CPU pinning of a guest (docs/guests.md "Pinning"): each vCPU gets a
 * host CPU of its own and QEMU's other threads (the emulator: I/O, the main
 * loop) get the host CPUs no pinned vCPU holds, when the host has CPUs to
 * spare. Pure: the host's state comes in as bitmaps (bit N of byte N / 8:
 * host CPU N), as libvirt's virNodeGetCPUMap() gives them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "guest/domain_xml.h"

#define PIN_MAX_HOST_CPUS GUEST_MAX_HOST_CPUS
#define PIN_MAP_BYTES	  (PIN_MAX_HOST_CPUS / 8)
#define PIN_LIST_MAX	  GUEST_CPU_LIST_MAX

struct guest_pinning {
	bool pinned;
	int n_vcpus;
	int vcpu_cpu[GUEST_MAX_VCPUS]; /* the host CPU of vCPU i, when pinned */
	char emulator[PIN_LIST_MAX];   /* the emulator's host CPUs, when pinned */
	char reason[256];	       /* why not, when not pinned */
};

static inline bool pin_map_has(const unsigned char *map, int cpu)
{
	return cpu >= 0 && cpu < PIN_MAX_HOST_CPUS && (map[cpu / 8] >> (cpu % 8)) & 1;
}
static inline void pin_map_set(unsigned char *map, int cpu, bool on)
{
	if (cpu < 0 || cpu >= PIN_MAX_HOST_CPUS)
		return;
	if (on)
		map[cpu / 8] |= (unsigned char)(1u << (cpu % 8));
	else
		map[cpu / 8] &= (unsigned char)~(1u << (cpu % 8));
}

/* Chooses for a guest of vcpus vCPUs among the host's online CPUs those no
 * other guest's vCPU holds (taken). Pinned when at least vcpus + 1 are free:
 * the vCPUs take the highest-numbered free CPUs (CPU 0 takes most of the
 * host's interrupts), one each, and the emulator every online CPU that is
 * neither taken nor one of them. Otherwise not pinned, with the reason
 * (counts of online, taken and needed CPUs). */
void pinning_choose(const unsigned char *online, const unsigned char *taken, int vcpus,
		    struct guest_pinning *out);

/* How many CPUs map holds. */
int pin_map_count(const unsigned char *map);

/* The shortest list of the CPUs in map ("0-1,4"; "" for none) into buf. */
void pin_map_format(const unsigned char *map, char *buf, size_t len);

/* Parses a host CPU list ("0-3,8", as libvirt and the kernel print them) into
 * map (cleared first). -EINVAL when malformed or beyond PIN_MAX_HOST_CPUS. */
int pin_map_parse(const char *s, unsigned char *map);
