/* Kernel bug signatures: see bug_signature.h and docs/kernel-bugs.md. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "guest/bug_signature.h"
#include "util/hash.h"
#include "util/macro.h"

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Lockdep's own headlines (kernel/locking/lockdep.c, kernel/rcu/update.c)
 * after "WARNING: " or "BUG: ", and the title each gets (syzkaller's). */
static const struct {
	const char *headline, *title;
} lockdep_headlines[] = {
    {"possible circular locking dependency detected", "possible deadlock"},
    {"possible recursive locking detected", "possible deadlock"},
    {"possible irq lock inversion dependency detected", "possible deadlock"},
    {"inconsistent lock state", "inconsistent lock state"},
    {"bad unlock balance detected", "bad unlock balance"},
    {"bad contention detected", "bad contention"},
    {"held lock freed", "held lock freed"},
    {"lock held when returning to user space", "lock held when returning to user space"},
    {"suspicious RCU usage", "suspicious RCU usage"},
    {"Nested lock was not taken", "nested lock was not taken"},
    {"still has locks held", "still has locks held"},
};

/* "HARDIRQ-safe -> HARDIRQ-unsafe lock order detected" and its siblings. */
static bool lockdep_lock_order(const char *rest)
{
	return strstr(rest, "-safe -> ") && strstr(rest, "lock order detected");
}

/* Copies at most n bytes of src into dst (size dsize), trims trailing
 * blanks and punctuation a headline does not need. */
static void copy_trimmed(char *dst, size_t dsize, const char *src, size_t n)
{
	if (n >= dsize)
		n = dsize - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	while (n > 0 && strchr(" \t,:;!.", dst[n - 1]))
		dst[--n] = '\0';
}

/* The describing part of "BUG: DESCRIPTION ...": up to where per-instance
 * values start (an address, a CPU, a task, a bracket). */
static size_t description_len(const char *d)
{
	static const char *const cuts[] = {
	    ":",  ",", "[", "!", " at ", " for address", " on CPU", " on cpu", " in process ",
	    " - "};
	size_t n = strlen(d);
	for (size_t i = 0; i < ELEMENTSOF(cuts); i++) {
		const char *c = strstr(d, cuts[i]);
		if (c && (size_t)(c - d) < n)
			n = (size_t)(c - d);
	}
	return n;
}

/* "file.c:123" at p (up to a blank, '!' or the end) into location. */
static const char *take_location(struct bug_signature *s, const char *p)
{
	size_t n = strcspn(p, " \t!");
	const char *colon = memchr(p, ':', n);
	if (!colon || colon == p || !isdigit((unsigned char)colon[1]))
		return p;
	copy_trimmed(s->location, sizeof(s->location), p, n);
	return p + n;
}

bool bug_signature_frame(const char *msg, char func[BUG_SIG_FUNC_MAX], bool *unreliable)
{
	const char *p = msg;
	*unreliable = false;
	while (*p == ' ' || *p == '\t')
		p++;
	if (starts(p, "RIP: ")) {
		p += 5;
		const char *colon = strchr(p, ':');
		if (!colon || colon - p > 4)
			return false;
		p = colon + 1;
	} else if (p[0] == '[' && p[1] == '<') { /* "[<c12ba080>] " of old kernels */
		const char *e = strstr(p, ">]");
		if (!e)
			return false;
		p = e + 2;
		while (*p == ' ')
			p++;
	}
	if (p[0] == '?' && p[1] == ' ') {
		*unreliable = true;
		p += 2;
	}
	size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$");
	if (n == 0 || !starts(p + n, "+0x") || isdigit((unsigned char)p[0]))
		return false;
	size_t dot = strcspn(p, ".");
	if (dot < n)
		n = dot; /* ".isra.0", ".constprop.0", ".part.0", ".cold" */
	if (n == 0)
		return false;
	copy_trimmed(func, BUG_SIG_FUNC_MAX, p, n);
	return true;
}

