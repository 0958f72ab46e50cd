/* The libvirt domain XML of one schedlab guest: a transient SMP x86 domain
 * with direct kernel boot, two pty serial ports (serial0 = kernel console,
 * serial1 = the agent's frames), ACPI (so the guest can power off), no disk,
 * no network, and every stop (power-off, reboot, crash) ending the domain. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define GUEST_MAX_VCPUS	    64
#define GUEST_MIN_MEMORY_MB 64
#define GUEST_MAX_MEMORY_MB (64 * 1024)

#define GUEST_NUMA_MAX_CELLS 8

#define GUEST_MAX_HOST_CPUS 1024 /* the host CPUs <cputune> can name: 0..1023 */
#define GUEST_CPU_LIST_MAX  1024 /* the text of a host CPU list, NUL included */

/* One NUMA node: its vCPUs (bit N: vCPU N) and memory. */
struct guest_numa_cell {
	uint64_t cpus;
	int memory_mb;
};

struct guest_xml_params {
	const char *name;   /* domain name: [A-Za-z0-9_.-], at most 100 characters */
	const char *accel;  /* "tcg" -> <domain type='qemu'>, "kvm" -> <domain type='kvm'> */
	const char *kernel; /* host paths, as the hypervisor sees them */
	const char *initrd;
	const char *cmdline; /* the whole kernel command line */
	int vcpus;	     /* 1..GUEST_MAX_VCPUS */
	int memory_mb;	     /* GUEST_MIN_MEMORY_MB..GUEST_MAX_MEMORY_MB */
	/* <cpu><topology>: all 0 for none (libvirt's default: vcpus sockets of
	 * one core), else each >= 1 with sockets * cores * threads == vcpus. */
	int sockets, cores, threads;
	/* <cpu><numa>: n_numa 0 for none, else 1..GUEST_NUMA_MAX_CELLS cells
	 * with every vCPU in exactly one and memory adding up to memory_mb. */
	const struct guest_numa_cell *numa;
	size_t n_numa;
	/* <cputune> (pinning.h): NULL for none, else vcpus host CPUs, vCPU i
	 * on vcpu_pin[i] (below GUEST_MAX_HOST_CPUS), and emulator_pin the host CPU list
	 * ("0-1,4") of QEMU's other threads. */
	const int *vcpu_pin;
	const char *emulator_pin;
	/* The serial ports: NULL for two pty ports (read through libvirt
	 * console streams, any URI), else the absolute paths of the unix
	 * sockets schedlab listens on, serial0 then serial1 (QEMU connects to
	 * them: mode='connect'; a local daemon only, docs/guests.md). */
	const char *const *serial_socket;
};

/* The base kernel command line every guest gets: the console on ttyS0 at
 * full log level (WARNING: lines are KERN_WARNING, so no "quiet"); a panic
 * reboots at once, which ends the domain, and an Oops is a panic; a soft
 * lockup is reported, not fatal; timestamps on every line; under TCG the TSC
 * watchdog would otherwise switch clocksources in the middle of a run; and
 * no IO-APIC timer check at boot, which a starved vCPU fails ("IO-APIC +
 * timer doesn't work!", a panic that is the host's, not the kernel's). */
#define GUEST_BASE_CMDLINE                                                                         \
	"console=ttyS0,115200 panic=-1 oops=panic softlockup_panic=0 printk.time=1 "               \
	"tsc=reliable no_timer_check unknown_nmi_panic=1 panic_print=0x40"

/* Builds the domain XML into *ret_xml (malloc'd). Values are XML-escaped;
 * a bad name, accelerator or size is an ERR_INVALID error naming it. */
int guest_xml_build(const struct guest_xml_params *p, char **ret_xml, struct sl_error *err);
