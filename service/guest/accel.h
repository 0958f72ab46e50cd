/* The accelerator: KVM where it really boots a guest, else TCG.
 *
 * /dev/kvm existing proves nothing (a kvm_pvm host module hangs normal
 * kernels in their decompressor), so "auto" boots a short probe guest under
 * KVM and takes KVM only if the kernel prints its banner within
 * ACCEL_PROBE_TIMEOUT_S. The answer is cached per host in
 * <cache>/accel.json, keyed by libvirt URI, QEMU version and host kernel
 * release, so a host is probed once. */
#pragma once

#include "guest/guest.h"

#define ACCEL_PROBE_TIMEOUT_S 15

/* Probes KVM now (no cache): *ret is "kvm" or "tcg"; *ret_reason (malloc'd,
 * may be NULL) says why. Errors only when the host itself fails. */
int accel_probe(struct guest_host *h, const char *kernel, const char *initrd, char ret[8],
		char **ret_reason, struct sl_error *err);

/* Resolves requested ("auto" or NULL, "kvm", "tcg") into "kvm" or "tcg" in
 * ret. "auto" reads <cache_dir>/accel.json or probes with kernel and initrd
 * and writes it. A forced "kvm" or "tcg" is taken as is. An unknown value is
 * an ERR_INVALID error. */
int accel_resolve(struct guest_host *h, const char *cache_dir, const char *requested,
		  const char *kernel, const char *initrd, char ret[8], struct sl_error *err);