/* Reporting, locking and entry machinery: never the bug's own function. */
static const char *const generic_exact[] = {
    "dump_stack",
    "show_stack",
    "show_regs",
    "sched_show_task",
    "panic",
    "__warn",
    "report_bug",
    "handle_bug",
    "exc_invalid_op",
    "lock_acquire",
    "lock_release",
    "lock_acquired",
    "lock_contended",
    "lock_is_held_type",
    "check_noncircular",
    "check_prev_add",
    "check_prevs_add",
    "validate_chain",
    "check_deadlock",
    "mark_lock",
    "mark_usage",
    "valid_state",
    "spin_bug",
    "spin_dump",
    "queued_spin_lock_slowpath",
    "native_queued_spin_lock_slowpath",
    "__pv_queued_spin_lock_slowpath",
    "raw_spin_rq_lock",
    "raw_spin_rq_lock_nested",
    "raw_spin_rq_unlock",
    "rq_lock",
    "rq_unlock",
    "rq_lock_irq",
    "rq_lock_irqsave",
    "rq_unlock_irq",
    "rq_unlock_irqrestore",
    "rq_relock",
    "task_rq_lock",
    "__task_rq_lock",
    "double_lock_balance",
    "_double_lock_balance",
    "double_rq_lock",
    "mutex_lock",
    "mutex_lock_nested",
    "mutex_lock_interruptible",
    "mutex_lock_killable",
    "down",
    "down_read",
    "down_write",
    "down_interruptible",
    "check_preemption_disabled",
    "nmi_cpu_backtrace",
    "nmi_trigger_cpumask_backtrace",
    "arch_trigger_cpumask_backtrace",
    "nmi_handle",
    "default_do_nmi",
    "exc_nmi",
    "end_repeat_nmi",
    "kthread",
    "ret_from_fork",
    "do_syscall_64",
    "irq_exit_rcu",
    "__irq_exit_rcu",
    "default_idle",
    "default_idle_call",
    "native_safe_halt",
    "arch_cpu_idle",
    "cpuidle_idle_call",
    "do_idle",
    "cpu_startup_entry",
    "start_secondary",
    "rest_init",
    "arch_call_rest_init",
    "start_kernel",
    "x86_64_start_reservations",
    "x86_64_start_kernel",
    "__schedule_bug",
    "schedule_debug",
    "preempt_count_add",
    "preempt_count_sub",
    "lockdep_rcu_suspicious",
    "rcu_dump_cpu_stacks",
    "print_cpu_stall",
    "check_cpu_stall",
    "rcu_pending",
    "rcu_sched_clock_irq",
    "update_process_times",
    "tick_sched_handle",
    "tick_sched_timer",
    "watchdog_timer_fn",
    "watchdog_overflow_callback",
    "__hrtimer_run_queues",
    "hrtimer_interrupt",
    "handle_softirqs",
    "__do_softirq",
    "sysrq_handle_showallcpus",
    "showacpu",
    "flush_smp_call_function_queue",
};
static const char *const generic_prefixes[] = {
    "dump_stack",   "__dump_stack",  "show_trace", "warn_slowpath",	"asm_",	      "sysvec_",
    "__sysvec_",    "entry_SYSCALL", "print_",	   "lockdep_",		"__lock_",    "_raw_",
    "__raw_",	    "do_raw_",	     "__mutex_",   "__might_",		"___might_",  "might_",
    "debug_",	    "__rt_mutex",    "rt_mutex_",  "secondary_startup", "__x64_sys_", "__ia32_sys_",
    "x64_sys_call",
};
/* A sleeping task's stack (hung_task, atomic_sleep): waiting machinery too. */
static const char *const sleep_exact[] = {
    "schedule",
    "__schedule",
    "io_schedule",
    "io_schedule_timeout",
    "msleep",
    "msleep_interruptible",
    "usleep_range_state",
    "ssleep",
    "__wait_for_common",
    "do_wait_for_common",
    "wait_for_common",
    "slab_pre_alloc_hook",
    "kmalloc_trace",
    "__kmalloc",
    "kmem_cache_alloc",
    "kmem_cache_alloc_trace",
    "slab_alloc_node",
    "__alloc_pages",
    "alloc_pages",
    "finish_wait",
    "prepare_to_wait_event",
};
static const char *const sleep_prefixes[] = {"schedule_", "wait_for_",	  "__down",    "rwsem_down",
					     "__rwsem",	  "__flush_work", "flush_work"};

/* Whether f is one of names[0..n). */
static bool named(const char *f, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(f, names[i]) == 0)
			return true;
	return false;
}

