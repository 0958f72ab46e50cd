/* Content-addressed kernel and initramfs volumes on hypervisor hosts. See
 * volume.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guest/volume.h"
#include "util/hash.h"
#include "util/parse.h"
#include "util/time.h"

static const char *virt_msg(void)
{
	virErrorPtr e = virGetLastError();
	return e && e->message ? e->message : "unknown libvirt error";
}

static void pool_freep(virStoragePoolPtr *p)
{
	if (*p)
		virStoragePoolFree(*p);
}
static void vol_freep(virStorageVolPtr *v)
{
	if (*v)
		virStorageVolFree(*v);
}
#define _cleanup_pool_ _cleanup_(pool_freep)
#define _cleanup_vol_  _cleanup_(vol_freep)

static int pool_open(virConnectPtr conn, virStoragePoolPtr *ret, struct sl_error *err)
{
	static const char xml[] = "<pool type='dir'><name>" VOLUME_POOL_NAME "</name>"
				  "<target><path>" VOLUME_POOL_PATH "</path>"
				  "<permissions><mode>0755</mode></permissions></target></pool>";
	virStoragePoolPtr p = virStoragePoolLookupByName(conn, VOLUME_POOL_NAME);
	if (!p) {
		virResetLastError();
		p = virStoragePoolDefineXML(conn, xml, 0);
		if (p) {
			/* Build makes the directory; it may exist from an earlier
			 * definition, which is fine. */
			if (virStoragePoolBuild(p, 0) < 0)
				virResetLastError();
			if (virStoragePoolSetAutostart(p, 1) < 0)
				virResetLastError();
		} else {
			/* Another client may have defined it meanwhile. */
			p = virStoragePoolLookupByName(conn, VOLUME_POOL_NAME);
		}
		if (!p)
			return error_set(err, ERR_INFRA, EIO,
					 "Cannot define the storage pool '" VOLUME_POOL_NAME
					 "' at '" VOLUME_POOL_PATH "' on the host: %s.",
					 virt_msg());
	}
	if (virStoragePoolIsActive(p) != 1 && virStoragePoolCreate(p, 0) < 0 &&
	    virStoragePoolIsActive(p) != 1) {
		int r = error_set(err, ERR_INFRA, EIO,
				  "Cannot start the storage pool '" VOLUME_POOL_NAME "': %s.",
				  virt_msg());
		virStoragePoolFree(p);
		return r;
	}
	*ret = p;
	return 0;
}

int volume_pool_ensure(virConnectPtr conn, struct sl_error *err)
{
	_cleanup_pool_ virStoragePoolPtr p = NULL;
	return pool_open(conn, &p, err);
}

void volume_ref_clear(struct volume_ref *v)
{
	if (!v)
		return;
	free(v->path);
	v->path = NULL;
}

/* Sends the file through an upload stream in VOLUME_CHUNK pieces. */
static int send_file(virConnectPtr conn, virStorageVolPtr vol, int fd, unsigned long long size,
		     const char *name, struct sl_error *err)
{
	virStreamPtr st = virStreamNew(conn, 0);
	if (!st)
		return error_set(err, ERR_INFRA, EIO, "Cannot open a stream for '%s': %s.", name,
				 virt_msg());
	int r = 0;
	_cleanup_free_ char *buf = malloc(VOLUME_CHUNK);
	if (!buf) {
		r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		goto out;
	}
	if (virStorageVolUpload(vol, st, 0, size, 0) < 0) {
		r = error_set(err, ERR_INFRA, EIO, "Cannot start the upload of '%s': %s.", name,
			      virt_msg());
		goto out;
	}
	unsigned long long left = size;
	while (left > 0) {
		ssize_t n = read(fd, buf, left < VOLUME_CHUNK ? left : VOLUME_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = error_set(err, ERR_INTERNAL, n < 0 ? errno : EIO,
				      "Cannot read the file for '%s' (it changed size?).", name);
			virStreamAbort(st);
			goto out;
		}
		for (ssize_t off = 0; off < n;) {
			int w = virStreamSend(st, buf + off, (size_t)(n - off));
			if (w < 0) {
				r = error_set(err, ERR_INFRA, EIO, "The upload of '%s' failed: %s.",
					      name, virt_msg());
				virStreamAbort(st);
				goto out;
			}
			off += w;
		}
		left -= (unsigned long long)n;
	}
	if (virStreamFinish(st) < 0)
		r = error_set(err, ERR_INFRA, EIO, "The upload of '%s' did not complete: %s.", name,
			      virt_msg());
out:
	virStreamFree(st);
	return r;
}

