/* The domain XML of a schedlab guest: see guest_xml.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "guest/domain_xml.h"
#include "util/cpu_list.h"
#include "util/escape.h"

static int valid_name(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 100)
		return 0;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
	       n;
}

/* 1 if s holds a control character (XML 1.0 cannot carry most of them). */
static int has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20)
			return 1;
	return 0;
}

static void no_range(int lo, int hi, void *userdata)
{
	(void)lo, (void)hi, (void)userdata; /* only the list's syntax is checked */
}

/* The two serial ports and the console (an alias of serial0) into out:
 * ptys, or unix sockets QEMU connects to (no <console>: libvirt adds the
 * alias of serial0 itself, with serial0's source). */
static int serial_devices(const char *const *sock, char *out, size_t size, struct sl_error *err)
{
	if (!sock) {
		snprintf(out, size,
			 "    <serial type='pty'>\n"
			 "      <target port='0'/>\n"
			 "    </serial>\n"
			 "    <serial type='pty'>\n"
			 "      <target port='1'/>\n"
			 "    </serial>\n"
			 "    <console type='pty'>\n"
			 "      <target type='serial' port='0'/>\n"
			 "    </console>\n");
		return 0;
	}
	size_t n = 0;
	for (int i = 0; i < 2; i++) {
		/* A sockaddr_un path is at most 107 bytes. */
		if (!sock[i] || sock[i][0] != '/' || strlen(sock[i]) > 107 || has_control(sock[i]))
			return error_set_path(
			    err, ERR_INVALID, "serial_socket",
			    "The socket of serial%d must be an absolute path of at "
			    "most 107 bytes.",
			    i);
		_cleanup_free_ char *path = escape_xml_dup(sock[i], 0);
		if (!path)
			return error_set(err, ERR_INTERNAL, ENOMEM,
					 "Out of memory writing the socket of serial%d.", i);
		n += (size_t)snprintf(out + n, size - n,
				      "    <serial type='unix'>\n"
				      "      <source mode='connect' path='%s'/>\n"
				      "      <target port='%d'/>\n"
				      "    </serial>\n",
				      path, i);
	}
	return 0;
}