bool bug_signature_skipped(const char *kind, const char *func)
{
	if (named(func, generic_exact, ELEMENTSOF(generic_exact)))
		return true;
	for (size_t i = 0; i < ELEMENTSOF(generic_prefixes); i++)
		if (starts(func, generic_prefixes[i]))
			return true;
	if (kind && (strcmp(kind, "hung_task") == 0 || strcmp(kind, "atomic_sleep") == 0)) {
		if (named(func, sleep_exact, ELEMENTSOF(sleep_exact)))
			return true;
		for (size_t i = 0; i < ELEMENTSOF(sleep_prefixes); i++)
			if (starts(func, sleep_prefixes[i]))
				return true;
	}
	return false;
}

static void set_headline(struct bug_signature *s, const char *h)
{
	snprintf(s->headline, sizeof(s->headline), "%s", h);
}

/* The part of a line after "at: " that lockdep prints for a lock (", at:
 * func+0x1c/0x40"). */
static void lockdep_at(struct bug_signature *s, const char *msg)
{
	const char *at = strstr(msg, ", at: ");
	char f[BUG_SIG_FUNC_MAX];
	bool unreliable;
	if (at && !s->func[0] && bug_signature_frame(at + 6, f, &unreliable) &&
	    !bug_signature_skipped(s->kind, f)) {
		snprintf(s->func, sizeof(s->func), "%s", f);
		s->done = true;
	}
}

static void begin_warning(struct bug_signature *s, const char *msg)
{
	const char *rest = msg + strlen("WARNING: ");
	for (size_t i = 0; i < ELEMENTSOF(lockdep_headlines); i++)
		if (starts(rest, lockdep_headlines[i].headline)) {
			s->kind = "lockdep";
			set_headline(s, lockdep_headlines[i].title);
			s->stack_only = true;
			return;
		}
	if (lockdep_lock_order(rest)) {
		s->kind = "lockdep";
		set_headline(s, "possible deadlock");
		s->stack_only = true;
		return;
	}
	s->kind = "warn";
	/* "WARNING: CPU: 1 PID: 7 at kernel/sched/rt.c:1108 func+0x57/0x70" */
	const char *at = strstr(rest, " at ");
	if (starts(rest, "CPU: ") && at) {
		set_headline(s, "WARNING");
		const char *p = take_location(s, at + 4);
		char f[BUG_SIG_FUNC_MAX];
		bool unreliable;
		while (*p == ' ')
			p++;
		if (bug_signature_frame(p, f, &unreliable) && !bug_signature_skipped(s->kind, f)) {
			snprintf(s->func, sizeof(s->func), "%s", f);
			s->done = true;
		}
		s->use_rip = true;
		return;
	}
	snprintf(s->headline, sizeof(s->headline), "WARNING: ");
	copy_trimmed(s->headline + 9, sizeof(s->headline) - 9, rest, description_len(rest));
	s->use_rip = true;
}

static void begin_bug(struct bug_signature *s, const char *msg)
{
	s->kind = "bug";
	s->use_rip = true;
	if (starts(msg, "kernel BUG at ")) {
		set_headline(s, "kernel BUG");
		take_location(s, msg + strlen("kernel BUG at "));
		return;
	}
	const char *rest = msg + strlen("BUG: ");
	static const char *const sleeping = "sleeping function called from invalid context";
	if (starts(rest, sleeping)) {
		s->kind = "atomic_sleep";
		set_headline(s, "BUG: sleeping function called from invalid context");
		const char *at = strstr(rest, " at ");
		if (at)
			take_location(s, at + 4);
		s->use_rip = false;
		s->stack_only = true;
		return;
	}
	if (starts(rest, "scheduling while atomic")) {
		s->kind = "atomic_sleep";
		set_headline(s, "BUG: scheduling while atomic");
		s->use_rip = false;
		s->stack_only = true;
		return;
	}
	for (size_t i = 0; i < ELEMENTSOF(lockdep_headlines); i++)
		if (starts(rest, lockdep_headlines[i].headline)) {
			s->kind = "lockdep";
			set_headline(s, lockdep_headlines[i].title);
			s->use_rip = false;
			s->stack_only = true;
			return;
		}
	/* "BUG: using smp_processor_id() in preemptible [00000000] code: x/1" */
	snprintf(s->headline, sizeof(s->headline), "BUG: ");
	copy_trimmed(s->headline + 5, sizeof(s->headline) - 5, rest, description_len(rest));
	if (starts(rest, "using smp_processor_id() in preemptible") ||
	    starts(rest, "using __this_cpu_")) {
		s->use_rip = false;
		s->stack_only = true;
	}
}

