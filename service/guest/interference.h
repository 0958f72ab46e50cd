/* How much the host got in the way of one guest: how long its vCPU threads
 * were runnable but waited for a host CPU (libvirt's per-vCPU "delay", the
 * threads' schedstat run delay), how busy the host's CPUs were and, on a
 * local host, the load average and steal time over the run. Under TCG, and
 * on a shared KVM host, that wait looks from inside the guest exactly like a
 * scheduler that failed to run a task, so every run records it
 * (docs/statistics.md, "Host interference").
 *
 * Usage: interference_begin() when the guest starts running,
 * interference_poll() every second or so while it runs (the last good sample
 * is kept, as a guest that powered off has no statistics left), then
 * interference_to_json(). Not thread-safe: one tracker per guest. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "util/macro.h"

#define INTERFERENCE_MAX_VCPUS 64

struct interference_sample {
	double mono_s; /* CLOCK_MONOTONIC */
	int nvcpus;
	bool have_delay; /* libvirt reported vcpu.N.delay */
	uint64_t vcpu_time_ns[INTERFERENCE_MAX_VCPUS];
	uint64_t vcpu_delay_ns[INTERFERENCE_MAX_VCPUS];
	bool have_node; /* virNodeGetCPUStats answered */
	uint64_t node_busy_ns, node_total_ns;
	bool have_guest_cpu; /* virDomainGetInfo's cpuTime: every QEMU thread */
	uint64_t guest_cpu_ns;
	bool have_stat; /* /proc/stat of a local host */
	uint64_t steal_ticks, total_ticks;
};

struct interference {
	bool local; /* the hypervisor is this machine: /proc is the host's */
	bool started, have_last;
	struct interference_sample first, last;
	double load_max; /* the highest 1-minute load average seen (local), or -1 */
};

/* Starts tracking dom (borrowed; it must be running). local: the hypervisor
 * runs on this machine, so /proc/stat and /proc/loadavg describe it. Never
 * fails: what cannot be read is left out of the result. */
void interference_begin(struct interference *t, virDomainPtr dom, bool local);
/* Takes another sample if dom still answers; keeps the last good one. */
void interference_poll(struct interference *t, virDomainPtr dom);
/* Keeps s as the last sample when it can follow the one before: at least as
 * many vCPUs, the same delay support, and no vCPU's time or delay smaller
 * (a domain in teardown reports its exited threads as zeros). Returns
 * whether it was kept. interference_poll() uses it; pure, for tests. */
bool interference_add_sample(struct interference *t, const struct interference_sample *s);
/* A new object {vcpu_wait_ms, vcpu_wait_pct, vcpus: [{vcpu, run_ms, wait_ms,
 * wait_pct}], host_busy_pct, others_busy_pct, load_avg, steal_pct,
 * interval_s, source}, or NULL when not even one sample was taken. wait_pct
 * is the share of the interval's wall time (per vCPU; in total over all
 * vCPUs) in which a vCPU thread was runnable but not running.
 * others_busy_pct is the share of the host's CPU time that went to anything
 * but this guest's QEMU process: a guest whose vCPUs and QEMU threads
 * outnumber the host's CPUs (a loaded 2-vCPU guest on 2 host CPUs) waits
 * for its own threads, which is the same for every variant and not noise;
 * what other processes take is. Fields that could not be measured are
 * null. */
json_object *interference_to_json(const struct interference *t);

/* Pure helpers, for tests: parse /proc/stat's "cpu" line and /proc/loadavg. */
int interference_parse_proc_stat(const char *text, uint64_t *ret_steal, uint64_t *ret_total);
int interference_parse_loadavg(const char *text, double *ret_load1);
