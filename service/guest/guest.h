/* Guests through the libvirt C API: one transient domain per run, booted
 * from a kernel and an initrd, whose two serial consoles are read on
 * libvirt's event loop (from unix sockets schedlab listens on for a local
 * daemon, so no libvirt stream exists that a dying schedlab could leave the
 * daemon to deadlock on; through virDomainOpenConsole streams for a remote
 * one), with a lifecycle callback for power-off and crash.
 *
 * Failures of the guest are results, not errors: guest_run() returns 0 with
 * an outcome whose status is one of
 *   ok       the agent sent its summary frame and the guest powered off
 *   hung     the deadline passed; the domain was destroyed
 *   panic    the console showed "Kernel panic - not syncing"
 *   crashed  the guest rebooted or crashed without a panic line
 *   error    a frame failed its checksum or was unreadable, a payload was not
 *            JSON, or the guest stopped without a summary frame
 * and an error (negative errno, err filled) only when libvirt or the host
 * failed, or the run was cancelled (ERR_CANCELLED).
 *
 * Every function here may be called from several threads at once, and every
 * wait is bounded. Domains are named GUEST_DOMAIN_PREFIX + run_id and started
 * with VIR_DOMAIN_START_AUTODESTROY, so they also end when this process does. */
#pragma once

#include <stdbool.h>

#include <libvirt/libvirt.h>

#include "guest/domain_xml.h"
#include "util/error.h"

#define GUEST_DOMAIN_PREFIX    "schedlab-"
#define GUEST_CONSOLE_TAIL_MAX (256u * 1024)	   /* console bytes kept in memory */
#define GUEST_CONSOLE_LOG_MAX  (64u * 1024 * 1024) /* console bytes written to the log */
#define GUEST_MAX_DEADLINE_S   (24 * 3600)
#define GUEST_STATUS_LEN       16

struct guest_host;

/* How long opening a libvirt connection may take. A daemon whose main loop
 * is stuck accepts the socket and never answers (docs/guests.md). */
#define GUEST_CONNECT_TIMEOUT_S 60.0

/* GUEST_CONNECT_TIMEOUT_S, or SCHEDLAB_LIBVIRT_TIMEOUT_S (1 to 3600 s) when
 * set; a bad value is named on stderr and the default used. */
double guest_connect_timeout_s(void);
/* Opens a connection to the libvirt daemon at uri (NULL: "qemu:///system"),
 * starting the process-wide libvirt event loop thread on first use, within
 * guest_connect_timeout_s(). NULL on failure, with err (ERR_INFRA) saying why. */
struct guest_host *guest_host_open(const char *uri, struct sl_error *err);
/* A plain libvirt connection to uri, opened within timeout_s, with a
 * keepalive (5 s, 3 missed) so a daemon that stops answering later is
 * noticed: NULL with err (ERR_INFRA) when it fails or does not answer. A
 * connect that never answers is left to finish in a detached thread, which
 * closes what it gets. */
virConnectPtr guest_connect(const char *uri, double timeout_s, struct sl_error *err);
/* Closes the connection. NULL is fine. */
void guest_host_free(struct guest_host *h);
/* The URI the host was opened with (borrowed). */
const char *guest_host_uri(const struct guest_host *h);
/* The hypervisor's (QEMU's) and libvirt's versions as "7.2.22" and "9.0.0". */
int guest_host_versions(struct guest_host *h, char qemu[32], char libvirt[32],
			struct sl_error *err);