void bug_signature_begin(struct bug_signature *s, const char *event_kind, const char *msg)
{
	memset(s, 0, sizeof(*s));
	s->lines_left = BUG_SIG_SCAN_LINES;
	/* The scanner's markers may sit after a prefix ("watchdog: ", "rcu: "). */
	if (strcmp(event_kind, "warning") == 0) {
		begin_warning(s, msg);
	} else if (strcmp(event_kind, "bug") == 0) {
		begin_bug(s, msg);
	} else if (strcmp(event_kind, "oops") == 0) {
		s->kind = "oops";
		s->use_rip = true;
		if (starts(msg, "general protection fault"))
			set_headline(s, "general protection fault");
		else
			set_headline(s, "Oops");
	} else if (strcmp(event_kind, "panic") == 0) {
		s->kind = "panic";
		const char *m = strstr(msg, "not syncing");
		m = m ? m + strlen("not syncing") : msg;
		while (*m == ':' || *m == ' ')
			m++;
		snprintf(s->headline, sizeof(s->headline), "kernel panic: ");
		size_t h = strlen(s->headline);
		copy_trimmed(s->headline + h, sizeof(s->headline) - h, m, 100);
		s->done = true; /* syzkaller's title: the message, no function */
	} else if (strcmp(event_kind, "soft_lockup") == 0) {
		s->kind = "soft_lockup";
		set_headline(s, "BUG: soft lockup");
		s->use_rip = true;
	} else if (strcmp(event_kind, "hard_lockup") == 0) {
		s->kind = "hard_lockup";
		set_headline(s, "BUG: hard lockup");
		s->use_rip = true;
	} else if (strcmp(event_kind, "rcu_stall") == 0) {
		s->kind = "rcu_stall";
		set_headline(s, "INFO: rcu detected stall");
		s->use_rip = true;
	} else if (strcmp(event_kind, "hung_task") == 0) {
		s->kind = "hung_task";
		set_headline(s, "INFO: task hung");
		s->stack_only = true;
	} else if (strcmp(event_kind, "hang") == 0) {
		s->kind = "hang";
		set_headline(s, "hang");
		s->use_rip = true;
		s->lines_left = BUG_SIG_HANG_LINES;
	} else {
		s->kind = "bug";
		set_headline(s, "kernel report");
	}
}

bool bug_signature_wants_lines(const struct bug_signature *s)
{
	return !s->done && s->lines_left > 0;
}

bool bug_signature_suspend(struct bug_signature *s)
{
	if (bug_signature_wants_lines(s) && !s->in_trace && !s->resumed) {
		s->suspended = true;
		return true;
	}
	s->lines_left = 0;
	s->suspended = false;
	return false;
}

void bug_signature_resume(struct bug_signature *s)
{
	if (!s->suspended)
		return;
	s->suspended = false;
	s->resumed = true;
}

/* The scheduler's timer-driven housekeeping: the tick and the load
 * balancing softirq it raises. A CPU whose <IRQ> section shows them spins
 * there on a runqueue lock another CPU holds. */
static bool housekeeping_frame(const char *f)
{
	static const char *const names[] = {
	    "scheduler_tick",	    "update_process_times",  "tick_sched_handle",
	    "tick_sched_timer",	    "run_rebalance_domains", "sched_balance_softirq",
	    "trigger_load_balance",
	};
	return named(f, names, ELEMENTSOF(names));
}

/* The scheduler's common paths that take a runqueue lock on any CPU, in
 * 6.1's and 6.12's names: a CPU found spinning there is, far more often than
 * not, waiting for a lock another CPU holds (a patch that deadlocks inside
 * one of them is still named when no other CPU names anything better). */
