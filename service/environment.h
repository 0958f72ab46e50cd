/* The environment a result was measured in: accelerator, host cores, the
 * QEMU, libvirt and host kernel versions. */
#pragma once

#include "util/error.h"

/* A new object {accelerator, host_cores, host_kernel, qemu_version,
 * libvirt_version, schedlab_version, hostname}. Versions that cannot be read
 * are "unknown"; this never fails. */
json_object *environment_describe(const char *libvirt_uri, const char *accelerator);
