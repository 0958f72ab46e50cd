/* The service's configuration file (JSON), one table of settings:
 *
 *   {"listen": "127.0.0.1:8080",
 *    "tokens": [{"token": "...", "roles": ["submit", "read"]}],
 *    "limits": {"max_body_bytes": 8388608, "max_vcpus": 64, "max_repeat": 50,
 *               "max_patches": 200, "max_patch_bytes": 4194304,
 *               "max_guest_seconds": 7200},
 *    "workers": 2, "build_slots": 1, "guest_slots": 1,
 *    "cache_dir": "...", "libvirt_uri": "qemu:///system", "accelerator": "auto",
 *    "hypervisors": [{"uri": "qemu:///system", "slots": 1, "labels": ["kvm"]}]}
 *
 * Every key is optional; unknown keys are an error (a typo must not turn a
 * limit off). Tokens are kept only as SHA-256 digests and compared in
 * constant time. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include "job/job.h"
#include "util/cron.h"
#include "util/error.h"
#include "util/hash.h"

struct hostpool;

enum {
	SERVICE_ROLE_SUBMIT = 1 << 0, /* POST and DELETE jobs */
	SERVICE_ROLE_READ = 1 << 1,   /* GET jobs, results, logs, events, metrics */
	SERVICE_ROLE_ADMIN = 1 << 2,  /* priority above 0, cancel any job, no quotas */
};

#define SERVICE_TOKEN_NAME_MAX 64

struct service_token {
	char sha256[HASH_HEX_LEN];
	unsigned roles;
	/* "name" from the config, else "sha256:" and the digest's first 12
	 * digits: what jobs record as their owner. */
	char name[SERVICE_TOKEN_NAME_MAX + 1];
};

/* Quotas and retention (admission.c, store_retention.c); the "quotas" and
 * "retention" blocks of the config, documented in docs/service.md. 0 turns a
 * quota off. */
struct service_quotas {
	int max_queued_per_token;	 /* queued jobs one token may have */
	int max_queued_total;		 /* queued jobs of all tokens */
	long long guest_seconds_per_day; /* budgeted seconds one token may submit per 24 h */
	long long max_bytes_per_token;	 /* stored bytes of one token's unexpired jobs */
	int retry_after_s;		 /* Retry-After when the queue is full */
};

struct service_retention {
	long long finished_max_age_s; /* finished jobs older than this lose their files */
	bool drop_results;	      /* and their result too (default: it stays) */
	/* retention_timer.c: seconds between the service's retention passes
	 * (besides one at start and one per submission); 0: no timer */
	long long interval_s;
};

/* One entry of "schedules": a job enqueued once per slot of `at`. */
struct service_schedule {
	char *name;	  /* 1..64 of [A-Za-z0-9._-]; the job's name, so its trend series */
	json_object *job; /* the job spec, its "name" set to name (owned) */
	char *at;	  /* the cron text */
	struct cron cron; /* parsed */
	char *source_ref; /* NULL, or the ref that replaces each git: source's @REF */
};

/* One entry of "webhooks": change points are POSTed there (webhook.c). */
struct service_webhook {
	char *url;    /* http:// or https:// */
	char *secret; /* NULL: no signature header */
};

struct service_config {
	char *listen; /* "HOST:PORT" or "[V6]:PORT"; numeric hosts only */
	struct service_token *tokens;
	size_t n_tokens;
	size_t max_body_bytes;	  /* request body cap, default 8 MiB */
	struct job_limits limits; /* passed to job_expand_json */
	int workers;		  /* job workers, default 2 */
	int build_slots;	  /* default 1 */
	int guest_slots;	  /* default max(1, cores / 2) */
	char *cache_dir;	  /* NULL: the runner's default */
	char *libvirt_uri;	  /* NULL: the runner's default */
	char *accelerator;	  /* NULL: "auto" */
	/* From "hypervisors" (hostpool.h, docs/scale-out.md); NULL: the runner's
	 * one host libvirt_uri. Shared by every worker's runner_config. */
	struct hostpool *hostpool;
	/* Kernel builds: sandboxed by default, since a job's patch is untrusted
	 * (docs/kernel-builds.md). */
	bool build_sandbox;  /* "build_sandbox", default true: patch and make in bubblewrap */
	int build_timeout_s; /* "build_timeout_s", default 0: kbuild's (3600 s for make) */
	/* Disk budgets (docs/service.md "Disk and memory budgets"):
	 * "cache_max_bytes" bounds the kernel cache (unset: 0, kbuild's
	 * default, half the cache's filesystem; set to 0: KBUILD_CACHE_UNLIMITED);
	 * "min_free_bytes" is the free-space floor on the cache and state
	 * filesystems (default 2 GiB, 0: none), below which builds and runs
	 * wait up to "disk_wait_max_s" (default 3600). */
	unsigned long long cache_max_bytes;
	unsigned long long min_free_bytes;
	int disk_wait_max_s;