int guest_xml_build(const struct guest_xml_params *p, char **ret_xml, struct sl_error *err)
{
	const char *type;

	if (!p->name || !valid_name(p->name))
		return error_set_path(err, ERR_INVALID, "name",
				      "The domain name '%s' is not 1 to 100 characters of letters, "
				      "digits, '_', '.' and '-'.",
				      p->name ? p->name : "");
	if (p->accel && strcmp(p->accel, "tcg") == 0)
		type = "qemu";
	else if (p->accel && strcmp(p->accel, "kvm") == 0)
		type = "kvm";
	else
		return error_set_path(err, ERR_INVALID, "accel",
				      "The accelerator '%s' is not 'tcg' or 'kvm'.",
				      p->accel ? p->accel : "");
	if (p->vcpus < 1 || p->vcpus > GUEST_MAX_VCPUS)
		return error_set_path(err, ERR_INVALID, "vcpus",
				      "The vCPU count %d is not between 1 and %d.", p->vcpus,
				      GUEST_MAX_VCPUS);
	if (p->memory_mb < GUEST_MIN_MEMORY_MB || p->memory_mb > GUEST_MAX_MEMORY_MB)
		return error_set_path(err, ERR_INVALID, "memory_mb",
				      "The memory size %d MiB is not between %d and %d MiB.",
				      p->memory_mb, GUEST_MIN_MEMORY_MB, GUEST_MAX_MEMORY_MB);
	bool topology = p->sockets || p->cores || p->threads;
	if (topology && (p->sockets < 1 || p->cores < 1 || p->threads < 1 ||
			 p->sockets * p->cores * p->threads != p->vcpus))
		return error_set_path(
		    err, ERR_INVALID, "topology",
		    "The topology %d x %d x %d (sockets x cores x threads) is not "
		    "the %d vCPUs.",
		    p->sockets, p->cores, p->threads, p->vcpus);
	uint64_t all = p->vcpus >= 64 ? UINT64_MAX : (UINT64_C(1) << p->vcpus) - 1, seen = 0;
	int numa_mb = 0;
	for (size_t i = 0; i < p->n_numa; i++) {
		if (p->n_numa > GUEST_NUMA_MAX_CELLS || !p->numa[i].cpus ||
		    (p->numa[i].cpus & (seen | ~all)) || p->numa[i].memory_mb < 1)
			return error_set_path(
			    err, ERR_INVALID, "numa",
			    "NUMA node %zu's vCPUs or memory do not fit the guest.", i);
		seen |= p->numa[i].cpus;
		numa_mb += p->numa[i].memory_mb;
	}
	if (p->n_numa && (seen != all || numa_mb != p->memory_mb))
		return error_set_path(err, ERR_INVALID, "numa",
				      "The NUMA nodes must hold every vCPU and all %d MiB once.",
				      p->memory_mb);
	char cputune[64 * GUEST_MAX_VCPUS + GUEST_CPU_LIST_MAX + 64] = "";
	if (p->vcpu_pin) {
		size_t cl = (size_t)snprintf(cputune, sizeof(cputune), "  <cputune>\n");
		for (int i = 0; i < p->vcpus; i++) {
			if (p->vcpu_pin[i] < 0 || p->vcpu_pin[i] >= GUEST_MAX_HOST_CPUS)
				return error_set_path(err, ERR_INVALID, "vcpu_pin",
						      "Host CPU %d of vCPU %d is not 0 to %d.",
						      p->vcpu_pin[i], i, GUEST_MAX_HOST_CPUS - 1);
			cl += (size_t)snprintf(cputune + cl, sizeof(cputune) - cl,
					       "    <vcpupin vcpu='%d' cpuset='%d'/>\n", i,
					       p->vcpu_pin[i]);
		}
		const char *e = p->emulator_pin;
		if (!e || strlen(e) >= GUEST_CPU_LIST_MAX ||
		    cpu_list_each(e, GUEST_MAX_HOST_CPUS, no_range, NULL) < 0)
			return error_set_path(err, ERR_INVALID, "emulator_pin",
					      "The emulator's host CPUs '%s' are not a CPU list.",
					      e ? e : "");
		snprintf(cputune + cl, sizeof(cputune) - cl,
			 "    <emulatorpin cpuset='%s'/>\n  </cputune>\n", e);
	}
	if (!p->kernel || !p->initrd || !p->cmdline || p->kernel[0] != '/' || p->initrd[0] != '/' ||
	    has_control(p->kernel) || has_control(p->initrd) || has_control(p->cmdline))
		return error_set(err, ERR_INVALID, EINVAL,
				 "The kernel and initrd must be absolute paths and the command "
				 "line must be one line of text.");

	char serial[2 * 4096 + 256];
	int r = serial_devices(p->serial_socket, serial, sizeof(serial), err);
	if (r < 0)
		return r;
	_cleanup_free_ char *kernel = escape_xml_dup(p->kernel, 0);
	_cleanup_free_ char *initrd = escape_xml_dup(p->initrd, 0);
	_cleanup_free_ char *cmdline = escape_xml_dup(p->cmdline, 0);
	if (!kernel || !initrd || !cmdline)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory writing the domain.");
	/* <cpu>: the host's model under KVM; under TCG QEMU's default model.
	 * The topology is QEMU's -smp sockets,dies,cores,threads. */
	char cpu[2560];
	char topo[2304] = "";
	size_t tl = 0;
	if (topology)
		tl += (size_t)snprintf(
		    topo, sizeof(topo),
		    "    <topology sockets='%d' dies='1' cores='%d' threads='%d'/>\n", p->sockets,
		    p->cores, p->threads);
	/* libvirt's cells become QEMU's -numa node,cpus=...,memdev=... */
	for (size_t i = 0; i < p->n_numa; i++) {
		char list[CPU_LIST_TEXT_MAX];
		cpu_list_format(p->numa[i].cpus, list, sizeof(list));
		tl += (size_t)snprintf(
		    topo + tl, sizeof(topo) - tl,
		    "%s      <cell id='%zu' cpus='%s' memory='%d' unit='MiB'/>\n%s",
		    i == 0 ? "    <numa>\n" : "", i, list, p->numa[i].memory_mb,
		    i + 1 == p->n_numa ? "    </numa>\n" : "");
	}
	bool cpu_elem = topology || p->n_numa;
	if (strcmp(type, "kvm") == 0)
		snprintf(cpu, sizeof(cpu),
			 cpu_elem ? "  <cpu mode='host-passthrough'>\n%s  </cpu>\n"
				  : "  <cpu mode='host-passthrough'/>\n%s",
			 topo);
	else
		snprintf(cpu, sizeof(cpu), cpu_elem ? "  <cpu>\n%s  </cpu>\n" : "%s", topo);
	char *xml = NULL;
	/* No <emulator>: libvirt picks QEMU. A 'pc' machine without USB,
	 * balloon or graphics keeps TCG boots short. on_reboot=destroy makes
	 * libvirt run QEMU with -no-reboot, so a panic (panic=-1) ends it. */
	int n = asprintf(&xml,
			 "<domain type='%s'>\n"
			 "  <name>%s</name>\n"
			 "  <memory unit='MiB'>%d</memory>\n"
			 "  <vcpu placement='static'>%d</vcpu>\n"
			 "%s"
			 "  <os>\n"
			 "    <type arch='x86_64' machine='pc'>hvm</type>\n"
			 "    <kernel>%s</kernel>\n"
			 "    <initrd>%s</initrd>\n"
			 "    <cmdline>%s</cmdline>\n"
			 "  </os>\n"
			 "  <features>\n"
			 "    <acpi/>\n"
			 "  </features>\n"
			 "%s"
			 "  <clock offset='utc'/>\n"
			 "  <on_poweroff>destroy</on_poweroff>\n"
			 "  <on_reboot>destroy</on_reboot>\n"
			 "  <on_crash>destroy</on_crash>\n"
			 "  <devices>\n"
			 "    <controller type='usb' model='none'/>\n"
			 "%s"
			 "    <memballoon model='none'/>\n"
			 "  </devices>\n"
			 "</domain>\n",
			 type, p->name, p->memory_mb, p->vcpus, cputune, kernel, initrd, cmdline,
			 cpu, serial);
	if (n < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	*ret_xml = xml;
	return 0;
}