static bool rq_lock_path_frame(const char *f)
{
	static const char *const names[] = {
	    "__schedule",
	    "schedule_idle",
	    "try_to_wake_up",
	    "ttwu_queue",
	    "sched_ttwu_pending",
	    "wake_up_new_task",
	    "scheduler_tick",
	    "sched_tick",
	    "update_blocked_averages",
	    "sched_balance_update_blocked_averages",
	    "run_rebalance_domains",
	    "sched_balance_softirq",
	    "rebalance_domains",
	    "sched_balance_domains",
	    "load_balance",
	    "sched_balance_rq",
	    "newidle_balance",
	    "sched_balance_newidle",
	    "_nohz_idle_balance",
	    "nohz_csd_func",
	    "do_sched_yield",
	    "migration_cpu_stop",
	    "move_queued_task",
	    "__set_cpus_allowed_ptr",
	    "__sched_setscheduler",
	    "sched_move_task",
	    "sched_cgroup_fork",
	    "yield_to",
	};
	return named(f, names, ELEMENTSOF(names));
}

/* The CPU read so far is done. Its innermost function F ranks
 *   1 in task context, 2 inside an interrupt (a holder can spin there too:
 *   a push from irq_work, a wake-up from a timer), when F is not one of the
 *   scheduler's common lock-taking paths;
 *   3 when F is one (a waiter: __schedule on the runqueue lock), in task
 *   context, 4 inside an interrupt or inside the scheduler's timer-driven
 *   housekeeping (the tick, the load-balancing softirq: it only waits).
 * The first CPU of the best rank names the hang. */
static void hang_cpu_end(struct bug_signature *s)
{
	if (s->cpu.first[0]) {
		/* a waiter ranks two below a CPU in the same context */
		bool waits = s->cpu.housekeeping || rq_lock_path_frame(s->cpu.first);
		int rank = (s->cpu.first_in_task ? 1 : 2) + (waits ? 2 : 0);
		if (!s->best_rank || rank < s->best_rank) {
			snprintf(s->best, sizeof(s->best), "%s", s->cpu.first);
			s->best_rank = rank;
		}
		if (rank == 1) {
			snprintf(s->func, sizeof(s->func), "%s", s->best);
			s->done = true;
		}
	}
	memset(&s->cpu, 0, sizeof(s->cpu));
}

/* Inside <NMI>: the detector's own frames up to the NMI's entry, then (after
 * end_repeat_nmi, or asm_exc_nmi on kernels without the repeat path) the
 * code it interrupted, printed before the <TASK> or <IRQ> section that
 * starts at that code's caller. The interrupted frame is the CPU's innermost
 * function, as syzkaller titles lockups: a loop planted in push_rt_tasks
 * otherwise read as "hang in ttwu_do_wakeup", its caller. */
static void hang_nmi_frame(struct bug_signature *s, const char *p)
{
	char f[BUG_SIG_FUNC_MAX];
	bool unreliable;
	if (!bug_signature_frame(p, f, &unreliable))
		return;
	if (strcmp(f, "end_repeat_nmi") == 0 || strcmp(f, "asm_exc_nmi") == 0) {
		s->cpu.past_nmi_entry = true;
		return;
	}
	if (!s->cpu.past_nmi_entry || s->cpu.first[0] || bug_signature_skipped(s->kind, f))
		return;
	snprintf(s->cpu.first, sizeof(s->cpu.first), "%s", f);
	s->cpu.from_nmi = true;
	s->cpu.first_in_task = true; /* until an <IRQ> section says otherwise */
}

/* A hang's line: each CPU's backtrace is read from its RIP: line on, every
 * context but the detector's own part of <NMI>; a lock's holder may spin in
 * an interrupt too (an irq_work push, a wake-up from a timer). */
