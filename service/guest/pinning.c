/* Host CPU pinning of a guest: see pinning.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "guest/pinning.h"
#include "util/cpu_list.h"

int pin_map_count(const unsigned char *map)
{
	int n = 0;
	for (int i = 0; i < PIN_MAP_BYTES; i++)
		n += __builtin_popcount(map[i]);
	return n;
}

void pinning_choose(const unsigned char *online, const unsigned char *taken, int vcpus,
		    struct guest_pinning *out)
{
	memset(out, 0, sizeof(*out));
	out->n_vcpus = vcpus;
	unsigned char free_map[PIN_MAP_BYTES];
	for (int i = 0; i < PIN_MAP_BYTES; i++)
		free_map[i] = online[i] & (unsigned char)~taken[i];
	int n_online = pin_map_count(online), n_free = pin_map_count(free_map);
	if (vcpus < 1 || vcpus > GUEST_MAX_VCPUS || n_free < vcpus + 1) {
		snprintf(out->reason, sizeof(out->reason),
			 "the host has %d online CPU(s), %d of them held by other pinned "
			 "guests; %d vCPU(s) need %d free (one each and one for the emulator)",
			 n_online, n_online - n_free, vcpus, vcpus + 1);
		return;
	}
	int v = 0;
	for (int c = PIN_MAX_HOST_CPUS - 1; c >= 0 && v < vcpus; c--)
		if (pin_map_has(free_map, c)) {
			out->vcpu_cpu[v++] = c;
			pin_map_set(free_map, c, false);
		}
	pin_map_format(free_map, out->emulator, sizeof(out->emulator));
	out->pinned = true;
}

static bool in_map(int cpu, const void *userdata)
{
	return pin_map_has(userdata, cpu);
}

void pin_map_format(const unsigned char *map, char *buf, size_t len)
{
	cpu_list_format_each(PIN_MAX_HOST_CPUS, in_map, map, buf, len);
}

static void add_to_map(int lo, int hi, void *userdata)
{
	for (int c = lo; c <= hi; c++)
		pin_map_set(userdata, c, true);
}

int pin_map_parse(const char *s, unsigned char *map)
{
	memset(map, 0, PIN_MAP_BYTES);
	return cpu_list_each(s, PIN_MAX_HOST_CPUS, add_to_map, map);
}
