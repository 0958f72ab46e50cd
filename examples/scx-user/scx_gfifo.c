/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The loader of scx_gfifo.bpf.c: opens, loads and attaches the scheduler,
 * prints how many tasks it queued once a second, and on SIGINT/SIGTERM (or
 * when sched_ext ejects it) prints the exit info and ends.
 *
 * Usage: scx_gfifo [-s SLICE_US]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <scx/common.h>
#include "scx_gfifo.bpf.skel.h"

static volatile int stop;

static void on_signal(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	struct scx_gfifo *skel;
	struct bpf_link *link;
	int opt;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	skel = SCX_OPS_OPEN(gfifo_ops, scx_gfifo);
	while ((opt = getopt(argc, argv, "s:")) != -1) {
		if (opt != 's') {
			fprintf(stderr, "usage: %s [-s SLICE_US]\n", argv[0]);
			return 1;
		}
		skel->rodata->slice_ns = strtoull(optarg, NULL, 0) * 1000;
	}
	SCX_OPS_LOAD(skel, gfifo_ops, scx_gfifo, uei);
	link = SCX_OPS_ATTACH(skel, gfifo_ops, scx_gfifo);
	while (!stop && !UEI_EXITED(skel, uei)) {
		printf("queued=%llu\n", (unsigned long long)skel->bss->nr_queued);
		fflush(stdout);
		sleep(1);
	}
	bpf_link__destroy(link);
	UEI_REPORT(skel, uei);
	scx_gfifo__destroy(skel);
	return 0;
}
