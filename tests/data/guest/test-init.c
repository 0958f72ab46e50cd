/* A tiny static PID 1 for guest-runner tests that must not depend on the real
 * agent: it picks its behaviour from "schedlab_test=<action>" on the kernel
 * command line and speaks the frame protocol on /dev/ttyS1.
 *   ok       hello, one workload frame, summary, power off
 *   panic    hello, then a kernel panic through sysrq
 *   hang     hello, then sleep forever
 *   garbage  hello, a frame with a wrong checksum, summary, power off
 *   noframe  power off without any frame
 *   reboot   hello, then reboot (no panic)
 * Build: cc -static -Iworkloads -o test-init tests/data/guest/test-init.c workloads/proto/frame.c
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <termios.h>
#include <unistd.h>

#include "proto/frame.h"

static void put(int fd, const char *kind, const char *json)
{
	frame_write(fd, kind, json, strlen(json));
}

int main(void)
{
	char cmdline[4096] = "", action[32] = "ok";
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("proc", "/proc", "proc", 0, NULL);
	int c = open("/proc/cmdline", O_RDONLY);
	if (c >= 0) {
		ssize_t n = read(c, cmdline, sizeof(cmdline) - 1);
		cmdline[n > 0 ? n : 0] = '\0';
		close(c);
	}
	const char *a = strstr(cmdline, "schedlab_test=");
	if (a)
		sscanf(a + 14, "%31[a-z]", action);
	int fd = open("/dev/ttyS1", O_WRONLY | O_NOCTTY);
	struct termios t;
	if (fd >= 0 && tcgetattr(fd, &t) == 0) {
		cfmakeraw(&t);
		tcsetattr(fd, TCSANOW, &t);
	}
	printf("test-init: action %s\n", action);
	fflush(stdout);
	if (strcmp(action, "noframe") != 0)
		put(fd, "hello", "{\"agent\":\"test-init\",\"version\":\"0\"}");
	if (strcmp(action, "panic") == 0) {
		int s = open("/proc/sysrq-trigger", O_WRONLY);
		if (s >= 0)
			write(s, "c", 1);
	} else if (strcmp(action, "hang") == 0) {
		for (;;)
			pause();
	} else if (strcmp(action, "reboot") == 0) {
		sync();
		reboot(RB_AUTOBOOT);
	} else if (strcmp(action, "garbage") == 0) {
		const char *bad = "\nSLFRAME v1 workload 2 00000000\n{}\nSLEND\n";
		write(fd, bad, strlen(bad));
		put(fd, "summary", "{\"run_id\":\"t\",\"errors\":[]}");
	} else if (strcmp(action, "ok") == 0) {
		put(fd, "workload", "{\"index\":0,\"name\":\"none\",\"exit_code\":0}");
		put(fd, "summary", "{\"run_id\":\"t\",\"errors\":[]}");
	}
	if (fd >= 0)
		tcdrain(fd);
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}
