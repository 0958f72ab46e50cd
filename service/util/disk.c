/* Free space and its floor; see disk.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/disk.h"
#include "util/time.h"

static int (*statvfs_hook)(const char *path, struct statvfs *st);

void disk_set_statvfs_hook(int (*fn)(const char *path, struct statvfs *st))
{
	statvfs_hook = fn;
}

int disk_space(const char *path, unsigned long long *ret_free, unsigned long long *ret_size,
	       struct sl_error *err)
{
	struct statvfs st;
	if ((statvfs_hook ? statvfs_hook(path, &st) : statvfs(path, &st)) < 0)
		return error_set(err, ERR_INTERNAL, errno,
				 "Cannot read the free space of '%s': %s.", path, strerror(errno));
	*ret_free = (unsigned long long)st.f_bavail * st.f_frsize;
	*ret_size = (unsigned long long)st.f_blocks * st.f_frsize;
	return 0;
}

static double gib(unsigned long long bytes)
{
	return (double)bytes / (1024.0 * 1024.0 * 1024.0);
}

int disk_floor_check(const struct disk_fs *fs, size_t n, unsigned long long floor, char *why,
		     size_t why_len, struct sl_error *err)
{
	if (!floor)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!fs[i].path)
			continue;
		unsigned long long avail, size;
		int r = disk_space(fs[i].path, &avail, &size, err);
		if (r < 0)
			return r;
		if (avail >= floor)
			continue;
		snprintf(why, why_len,
			 "Free space on the %s filesystem is %.1f GiB, below the floor "
			 "min_free_bytes of %.1f GiB.",
			 fs[i].label, gib(avail), gib(floor));
		return 1;
	}
	return 0;
}

int disk_floor_wait(const struct disk_wait *w, bool *ret_waited, struct sl_error *err)
{
	char why[256] = "";
	int poll_s = w->poll_s > 0 ? w->poll_s : 10;
	double start = time_monotonic_s();
	bool waited = false;
	for (;;) {
		int r = disk_floor_check(w->fs, w->n, w->floor, why, sizeof(why), err);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		if (time_monotonic_s() - start >= w->max_s) {
			r = error_set(err, ERR_INFRA, ENOSPC,
				      "%s Waited %d s for room, then gave up.", why, w->max_s);
			if (err)
				snprintf(err->code, sizeof(err->code), "disk_full");
			return r;
		}
		waited = true;
		if (w->waiting)
			w->waiting(w->ud, why);
		/* one-second steps, so a cancel is seen promptly */
		for (int s = 0; s < poll_s && time_monotonic_s() - start < w->max_s; s++) {
			if (w->cancelled && w->cancelled(w->ud))
				return error_set(err, ERR_CANCELLED, ECANCELED,
						 "Cancelled while waiting for disk space.");
			struct timespec ts = {1, 0};
			nanosleep(&ts, NULL);
		}
	}
	if (ret_waited)
		*ret_waited = waited;
	return 0;
}