	/* ---- connections and TLS (docs/service.md "Connections") ---- */
	int max_connections;	    /* open connections in all, default 512 */
	int max_connections_per_ip; /* per client address, default 32 */
	int request_deadline_s;	    /* a request's headers and body, default 30 */
	int idle_timeout_s;	    /* no byte moves, default 60 */
	int max_streams_per_token;  /* open event streams per token, default 16 */
	int http_threads;	    /* request threads (handlers may block), default 4 */
	char *tls_cert;		    /* PEM text read from the "tls_cert" file, or NULL */
	char *tls_key;		    /* PEM text read from the "tls_key" file, or NULL */
	struct service_quotas quotas;
	struct service_retention retention;

	/* ---- nightly (config_nightly.c, docs/service.md "Schedules") ---- */
	char *config_dir; /* the config file's directory: job files are relative to it */
	struct service_schedule *schedules; /* "schedules" */
	size_t n_schedules;
	char **git_sources; /* "git_sources", each a realpath; limits points at them */
	size_t n_git_sources;
	struct service_webhook *webhooks; /* "webhooks" */
	size_t n_webhooks;
	/* "bisect_change_points" (change_point_bisect.h):
	 * each change point recorded for the first time starts its
	 * bisection; default false */
	bool bisect_change_points;
};

/* A configuration with every default. */
int service_config_new(struct service_config **ret_config, struct sl_error *err);
/* Defaults, then the settings of the JSON file at path. */
int service_config_load(const char *path, struct service_config **ret_config, struct sl_error *err);
/* Applies a parsed JSON config object (borrowed) over c. */
int service_config_apply(struct service_config *c, json_object *o, struct sl_error *err);
/* Frees c. NULL is a no-op. */
void service_config_free(struct service_config *c);

/* Parses c->listen-style text into a socket address; *ret_loopback tells
 * whether it is 127.0.0.0/8 or ::1. Port 0 asks the kernel for a free one. */
int service_config_parse_listen(const char *listen, struct sockaddr_storage *ret_addr,
				socklen_t *ret_len, bool *ret_loopback, struct sl_error *err);
/* The roles of a presented bearer token, or 0 when it matches none. Every
 * configured token is compared, in constant time, whatever matches. */
unsigned service_config_token_roles(const struct service_config *c, const char *token);
/* The same, and *ret_index the matching token's index in c->tokens (-1 for
 * none); still constant time. */
unsigned service_config_token_match(const struct service_config *c, const char *token,
				    int *ret_index);
/* The configured token a presented bearer token is (compared like
 * service_config_token_roles), or NULL when it matches none. A token with
 * no roles matches: it is known, and answered 403, not 401. */
const struct service_token *service_config_token_find(const struct service_config *c,
						      const char *token);

/* ---- the nightly keys: "schedules", "git_sources" and
 * "webhooks", parsed in config_nightly.c so config.c keeps one call per
 * key; docs/service.md "Schedules" and "Webhooks" document them. ---- */

#define CONFIG_MAX_SCHEDULES   64
#define CONFIG_MAX_GIT_SOURCES 64
#define CONFIG_MAX_WEBHOOKS    16
#define SCHEDULE_NAME_MAX      64 /* JOB_NAME_MAX: a schedule names its jobs */

/* Applies key when it is one of the nightly keys (*ret_known true), else
 * leaves c alone (*ret_known false). */
int config_nightly_apply(struct service_config *c, const char *key, json_object *v, bool *ret_known,
			 struct sl_error *err);
/* After every key: points c->limits at the git sources and expands each
 * schedule's job as a service job would be (so a bad job fails at start,
 * naming schedules[i].job). */
int config_nightly_finish(struct service_config *c, struct sl_error *err);
/* Frees the nightly members of c. */
void config_nightly_free(struct service_config *c);
