/* A minimal PID 1 for tests/e2e/13-kernel-boot-features.sh: mounts what it
 * needs, prints the sched features, switches each schedlab feature off and on
 * again through debugfs, prints what reads back, and powers off. Static, no
 * libc beyond what -static pulls in; output goes to /dev/console (ttyS0). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <unistd.h>

#define FEATURES "/sys/kernel/debug/sched/features"

static void features_print(const char *tag)
{
	char buf[4096] = {0};
	int fd = open(FEATURES, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		printf("SCHEDLAB-TEST %s: cannot read " FEATURES "\n", tag);
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
	printf("SCHEDLAB-TEST %s: %s\n", tag, buf);
}

static void feature_write(const char *f)
{
	int fd = open(FEATURES, O_WRONLY);
	ssize_t n = fd >= 0 ? write(fd, f, strlen(f)) : -1;
	if (fd >= 0)
		close(fd);
	printf("SCHEDLAB-TEST write %s: %s\n", f, n == (ssize_t)strlen(f) ? "ok" : "failed");
}

int main(void)
{
	mkdir("/dev", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	int fd = open("/dev/console", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	printf("SCHEDLAB-TEST cpus: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	features_print("features");
	const char *names[] = {"RT_PUSH", "RT_WAKEUP_PLACE", "RT_PULL", "RT_CPUPRI"};
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char off[64];
		snprintf(off, sizeof(off), "NO_%s", names[i]);
		feature_write(off);
	}
	features_print("after-off");
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		feature_write(names[i]);
	features_print("after-on");
	feature_write("NO_SCHEDLAB_NOT_A_FEATURE");
	printf("SCHEDLAB-TEST done\n");
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