static virStorageVolPtr vol_create(virStoragePoolPtr pool, const char *name,
				   unsigned long long size, virStorageVolPtr clone_from)
{
	char xml[512];
	snprintf(xml, sizeof(xml),
		 "<volume><name>%s</name><capacity unit='bytes'>%llu</capacity>"
		 "<target><format type='raw'/><permissions><mode>0644</mode></permissions>"
		 "</target></volume>",
		 name, size);
	return clone_from ? virStorageVolCreateXMLFrom(pool, xml, clone_from, 0)
			  : virStorageVolCreateXML(pool, xml, 0);
}

static void vol_drop(virStoragePoolPtr pool, const char *name)
{
	virStorageVolPtr v = virStorageVolLookupByName(pool, name);
	if (v) {
		virStorageVolDelete(v, 0);
		virStorageVolFree(v);
	}
	virResetLastError();
}

int volume_upload(virConnectPtr conn, const char *path, const char *kind, const char *sha256_hex,
		  struct volume_ref *ret, struct sl_error *err)
{
	double t0 = time_monotonic_s();
	memset(ret, 0, sizeof(*ret));
	if (!kind || (strcmp(kind, "kernel") != 0 && strcmp(kind, "initrd") != 0))
		return error_set(err, ERR_INTERNAL, EINVAL, "The volume kind '%s' is unknown.",
				 kind ? kind : "");
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot open '%s' for upload: %s.", path,
				 strerror(errno));
	if (!S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
	    (unsigned long long)sb.st_size > VOLUME_MAX_BYTES)
		return error_set(err, ERR_INVALID, EFBIG,
				 "'%s' is not a regular file of 1 byte to %llu bytes.", path,
				 VOLUME_MAX_BYTES);
	unsigned long long size = (unsigned long long)sb.st_size;
	char hex[HASH_HEX_LEN];
	if (sha256_hex && strlen(sha256_hex) == 64) {
		memcpy(hex, sha256_hex, HASH_HEX_LEN);
	} else {
		int r = hash_file_hex(path, hex, err);
		if (r < 0)
			return r;
	}
	char name[VOLUME_NAME_MAX], part[VOLUME_NAME_MAX + 8];
	snprintf(name, sizeof(name), "%s-%.32s", kind, hex);
	snprintf(part, sizeof(part), "%s.part", name);

	_cleanup_pool_ virStoragePoolPtr pool = NULL;
	int r = pool_open(conn, &pool, err);
	if (r < 0)
		return r;
	/* Another client may have added volumes behind libvirt's back. */
	if (virStoragePoolRefresh(pool, 0) < 0)
		virResetLastError();
	_cleanup_vol_ virStorageVolPtr vol = virStorageVolLookupByName(pool, name);
	virStorageVolInfo info;
	if (vol && virStorageVolGetInfo(vol, &info) == 0 && info.capacity == size) {
		ret->uploaded = false;
	} else {
		virResetLastError();
		if (vol) {
			/* Same name, other size: not ours to trust. */
			virStorageVolDelete(vol, 0);
			virStorageVolFree(vol);
			vol = NULL;
		}
		vol_drop(pool, part);
		_cleanup_vol_ virStorageVolPtr pv = vol_create(pool, part, size, NULL);
		if (!pv)
			return error_set(err, ERR_INFRA, EIO, "Cannot create the volume '%s': %s.",
					 part, virt_msg());
		r = send_file(conn, pv, fd, size, part, err);
		if (r >= 0) {
			vol = vol_create(pool, name, size, pv);
			if (!vol) {
				/* A racing client may have just made it. */
				virResetLastError();
				vol = virStorageVolLookupByName(pool, name);
			}
			if (!vol)
				r = error_set(err, ERR_INFRA, EIO,
					      "Cannot create the volume '%s' from '%s': %s.", name,
					      part, virt_msg());
		}
		virStorageVolDelete(pv, 0);
		virResetLastError();
		if (r < 0)
			return r;
		ret->uploaded = true;
	}
	char *vpath = virStorageVolGetPath(vol);
	if (!vpath)
		return error_set(err, ERR_INFRA, EIO, "Cannot get the path of the volume '%s': %s.",
				 name, virt_msg());
	ret->path = vpath;
	snprintf(ret->name, sizeof(ret->name), "%s", name);
	ret->bytes = size;
	ret->seconds = time_monotonic_s() - t0;
	return 0;
}

