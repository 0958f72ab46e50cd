/* A host's CPUs for pinning: see host_cpus.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libvirt/virterror.h>

#include "guest/guest-internal.h"
#include "guest/guest.h"
#include "guest/host_cpus.h"
#include "guest/pinning.h"

/* ORs into held the CPUs that dom's pinned vCPUs are on. */
static void held_by(virDomainPtr dom, const unsigned char *online, unsigned char *held)
{
	virDomainInfo info;
	if (virDomainGetInfo(dom, &info) < 0 || info.nrVirtCpu < 1) {
		virResetLastError();
		return;
	}
	int n = info.nrVirtCpu > GUEST_MAX_VCPUS ? GUEST_MAX_VCPUS : (int)info.nrVirtCpu;
	unsigned char *maps = calloc((size_t)n, PIN_MAP_BYTES);
	if (!maps)
		return;
	int got = virDomainGetVcpuPinInfo(dom, n, maps, PIN_MAP_BYTES, VIR_DOMAIN_AFFECT_LIVE);
	if (got < 0)
		virResetLastError();
	int n_online = pin_map_count(online);
	for (int v = 0; v < got && v < n; v++) {
		unsigned char *m = maps + (size_t)v * PIN_MAP_BYTES;
		for (int i = 0; i < PIN_MAP_BYTES; i++)
			m[i] &= online[i];
		if (pin_map_count(m) < n_online)
			for (int i = 0; i < PIN_MAP_BYTES; i++)
				held[i] |= m[i];
	}
	free(maps);
}

int host_cpus_read(virConnectPtr c, unsigned char *online, unsigned char *held,
		   struct sl_error *err)
{
	memset(online, 0, PIN_MAP_BYTES);
	memset(held, 0, PIN_MAP_BYTES);
	unsigned char *map = NULL;
	int n = virNodeGetCPUMap(c, &map, NULL, 0);
	if (n < 0) {
		int r = error_set(err, ERR_INFRA, EIO, "libvirt cannot list the host's CPUs: %s",
				  guest_virt_error());
		virResetLastError();
		return r;
	}
	int bytes = (n + 7) / 8 < PIN_MAP_BYTES ? (n + 7) / 8 : PIN_MAP_BYTES;
	memcpy(online, map, (size_t)bytes);
	free(map);
	virDomainPtr *doms = NULL;
	int nd = virConnectListAllDomains(c, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
	if (nd < 0) {
		int r = error_set(err, ERR_INFRA, EIO, "libvirt cannot list the host's guests: %s",
				  guest_virt_error());
		virResetLastError();
		return r;
	}
	for (int i = 0; i < nd; i++) {
		const char *name = virDomainGetName(doms[i]);
		if (name && strncmp(name, GUEST_DOMAIN_PREFIX, strlen(GUEST_DOMAIN_PREFIX)) == 0)
			held_by(doms[i], online, held);
		virDomainFree(doms[i]);
	}
	free(doms);
	return 0;
}
