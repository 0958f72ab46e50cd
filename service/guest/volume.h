/* Kernel and initramfs images on remote hypervisor hosts, through libvirt
 * storage: a "schedlab" directory pool on each host (defined, built and
 * started when missing), and content-addressed volumes uploaded with
 * virStorageVolUpload over the same connection the guests use. No ssh, no
 * file copying of our own. A local host needs none of this: guests boot
 * the files directly (guest.c stages them).
 *
 * Volume names are "<kind>-<first 32 hex digits of the SHA-256>" (kind is
 * "kernel" or "initrd"); an upload is skipped when a volume of that name
 * and the file's size is already there. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define VOLUME_POOL_NAME    "schedlab"
#define VOLUME_POOL_PATH    "/var/lib/libvirt/schedlab-pool"
#define VOLUME_CHUNK	    (256u * 1024)
#define VOLUME_MAX_BYTES    (2ull * 1024 * 1024 * 1024) /* bigger is not a kernel or initrd */
#define VOLUME_NAME_MAX	    64
#define VOLUME_KEEP_DEFAULT 8

typedef struct _virConnect *virConnectPtr;

/* Makes sure the pool VOLUME_POOL_NAME exists (a dir pool at
 * VOLUME_POOL_PATH on the host) and is active. Idempotent and safe to race
 * with another client doing the same. Returns 0 or -errno (ERR_INFRA). */
int volume_pool_ensure(virConnectPtr conn, struct sl_error *err);

struct volume_ref {
	char name[VOLUME_NAME_MAX]; /* the volume's name in the pool */
	char *path;		    /* its path on the hypervisor host (malloc'd) */
	bool uploaded;		    /* false: it was already there */
	double seconds;		    /* time spent, hashing and uploading */
	unsigned long long bytes;
};

/* Uploads the file at path (on this machine) into the pool as
 * "<kind>-<hash>", unless it is there already. sha256_hex may be the file's
 * known digest (64 hex digits) or NULL (then it is computed). On success
 * fills *ret (free its path with volume_ref_clear). A failed upload leaves
 * no volume under the final name: the data goes to "<name>.part" first and
 * is cloned into place by the host once complete. */
int volume_upload(virConnectPtr conn, const char *path, const char *kind, const char *sha256_hex,
		  struct volume_ref *ret, struct sl_error *err);
void volume_ref_clear(struct volume_ref *v);

/* Deletes the volume called name from the pool; a missing one is fine. */
int volume_delete(virConnectPtr conn, const char *name, struct sl_error *err);

/* Deletes all but the keep most recently used volumes (by the host's
 * access or modification time, whichever is later), never one whose name
 * is in the NULL-terminated list in_use (may be NULL). Returns the number
 * deleted, or -errno. */
int volume_evict(virConnectPtr conn, int keep, const char *const *in_use, struct sl_error *err);