struct guest_spec {
	const char *run_id;	     /* [A-Za-z0-9_.-]{1,90}; the domain is "schedlab-<run_id>" */
	const char *kernel;	     /* host path of the bzImage */
	const char *initrd;	     /* host path of the initrd (base + plan) */
	const char *cmdline_extra;   /* appended to GUEST_BASE_CMDLINE, or NULL */
	int vcpus;		     /* 1..64 */
	int memory_mb;		     /* 64..65536 */
	int sockets, cores, threads; /* the CPU topology, all 0 for libvirt's default */
	const struct guest_numa_cell *numa; /* NUMA nodes (domain_xml.h), n_numa 0 for none */
	size_t n_numa;
	const char *accel;	      /* "tcg" or "kvm": resolve "auto" with accel_resolve() */
	int deadline_s;		      /* from resume to the end, 1..GUEST_MAX_DEADLINE_S */
	const char *console_log_path; /* the whole console (up to GUEST_CONSOLE_LOG_MAX), or NULL */
	/* Polled about every 100 ms; nonzero destroys the domain and ends the
	 * run with ERR_CANCELLED. May be NULL. */
	int (*cancelled)(void *userdata);
	void *userdata;
	/* kernel and initrd are paths on the hypervisor's host (storage volumes,
	 * volume.h), used as they are: no local staging copy. */
	bool files_on_host;
	/* Probe mode (accel.c): the run ends, status ok, at the first sign of a
	 * kernel that boots: a "Linux version" console line or the hello frame. */
	bool probe;
	/* The silence rule (docs/kernel-bugs.md): once the agent's hello has
	 * promised heartbeats, this many seconds with no byte on either port make
	 * the host ask the kernel for backtraces of all CPUs (an NMI) and end
	 * the run as hung. 0: GUEST_SILENCE_DEFAULT_S; never beyond the
	 * deadline. */
	int silence_s;
	/* Host CPU pinning (pinning.h): NULL for none, else vCPU i on host CPU
	 * vcpu_pin[i] and QEMU's other threads on emulator_pin. */
	const int *vcpu_pin;
	const char *emulator_pin;
};

#define GUEST_SILENCE_DEFAULT_S 30
#define GUEST_NMI_GRACE_S	15 /* after the NMI, for the backtraces to arrive */

struct guest_outcome {
	char status[GUEST_STATUS_LEN]; /* ok hung panic crashed error */
	char *reason;		       /* a sentence for any status but ok, else NULL */
	json_object *events;	       /* array of {kind, line, excerpt} (console_events.h) */
	char *console_tail;	       /* the last GUEST_CONSOLE_TAIL_MAX console bytes, ASCII */
	json_object *frames;	       /* array of {kind, payload}: payload is the parsed JSON */
	json_object *summary;	       /* borrowed from frames: the summary payload, or NULL */
	double create_s;	       /* virDomainCreateXML (QEMU start) */
	double boot_s;		       /* create to the agent's hello frame, or -1 */
	double agent_start_s;	       /* resume to the hello frame (kernel boot), or -1 */
	double total_s;		       /* create to the end */
	json_object *interference;     /* interference.h figures over the run, or NULL */
	/* With vcpu_pin: each vCPU's host CPUs as libvirt reports them once the
	 * domain started (an array of CPU lists), or NULL. */
	json_object *vcpu_pin_applied;
	char accel[8];	  /* "tcg" or "kvm" as used */
	char domain[128]; /* the domain name */
};

/* Boots spec's kernel and initrd in a transient domain and waits for it to
 * end (power-off, reboot, crash, deadline or cancel). On success *ret is a
 * new outcome (free with guest_outcome_free). The kernel and initrd are first
 * copied into a private staging directory the hypervisor can read (libvirt
 * relabels what it boots; the caller's cache is left alone). */
int guest_run(struct guest_host *h, const struct guest_spec *spec, struct guest_outcome **ret,
	      struct sl_error *err);
void guest_outcome_free(struct guest_outcome *o);
/* A new reference to the outcome as JSON: status, reason, events, frames,
 * timings, accel, domain and "console_excerpt" (the last 60 lines). */
json_object *guest_outcome_to_json(const struct guest_outcome *o);
/* The last max_lines lines of text (malloc'd). */
char *guest_tail_lines(const char *text, int max_lines);

/* Destroys every running domain whose name starts with prefix, which must
 * itself start with GUEST_DOMAIN_PREFIX (so no other domain is ever touched).
 * Returns the number destroyed, or a negative errno. */
int guest_cleanup_leftovers(struct guest_host *h, const char *prefix, struct sl_error *err);
