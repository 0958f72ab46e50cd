/* crashme: a tiny payload that misbehaves on request, so the runner's failure
 * paths (panic, hang, RT starvation, garbage on the frame port, exit codes)
 * can be tested with a real guest. The action comes from argv:
 *
 *   crashme panic          crash the kernel through /proc/sysrq-trigger
 *   crashme hang           sleep forever, ignoring SIGTERM
 *   crashme spin-rt [S]    busy loop as SCHED_FIFO 50 (S seconds, default forever)
 *   crashme garbage [DEV]  write non-frame bytes and broken frames to DEV
 *                          (default /dev/ttyS1), then exit 0
 *   crashme frame KIND JSON [DEV]
 *                          write one well-formed frame of KIND carrying JSON
 *                          to DEV (default /dev/ttyS1): a guest that lies in
 *                          the agent's own protocol, e.g. a summary frame
 *                          whose "errors" is an object
 *   crashme exit N         exit with status N
 *   crashme flood BYTES    write BYTES of text to stdout (at most 1 GiB), then
 *                          a last line "crashme flood end"
 *
 * Before acting it prints one JSON object naming the action, so a run that
 * gets that far shows it in its captured stdout. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/wl.h"
#include "proto/frame.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: crashme panic | hang | spin-rt [SECONDS] | garbage [DEVICE] |\n"
		   "               frame KIND JSON [DEVICE] | exit N | flood BYTES\n"
		   "\n"
		   "A test payload for schedlab's failure handling; see the source header.\n");
}

static void announce(const char *action, json_object *details)
{
	json_object *d = details ? details : json_object_new_object();

	json_object_object_add(d, "action", json_object_new_string(action));
	wl_print_result("crashme", json_object_new_object(), d);
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int do_garbage(const char *dev)
{
	/* noise, a header that lies about its length, a frame with a bad
	 * checksum, a bogus version, and binary junk: none of it may be taken
	 * for a frame, and the real frames after it must still be read */
	static const char text[] = "crashme garbage \r\n\x1b[2J\x1b[0m"
				   "\nSLFRAME v1 workload 99999999999 00000000\n"
				   "\nSLFRAME v1 workload 5 00000000\nhello\nSLEND\n"
				   "\nSLFRAME v9 workload 2 00000000\n{}\nSLEND\n"
				   "SLFRAME SLFRAME SLEND\n";
	unsigned char junk[4096];
	unsigned x = 2463534242u;
	int fd = open(dev, O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "crashme: '%s' could not be opened: %s.\n", dev, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(junk); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		junk[i] = (unsigned char)x;
	}
	if (write_all(fd, text, sizeof(text) - 1) < 0 ||
	    write_all(fd, (const char *)junk, sizeof(junk)) < 0 || write_all(fd, "\n", 1) < 0) {
		fprintf(stderr, "crashme: writing to '%s' failed: %s.\n", dev, strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *action = argc > 1 ? argv[1] : NULL;

	if (!action) {
		usage(stderr);
		return 2;
	}
	if (strcmp(action, "--help") == 0 || strcmp(action, "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(action, "panic") == 0 && argc == 2) {
		announce(action, NULL);
		int fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "c", 1) != 1) {
			fprintf(stderr, "crashme: /proc/sysrq-trigger: %s.\n", strerror(errno));
			return 1;
		}
		/* not reached when the kernel crashes */
		fprintf(stderr, "crashme: the kernel did not crash.\n");
		return 1;
	}
	if (strcmp(action, "hang") == 0 && argc == 2) {
		announce(action, NULL);
		signal(SIGTERM, SIG_IGN);
		for (;;)
			pause();
	}
	if (strcmp(action, "spin-rt") == 0 && argc <= 3) {
		double seconds = 0;
		struct sched_param sp = {.sched_priority = 50};
		struct timespec t0, t;
		if (argc == 3 && wl_parse_double(argv[2], 0, 86400, &seconds) < 0) {
			usage(stderr);
			return 2;
		}
		json_object *d = json_object_new_object();
		json_object_object_add(d, "seconds", wl_json_double(seconds, 6));
		announce(action, d);
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
			fprintf(stderr, "crashme: SCHED_FIFO 50: %s.\n", strerror(errno));
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (seconds > 0 && (double)(t.tv_sec - t0.tv_sec) +
						   (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >=
					       seconds)
				return 0;
		}
	}
	if (strcmp(action, "garbage") == 0 && argc <= 3) {
		announce(action, NULL);
		return do_garbage(argc == 3 ? argv[2] : "/dev/ttyS1");
	}
	if (strcmp(action, "frame") == 0 && (argc == 4 || argc == 5)) {
		const char *dev = argc == 5 ? argv[4] : "/dev/ttyS1";
		int fd, rc;
		announce(action, NULL);
		fd = open(dev, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "crashme: '%s' could not be opened: %s.\n", dev,
				strerror(errno));
			return 1;
		}
		rc = frame_write(fd, argv[2], argv[3], strlen(argv[3]));
		close(fd);
		if (rc < 0) {
			fprintf(stderr, "crashme: the %s frame was not written: %s.\n", argv[2],
				strerror(-rc));
			return 1;
		}
		return 0;
	}
	if (strcmp(action, "exit") == 0 && argc == 3) {
		unsigned long code;
		if (wl_parse_uint(argv[2], 255, &code) < 0) {
			usage(stderr);
			return 2;
		}
		json_object *d = json_object_new_object();
		json_object_object_add(d, "code", json_object_new_int((int)code));
		announce(action, d);
		return (int)code;
	}
	if (strcmp(action, "flood") == 0 && argc == 3) {
		unsigned long bytes;
		char line[64];
		if (wl_parse_uint(argv[2], 1UL << 30, &bytes) < 0) {
			usage(stderr);
			return 2;
		}
		announce(action, NULL);
		memset(line, 'x', sizeof(line) - 1);
		line[sizeof(line) - 1] = '\n';
		while (bytes > 0) {
			size_t n = bytes < sizeof(line) ? bytes : sizeof(line);
			if (write_all(STDOUT_FILENO, line, n) < 0)
				return 1;
			bytes -= n;
		}
		printf("crashme flood end\n");
		return 0;
	}
	usage(stderr);
	return 2;
}
