/* The environment a result was measured in: accelerator, host cores, the
 * QEMU, libvirt and host kernel versions. */
#pragma once

#include "guest/guest.h"

/* A new object {accelerator, host_cores, host_kernel, hostname, qemu_version,
 * libvirt_version, libvirt_uri, schedlab_version}. Versions that cannot be
 * read are "unknown"; host may be NULL; with accelerator NULL (no guest
 * booted: no candidate kernel built) there is no "accelerator". Never fails. */
json_object *environment_describe(struct guest_host *host, const char *accelerator);
