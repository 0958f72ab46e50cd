/* Free space: the floor below which the service starts no kernel build and
 * no guest run (docs/service.md "Disk and memory budgets"). A build that
 * ran the disk full would fail half-way, and a job whose end cannot be
 * stored would stay running; waiting for room (eviction, retention, an
 * operator) is the better failure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/statvfs.h>

#include "util/error.h"

/* A filesystem to watch, by the name shown to users (never its path: the
 * reason is served by the unauthenticated /v1/health). */
struct disk_fs {
	const char *label; /* "cache", "state" */
	const char *path;  /* a directory on it; NULL: skipped */
};

/* Free bytes for an unprivileged writer (f_bavail) and the size of path's
 * filesystem; the statvfs hook's answer when one is set. */
int disk_space(const char *path, unsigned long long *ret_free, unsigned long long *ret_size,
	       struct sl_error *err);
/* Tests: statvfs is this function instead; NULL restores statvfs(). */
void disk_set_statvfs_hook(int (*fn)(const char *path, struct statvfs *st));

/* 0 when every filesystem of fs[0..n) has at least floor bytes free (or the
 * floor is 0); 1 when one has not, with why ("Free space on the cache
 * filesystem is 1.2 GiB, below the floor min_free_bytes of 2.0 GiB.");
 * a negative errno with err when one cannot be read. */
int disk_floor_check(const struct disk_fs *fs, size_t n, unsigned long long floor, char *why,
		     size_t why_len, struct sl_error *err);

struct disk_wait {
	const struct disk_fs *fs;
	size_t n;
	unsigned long long floor;
	int max_s;  /* give up after this long (ERR_INFRA "disk_full") */
	int poll_s; /* between checks; <= 0: 10 */
	/* Called once per failed check with the reason; may be NULL. */
	void (*waiting)(void *ud, const char *why);
	/* Polled every second; nonzero stops with ERR_CANCELLED. May be NULL. */
	int (*cancelled)(void *ud);
	void *ud;
};

/* Returns at once when the floor holds, else waits, re-checking, until it
 * does (0, *ret_waited true), the wait is cancelled, or max_s passed. */
int disk_floor_wait(const struct disk_wait *w, bool *ret_waited, struct sl_error *err);
