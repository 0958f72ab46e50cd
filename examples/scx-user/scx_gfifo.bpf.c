/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A global FIFO sched_ext scheduler, schedlab's example of a user's own
 * scheduler (docs/sched-ext.md): every runnable task goes to the tail of one
 * shared dispatch queue, and an idle CPU takes the task at its head. No
 * priorities, no weights, no locality: a deliberately naive policy whose
 * latencies a job compares with EEVDF's. Its ops name is "gfifo".
 */
#include <scx/common.bpf.h>

char _license[] SEC("license") = "GPL";

#define GFIFO_DSQ 7

UEI_DEFINE(uei);

/* slice in ns; the loader's -s sets it before loading */
const volatile u64 slice_ns = SCX_SLICE_DFL;

/* tasks queued so far: read back by the loader once a second */
u64 nr_queued;

void BPF_STRUCT_OPS(gfifo_enqueue, struct task_struct *p, u64 enq_flags)
{
	__sync_fetch_and_add(&nr_queued, 1);
	scx_bpf_dispatch(p, GFIFO_DSQ, slice_ns, enq_flags);
}

void BPF_STRUCT_OPS(gfifo_dispatch, s32 cpu, struct task_struct *prev)
{
	scx_bpf_consume(GFIFO_DSQ);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(gfifo_init)
{
	return scx_bpf_create_dsq(GFIFO_DSQ, -1);
}

void BPF_STRUCT_OPS(gfifo_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(gfifo_ops, .enqueue = (void *)gfifo_enqueue, .dispatch = (void *)gfifo_dispatch,
	       .init = (void *)gfifo_init, .exit = (void *)gfifo_exit, .name = "gfifo");