static void hang_line(struct bug_signature *s, const char *p)
{
	if (starts(p, "NMI backtrace for cpu")) {
		hang_cpu_end(s);
		return;
	}
	if (starts(p, "<NMI>") || starts(p, "</NMI>")) {
		s->cpu.in_nmi = starts(p, "<NMI>");
		s->cpu.past_nmi_entry = false;
		return;
	}
	if (starts(p, "<IRQ>") || starts(p, "<TASK>")) {
		/* The section after </NMI> is where the interrupted frame ran. */
		if (s->cpu.from_nmi && !s->cpu.ctx_known)
			s->cpu.first_in_task = starts(p, "<TASK>");
		s->cpu.ctx_known = true;
	}
	if (starts(p, "<IRQ>") || starts(p, "</IRQ>")) {
		s->in_irq = starts(p, "<IRQ>");
		return;
	}
	if (s->cpu.in_nmi) {
		hang_nmi_frame(s, p);
		return;
	}
	char f[BUG_SIG_FUNC_MAX];
	bool unreliable;
	if (!bug_signature_frame(p, f, &unreliable))
		return;
	bool rip = starts(p, "RIP: ");
	if (!rip && !s->in_trace)
		return;
	if (s->in_irq && housekeeping_frame(f))
		s->cpu.housekeeping = true;
	if (s->cpu.first[0] || bug_signature_skipped(s->kind, f))
		return;
	snprintf(s->cpu.first, sizeof(s->cpu.first), "%s", f);
	s->cpu.first_in_task = !rip && !s->in_irq;
}

void bug_signature_line(struct bug_signature *s, const char *msg)
{
	if (!bug_signature_wants_lines(s) || s->suspended)
		return;
	s->lines_left--;
	const char *p = msg;
	while (*p == ' ' || *p == '\t')
		p++;
	if (starts(p, "---[ end trace")) {
		if (!s->resumed || s->in_trace)
			s->done = true;
		return;
	}
	if (strcmp(s->kind, "lockdep") == 0) {
		lockdep_at(s, p);
		if (s->done)
			return;
		/* "kernel/sched/core.c:123 suspicious rcu_dereference_check() usage!" */
		if (!s->location[0] && strstr(p, " suspicious ") && strstr(p, "usage"))
			take_location(s, p);
	}
	if (starts(p, "Call Trace:")) {
		s->in_trace = true;
		return;
	}
	if (strcmp(s->kind, "hang") == 0) {
		hang_line(s, p);
		return;
	}
	/* The detector's own frames. */
	bool timer_kind = strcmp(s->kind, "rcu_stall") == 0 || strcmp(s->kind, "soft_lockup") == 0;
	if (starts(p, "<NMI>") || (timer_kind && starts(p, "<IRQ>"))) {
		s->in_irq = true;
		return;
	}
	if (starts(p, "</NMI>") || starts(p, "</IRQ>")) {
		s->in_irq = false;
		return;
	}
	char f[BUG_SIG_FUNC_MAX];
	bool unreliable;
	if (!bug_signature_frame(p, f, &unreliable))
		return;
	bool rip = starts(p, "RIP: ");
	if (rip ? !s->use_rip || s->stack_only : !s->in_trace || s->in_irq)
		return;
	if (bug_signature_skipped(s->kind, f))
		return;
	if (unreliable) {
		/* A kernel without frame pointers or ORC (this project's guest
		 * config) prints every frame as "? f": the first one is the
		 * best there is when no reliable frame follows. */
		if (!s->guess[0])
			snprintf(s->guess, sizeof(s->guess), "%s", f);
		return;
	}
	snprintf(s->func, sizeof(s->func), "%s", f);
	s->done = true;
}

void bug_signature_end(struct bug_signature *s)
{
	if (strcmp(s->kind ? s->kind : "", "hang") == 0 && !s->func[0]) {
		hang_cpu_end(s);
		if (!s->func[0] && s->best_rank)
			snprintf(s->func, sizeof(s->func), "%s", s->best);
	}
	if (!s->func[0] && s->guess[0])
		snprintf(s->func, sizeof(s->func), "%s", s->guess);
	snprintf(s->title, sizeof(s->title), "%s", s->headline);
	if (s->func[0]) {
		size_t n = strlen(s->title);
		int w = snprintf(s->title + n, sizeof(s->title) - n, " in %.*s",
				 BUG_SIG_FUNC_MAX - 1, s->func);
		(void)w; /* a title cut short is still the same for the same bug */
	}
	/* The console keeps tabs; a title is one line of plain text. */
	for (char *c = s->title; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = ' ';
	struct hash_ctx *h = hash_new();
	char hex[HASH_HEX_LEN];
	if (!h) {
		snprintf(s->id, sizeof(s->id), "0000000000000000");
		return;
	}
	hash_update_str(h, s->kind);
	hash_update_str(h, s->title);
	hash_final_hex(h, hex);
	snprintf(s->id, sizeof(s->id), "%.16s", hex);
	s->done = true;
	s->lines_left = 0;
}
