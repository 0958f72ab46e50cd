/* The domain XML against golden text (tests/data/guest/), escaping and
 * the checks on names, sizes and accelerators. Run from tests/. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "guest/domain_xml.h"
#include "util/fs.h"

static void assert_golden(const char *xml, const char *name)
{
	char *path = fs_path_join("data/guest", name);
	char *want = NULL;
	struct sl_error err = {0};
	if (getenv("SCHEDLAB_UPDATE_GOLDEN"))
		assert_int_equal(fs_write_file_atomic(path, xml, strlen(xml), &err), 0);
	if (fs_read_file(path, 1 << 20, &want, NULL, &err) < 0)
		fail_msg("%s", err.message);
	assert_string_equal(xml, want);
	free(want);
	free(path);
}

static struct guest_xml_params base(void)
{
	return (struct guest_xml_params){
	    .name = "schedlab-r-0123abcd",
	    .accel = "tcg",
	    .kernel = "/var/tmp/stage/bzImage",
	    .initrd = "/var/tmp/stage/initrd",
	    .cmdline = GUEST_BASE_CMDLINE,
	    .vcpus = 2,
	    .memory_mb = 512,
	};
}

static void test_tcg_golden(void **state)
{
	(void)state;
	struct guest_xml_params p = base();
	char *xml = NULL;
	assert_int_equal(guest_xml_build(&p, &xml, NULL), 0);
	assert_golden(xml, "tcg-2cpu.xml");
	/* The guest facts measured when the project began: these must never go away. */
	assert_non_null(strstr(xml, "<domain type='qemu'>"));
	assert_non_null(strstr(xml, "<acpi/>"));
	assert_non_null(strstr(xml, "<on_reboot>destroy</on_reboot>"));
	assert_null(strstr(xml, "<disk"));
	assert_null(strstr(xml, "<interface"));
	free(xml);
}

static void test_kvm_golden(void **state)
{
	(void)state;
	struct guest_xml_params p = base();
	p.accel = "kvm";
	p.vcpus = 4;
	p.memory_mb = 1024;
	p.cmdline = GUEST_BASE_CMDLINE " schedlab.x=1";
	char *xml = NULL;
	assert_int_equal(guest_xml_build(&p, &xml, NULL), 0);
	assert_golden(xml, "kvm-4cpu.xml");
	free(xml);
}

static void test_escaping(void **state)
{
	(void)state;
	struct guest_xml_params p = base();
	p.kernel = "/tmp/a&b/<k>'\"";
	p.cmdline = "console=ttyS0 x=</cmdline><devices>";
	char *xml = NULL;
	assert_int_equal(guest_xml_build(&p, &xml, NULL), 0);
	assert_non_null(strstr(xml, "<kernel>/tmp/a&amp;b/&lt;k&gt;&#39;&quot;</kernel>"));
	assert_non_null(strstr(xml, "x=&lt;/cmdline&gt;&lt;devices&gt;</cmdline>"));
	free(xml);
}

/* guest.topology: <cpu><topology> under TCG (QEMU's default model) and
 * inside host-passthrough under KVM; a product that is not vcpus is refused
 * naming the topology. */
static void test_topology(void **state)
{
	(void)state;
	struct guest_xml_params p = base();
	p.vcpus = 4;
	p.sockets = 2;
	p.cores = 2;
	p.threads = 1;
	char *xml = NULL;
	assert_int_equal(guest_xml_build(&p, &xml, NULL), 0);
	assert_golden(xml, "tcg-2x2x1.xml");
	assert_non_null(
	    strstr(xml, "  <cpu>\n    <topology sockets='2' dies='1' cores='2' threads='1'/>\n  "
			"</cpu>\n"));
	free(xml);
	p.accel = "kvm";
	p.threads = 2;
	p.vcpus = 8;
	assert_int_equal(guest_xml_build(&p, &xml, NULL), 0);
	assert_non_null(strstr(xml, "<cpu mode='host-passthrough'>\n    <topology sockets='2' "
				    "dies='1' cores='2' threads='2'/>\n  </cpu>"));
	free(xml);
	struct sl_error err = {0};
	p.vcpus = 6;
	assert_int_equal(guest_xml_build(&p, &xml, &err), -EINVAL);
	assert_string_equal(err.path, "topology");
	p.vcpus = 8;
	p.cores = 0;
	assert_int_equal(guest_xml_build(&p, &xml, &err), -EINVAL);
}

/* <numa> cells in <cpu>, with or without a topology; cells that leave a
 * vCPU or some memory out are refused naming numa. */
static void test_numa(void **state)
{
	(void)state;
	struct guest_xml_params p = base();
	struct guest_numa_cell cells[] = {{.cpus = 3, .memory_mb = 256},
					  {.cpus = 12, .memory_mb = 256}};
	p.vcpus = 4;
	p.memory_mb = 512;
	p.sockets = 2;
	p.cores = 2;
	p.threads = 1;
	p.numa = cells;
	p.n_numa = 2;
	char *xml = NULL;
	assert_int_equal(guest_xml_build(&p, &xml, NULL), 0);
	assert_non_null(strstr(xml, "  <cpu>\n    <topology sockets='2' dies='1' cores='2' "
				    "threads='1'/>\n    <numa>\n      <cell id='0' cpus='0-1' "
				    "memory='256' unit='MiB'/>\n      <cell id='1' cpus='2-3' "
				    "memory='256' unit='MiB'/>\n    </numa>\n  </cpu>\n"));
	free(xml);
	p.sockets = p.cores = p.threads = 0;
	assert_int_equal(guest_xml_build(&p, &xml, NULL), 0);
	assert_non_null(strstr(xml, "  <cpu>\n    <numa>\n      <cell id='0' cpus='0-1'"));
	free(xml);
	struct sl_error err = {0};
	cells[1].cpus = 4; /* vCPU 3 in no node */
	assert_int_equal(guest_xml_build(&p, &xml, &err), -EINVAL);
	assert_string_equal(err.path, "numa");
	cells[1].cpus = 14; /* vCPU 1 twice */
	assert_int_equal(guest_xml_build(&p, &xml, &err), -EINVAL);
	cells[1].cpus = 12;
	cells[1].memory_mb = 128;
	assert_int_equal(guest_xml_build(&p, &xml, &err), -EINVAL);
}