int volume_delete(virConnectPtr conn, const char *name, struct sl_error *err)
{
	_cleanup_pool_ virStoragePoolPtr pool = NULL;
	int r = pool_open(conn, &pool, err);
	if (r < 0)
		return r;
	vol_drop(pool, name);
	return 0;
}

/* The later of <atime> and <mtime> in a volume's XML, in seconds. */
static double vol_used_at(virStorageVolPtr v)
{
	_cleanup_free_ char *xml = virStorageVolGetXMLDesc(v, 0);
	double best = 0;
	static const char *const tags[] = {"<atime>", "<mtime>"};
	for (size_t i = 0; xml && i < ELEMENTSOF(tags); i++) {
		const char *s = strstr(xml, tags[i]);
		if (!s)
			continue;
		/* "<atime>1700000000.123456789</atime>" */
		char num[48];
		double t = 0;
		s += strlen(tags[i]);
		snprintf(num, sizeof(num), "%.*s", (int)strcspn(s, "<"), s);
		if (parse_double(num, &t) == 0 && t > best)
			best = t;
	}
	return best;
}

struct vol_age {
	virStorageVolPtr vol;
	double used;
};

static int by_used_desc(const void *a, const void *b)
{
	double x = ((const struct vol_age *)a)->used, y = ((const struct vol_age *)b)->used;
	return x < y ? 1 : x > y ? -1 : 0;
}

int volume_evict(virConnectPtr conn, int keep, const char *const *in_use, struct sl_error *err)
{
	_cleanup_pool_ virStoragePoolPtr pool = NULL;
	int r = pool_open(conn, &pool, err);
	if (r < 0)
		return r;
	if (virStoragePoolRefresh(pool, 0) < 0)
		virResetLastError();
	virStorageVolPtr *vols = NULL;
	int n = virStoragePoolListAllVolumes(pool, &vols, 0);
	if (n < 0)
		return error_set(err, ERR_INFRA, EIO,
				 "Cannot list the volumes of the pool '" VOLUME_POOL_NAME "': %s.",
				 virt_msg());
	struct vol_age *a = calloc((size_t)n + 1, sizeof(*a));
	bool oom = !a;
	int m = 0, deleted = 0;
	for (int i = 0; i < n; i++) {
		const char *vname = virStorageVolGetName(vols[i]);
		bool busy = !vname || strstr(vname, ".part");
		for (size_t k = 0; !busy && in_use && in_use[k]; k++)
			busy = strcmp(in_use[k], vname) == 0;
		if (busy || !a) {
			virStorageVolFree(vols[i]);
			continue;
		}
		a[m].vol = vols[i];
		a[m].used = vol_used_at(vols[i]);
		m++;
	}
	free(vols);
	if (a)
		qsort(a, (size_t)m, sizeof(*a), by_used_desc);
	for (int i = 0; i < m; i++) {
		if (i >= (keep > 0 ? keep : 0)) {
			if (virStorageVolDelete(a[i].vol, 0) == 0)
				deleted++;
			else
				virResetLastError();
		}
		virStorageVolFree(a[i].vol);
	}
	free(a);
	if (oom)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	return deleted;
}
