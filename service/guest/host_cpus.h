/* What a hypervisor host's CPUs are doing, as libvirt tells it, for pinning
 * (pinning.h): which are online, and which the vCPUs of running schedlab
 * guests are pinned to (those of other schedlab processes too). */
#pragma once

#include <libvirt/libvirt.h>

#include "util/error.h"

/* Fills online and held (PIN_MAP_BYTES each, cleared first): the host's
 * online CPUs (virNodeGetCPUMap) and the CPUs that a vCPU of an active
 * domain named GUEST_DOMAIN_PREFIX* is pinned to (a vCPU whose affinity is
 * every online CPU is not pinned). -EIO with a sentence when libvirt cannot
 * say. */
int host_cpus_read(virConnectPtr c, unsigned char *online, unsigned char *held,
		   struct sl_error *err);