/* <cputune> right after <vcpu> (docs/guests.md "Pinning"): a vcpupin per
 * vCPU and the emulator's list; a bad host CPU or list is refused naming it. */
static void test_cputune(void **state)
{
	(void)state;
	struct guest_xml_params p = base();
	int pins[] = {3, 2};
	p.vcpu_pin = pins;
	p.emulator_pin = "0-1";
	char *xml = NULL;
	assert_int_equal(guest_xml_build(&p, &xml, NULL), 0);
	assert_non_null(strstr(xml, "<vcpu placement='static'>2</vcpu>\n  <cputune>\n"
				    "    <vcpupin vcpu='0' cpuset='3'/>\n"
				    "    <vcpupin vcpu='1' cpuset='2'/>\n"
				    "    <emulatorpin cpuset='0-1'/>\n  </cputune>\n  <os>\n"));
	free(xml);
	struct sl_error err = {0};
	p.emulator_pin = "0'/><evil";
	assert_int_equal(guest_xml_build(&p, &xml, &err), -EINVAL);
	assert_string_equal(err.path, "emulator_pin");
	p.emulator_pin = "";
	assert_int_equal(guest_xml_build(&p, &xml, &err), -EINVAL);
	p.emulator_pin = "1--2"; /* digits and dashes, but not a CPU list */
	assert_int_equal(guest_xml_build(&p, &xml, &err), -EINVAL);
	p.emulator_pin = "0-1024";
	assert_int_equal(guest_xml_build(&p, &xml, &err), -EINVAL);
	p.emulator_pin = "0";
	pins[1] = 1024;
	assert_int_equal(guest_xml_build(&p, &xml, &err), -EINVAL);
	assert_string_equal(err.path, "vcpu_pin");
	/* Without pins, no <cputune> (the golden files above). */
	p = base();
	assert_int_equal(guest_xml_build(&p, &xml, NULL), 0);
	assert_null(strstr(xml, "cputune"));
	free(xml);
}

/* A local daemon's guest: both ports are unix sockets QEMU connects to
 * (guest_ports.c), so no libvirt console stream is ever opened. */
static void test_serial_sockets(void **state)
{
	(void)state;
	struct sl_error err = {0};
	const char *socks[2] = {"/tmp/schedlab-ports-x/serial0.sock",
				"/tmp/schedlab-ports-x/serial1.sock"};
	struct guest_xml_params p = base();
	p.serial_socket = socks;
	char *xml = NULL;
	assert_int_equal(guest_xml_build(&p, &xml, NULL), 0);
	assert_golden(xml, "tcg-2cpu-sockets.xml");
	assert_null(strstr(xml, "pty"));
	assert_non_null(
	    strstr(xml, "<source mode='connect' path='/tmp/schedlab-ports-x/serial1.sock'/>"));
	free(xml);
	/* A path a sockaddr_un cannot hold, or a relative one, is refused. */
	char long_path[160];
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	const char *bad[2] = {socks[0], long_path};
	p.serial_socket = bad;
	xml = NULL;
	assert_int_equal(guest_xml_build(&p, &xml, &err), -EINVAL);
	assert_string_equal(err.path, "serial_socket");
	assert_non_null(strstr(err.message, "serial1"));
	const char *rel[2] = {"serial0.sock", socks[1]};
	p.serial_socket = rel;
	assert_int_equal(guest_xml_build(&p, &xml, &err), -EINVAL);
	assert_null(xml);
}

static void test_rejects(void **state)
{
	(void)state;
	struct sl_error err = {0};
	char *xml = NULL;
	struct guest_xml_params p = base();
	p.name = "schedlab-x</name>";
	assert_true(guest_xml_build(&p, &xml, &err) < 0);
	assert_string_equal(err.path, "name");
	p = base();
	p.accel = "hvf";
	assert_true(guest_xml_build(&p, &xml, &err) < 0);
	assert_non_null(strstr(err.message, "'hvf'"));
	p = base();
	p.vcpus = 65;
	assert_true(guest_xml_build(&p, &xml, &err) < 0);
	assert_string_equal(err.path, "vcpus");
	p = base();
	p.memory_mb = 1 << 30;
	assert_true(guest_xml_build(&p, &xml, &err) < 0);
	assert_string_equal(err.path, "memory_mb");
	p = base();
	p.cmdline = "console=ttyS0\nrdinit=/bin/sh";
	assert_true(guest_xml_build(&p, &xml, &err) < 0);
	p = base();
	p.initrd = "relative/initrd";
	assert_true(guest_xml_build(&p, &xml, &err) < 0);
	assert_null(xml);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tcg_golden), cmocka_unit_test(test_kvm_golden),
	    cmocka_unit_test(test_numa),       cmocka_unit_test(test_escaping),
	    cmocka_unit_test(test_rejects),    cmocka_unit_test(test_topology),
	    cmocka_unit_test(test_cputune),    cmocka_unit_test(test_serial_sockets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
