/* Kernel events on real console captures (tests/data/console/README), in
 * any chunking, with the bounds on lines and events. Run from tests/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "guest/console_events.h"
#include "util/fs.h"

static char *load(const char *name, size_t *len)
{
	char *path = fs_path_join("data/console", name);
	char *data = NULL;
	struct sl_error err = {0};
	if (fs_read_file(path, 1 << 20, &data, len, &err) < 0)
		fail_msg("%s", err.message);
	free(path);
	return data;
}

/* Scans a file fed in chunks of chunk bytes; returns the events (new ref). */
static json_object *scan(const char *name, size_t chunk, struct console_events **ret_ce)
{
	size_t len;
	char *data = load(name, &len);
	struct console_events *ce = console_events_new();
	for (size_t off = 0; off < len; off += chunk)
		console_events_feed(ce, data + off, len - off < chunk ? len - off : chunk);
	console_events_finish(ce);
	free(data);
	json_object *ev = console_events_to_json(ce);
	if (ret_ce)
		*ret_ce = ce;
	else
		console_events_free(ce);
	return ev;
}

static const char *field(json_object *ev, size_t i, const char *key)
{
	return json_object_get_string(
	    json_object_object_get(json_object_array_get_idx(ev, i), key));
}

static void test_clean_boot_has_no_events(void **state)
{
	(void)state;
	struct console_events *ce;
	json_object *ev = scan("boot-ok-schedlab.txt", 4096, &ce);
	assert_int_equal(json_object_array_length(ev), 0);
	assert_int_equal(console_events_count(ce), 0);
	assert_true(console_events_saw_halt(ce));
	assert_false(console_events_saw_restart(ce));
	console_events_free(ce);
	json_object_put(ev);
}

static void test_real_panic(void **state)
{
	(void)state;
	struct console_events *ce;
	json_object *ev = scan("panic-sysrq-debian-cloud.txt", 4096, &ce);
	assert_int_equal(json_object_array_length(ev), 1);
	assert_string_equal(field(ev, 0, "kind"), "panic");
	assert_non_null(
	    strstr(field(ev, 0, "line"), "Kernel panic - not syncing: sysrq triggered crash"));
	assert_null(strchr(field(ev, 0, "line"), '\r')); /* CRLF from the pty */
	const char *ex = field(ev, 0, "excerpt");
	assert_non_null(strstr(ex, "sysrq: Trigger a crash")); /* the line before */
	assert_non_null(strstr(ex, "Call Trace:"));	       /* lines after */
	assert_null(strchr(ex, '\r'));
	int lines = 1;
	for (const char *c = ex; *c; c++)
		lines += *c == '\n';
	assert_true(lines <= CONSOLE_EXCERPT_BEFORE + 1 + CONSOLE_EXCERPT_AFTER);
	assert_true(console_events_has(ce, "panic"));
	assert_false(console_events_has(ce, "warning"));
	console_events_free(ce);
	json_object_put(ev);
}

static void test_real_panic_schedlab(void **state)
{
	(void)state;
	struct console_events *ce;
	json_object *ev = scan("panic-crashme-schedlab.txt", 512, &ce);
	assert_int_equal(json_object_array_length(ev), 1);
	assert_string_equal(field(ev, 0, "kind"), "panic");
	const char *ex = field(ev, 0, "excerpt");
	assert_non_null(strstr(ex, "running workload 0 'crashme'"));
	assert_non_null(strstr(ex, "Kernel Offset: disabled"));
	assert_false(console_events_saw_halt(ce));
	console_events_free(ce);
	json_object_put(ev);
}

static void test_chunking_does_not_matter(void **state)
{
	(void)state;
	const char *files[] = {"panic-sysrq-debian-cloud.txt", "warning-module-put.txt",
			       "oops-null-deref.txt"};
	for (size_t f = 0; f < ELEMENTSOF(files); f++) {
		json_object *whole = scan(files[f], 1 << 20, NULL);
		json_object *bytes = scan(files[f], 1, NULL);
		json_object *odd = scan(files[f], 7, NULL);
		assert_string_equal(json_object_to_json_string(whole),
				    json_object_to_json_string(bytes));
		assert_string_equal(json_object_to_json_string(whole),
				    json_object_to_json_string(odd));
		json_object_put(whole);
		json_object_put(bytes);
		json_object_put(odd);
	}
}

static void test_documented_samples(void **state)
{
	(void)state;
	json_object *ev = scan("warning-module-put.txt", 100, NULL);
	assert_int_equal(json_object_array_length(ev), 1);
	assert_string_equal(field(ev, 0, "kind"), "warning");
	assert_non_null(
	    strstr(field(ev, 0, "line"), "WARNING: CPU: 1 PID: 28102 at kernel/module.c:1108"));
	assert_non_null(strstr(field(ev, 0, "excerpt"), "[ cut here ]"));
	json_object_put(ev);

	ev = scan("oops-null-deref.txt", 100, NULL);
	assert_int_equal(json_object_array_length(ev), 2);
	assert_string_equal(field(ev, 0, "kind"), "bug");
	assert_string_equal(field(ev, 1, "kind"), "oops");
	json_object_put(ev);

	ev = scan("rcu-stall.txt", 100, NULL);
	assert_int_equal(json_object_array_length(ev), 1);
	assert_string_equal(field(ev, 0, "kind"), "rcu_stall");
	json_object_put(ev);
}

static void test_line_kinds(void **state)
{
	(void)state;
	/* The kernel's own format strings (kernel/watchdog.c, watchdog_hld.c,
	 * hung_task.c, rcu/tree_stall.h, panic.c), as they print. */
	assert_string_equal(console_line_kind("[   22.123456] watchdog: BUG: soft lockup - CPU#1 "
					      "stuck for 22s! [spin:77]"),
			    "soft_lockup");
	assert_string_equal(console_line_kind("[   30.000001] NMI watchdog: Watchdog detected hard "
					      "LOCKUP on cpu 1"),
			    "hard_lockup");
	assert_string_equal(
	    console_line_kind("[  243.000000] INFO: task kworker/0:1:12 blocked for "
			      "more than 120 seconds."),
	    "hung_task");
	assert_string_equal(
	    console_line_kind("[   41.1] rcu: INFO: rcu_preempt self-detected stall "
			      "on CPU"),
	    "rcu_stall");
	assert_string_equal(
	    console_line_kind("<0>[    1.000000] Kernel panic - not syncing: Attempted "
			      "to kill init! exitcode=0x0000000b"),
	    "panic");
	assert_string_equal(console_line_kind("kernel BUG at mm/slub.c:123!"), "bug");
	assert_string_equal(
	    console_line_kind("general protection fault, probably for non-canonical "
			      "address 0xdead: 0000 [#1] PREEMPT SMP"),
	    "oops");
	/* Not events: the marker inside other text, or a harmless INFO line. */
	assert_null(console_line_kind("schedlab-agent: workload printed WARNING: nothing"));
	assert_null(console_line_kind("[    0.1] INFO: task list is fine"));
	assert_null(console_line_kind("[    0.493815] ACPI Error: AE_BAD_PARAMETER"));
	assert_null(console_line_kind(""));
}

static void test_bounds(void **state)
{
	(void)state;
	struct console_events *ce = console_events_new();
	char line[64];
	for (int i = 0; i < 100; i++) {
		int n =
		    snprintf(line, sizeof(line), "[ %d.0] WARNING: CPU: 0 PID: %d at x\n", i, i);
		console_events_feed(ce, line, (size_t)n);
	}
	assert_int_equal(console_events_count(ce), 100);
	json_object *ev = console_events_to_json(ce);
	assert_int_equal(json_object_array_length(ev), CONSOLE_EVENTS_MAX);
	json_object_put(ev);
	console_events_free(ce);

	/* A huge line with bytes that are not ASCII: cut, and made ASCII. */
	ce = console_events_new();
	size_t big = 100000;
	char *buf = malloc(big + 40);
	int n = snprintf(buf, 40, "Kernel panic - not syncing: \xff\xfe");
	memset(buf + n, 'x', big - (size_t)n);
	buf[big] = '\n';
	console_events_feed(ce, buf, big + 1);
	free(buf);
	ev = console_events_to_json(ce);
	const char *l = field(ev, 0, "line");
	assert_int_equal(strlen(l), CONSOLE_LINE_MAX);
	for (const char *c = l; *c; c++)
		assert_true((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f);
	json_object_put(ev);
	console_events_free(ce);
	console_events_free(NULL);
}

/* The signature of event i: kind, title, location ("" when none). */
static const char *sig(json_object *ev, size_t i, const char *key)
{
	json_object *s = json_object_object_get(json_object_array_get_idx(ev, i), "signature");
	json_object *v = json_object_object_get(s, key);
	return v ? json_object_get_string(v) : "";
}

/* One golden capture per kind of report (tests/data/console/README): the
 * signature each gets, in any chunking. */
static void test_golden_signatures(void **state)
{
	(void)state;
	static const struct {
		const char *file, *kind, *title, *location;
		int events;
	} golden[] = {
	    {"lockdep-circular-6.1.txt", "lockdep", "possible deadlock in planted_take_b", "", 1},
	    {"atomic-sleep-6.1.txt", "atomic_sleep",
	     "BUG: sleeping function called from invalid context in planted_sleep_under_lock",
	     "kernel/locking/mutex.c:580", 1},
	    {"warn-sched-6.1.txt", "warn", "WARNING in push_rt_task", "kernel/sched/rt.c:2124", 1},
	    {"soft-lockup-6.1.txt", "soft_lockup", "BUG: soft lockup in push_rt_tasks", "", 1},
	    {"hard-lockup-6.1.txt", "hard_lockup", "BUG: hard lockup in push_rt_tasks", "", 3},
	    {"rcu-stall-6.1.txt", "rcu_stall",
	     "INFO: rcu detected stall in pick_next_pushable_task", "", 1},
	    {"hung-task-6.1.txt", "hung_task", "INFO: task hung in planted_work_fn", "", 1},
	    {"oops-null-deref-6.1.txt", "bug",
	     "BUG: kernel NULL pointer dereference in pick_next_task_rt", "", 3},
	    {"panic-sysrq-debian-cloud.txt", "panic", "kernel panic: sysrq triggered crash", "", 1},
	    {"warning-module-put.txt", "warn", "WARNING in module_put", "kernel/module.c:1108", 1},
	    {"oops-null-deref.txt", "bug",
	     "BUG: unable to handle kernel NULL pointer dereference in my_oops_init", "", 2},
	    /* Captured from the lockdep debug kernel with the planted bugs
	     * (tests/e2e/45-planted-debug.sh, docs/kernel-bugs.md). */
	    {"atomic-sleep-captured-6.1.txt", "atomic_sleep",
	     "BUG: sleeping function called from invalid context in push_rt_task",
	     "kernel/sched/rt.c:2105", 1},
	    {"lockdep-circular-captured-6.1.txt", "lockdep", "possible deadlock in push_rt_task",
	     "", 1},
	    {"warn-sched-captured-6.1.txt", "warn", "WARNING in push_rt_task",
	     "kernel/sched/rt.c:2214", 1},
	};
	for (size_t g = 0; g < ELEMENTSOF(golden); g++) {
		size_t chunks[] = {1 << 20, 1, 13};
		for (size_t c = 0; c < ELEMENTSOF(chunks); c++) {
			json_object *ev = scan(golden[g].file, chunks[c], NULL);
			print_message("%s: %s / %s / %s\n", golden[g].file, sig(ev, 0, "kind"),
				      sig(ev, 0, "title"), sig(ev, 0, "location"));
			assert_int_equal(json_object_array_length(ev), golden[g].events);
			assert_string_equal(sig(ev, 0, "kind"), golden[g].kind);
			assert_string_equal(sig(ev, 0, "title"), golden[g].title);
			assert_string_equal(sig(ev, 0, "location"), golden[g].location);
			assert_int_equal(strlen(sig(ev, 0, "id")), 16);
			/* The panic or Oops that ends a report is part of it. */
			for (size_t i = 1; i < json_object_array_length(ev); i++) {
				json_object *e = json_object_array_get_idx(ev, i);
				assert_null(json_object_object_get(e, "signature"));
				assert_int_equal(
				    json_object_get_int(json_object_object_get(e, "part_of")), 0);
			}
			json_object_put(ev);
		}
	}
}

/* The silence rule's hang (docs/kernel-bugs.md): the NMI's backtraces are
 * read CPU by CPU, each CPU's innermost meaningful function ranked: task
 * context first (the captured hang-nmi-6.1.txt; hang-nmi-softirq-6.1.txt,
 * captured too, where the CPU printed first spins in the load-balancing
 * softirq), then another interrupt (the push from irq_work in
 * hang-nmi-irq-6.1.txt, printed after the tick's victim, which had
 * interrupted a syscall), then the scheduler's common lock-taking paths
 * (hang-nmi-waiter-6.1.txt, captured: migration/0 printed first, waiting in
 * __schedule for the lock the other CPU's push holds) and its housekeeping
 * (hang-nmi-wakeup-6.1.txt, captured: the push from a wake-up's IPI on
 * CPU 0, the tick on CPU 1's task stack, no <IRQ> marker).
 * With only a waiter, the waiter names the hang. */
static json_object *scan_hang(const char *data, size_t len, size_t chunk)
{
	struct console_events *ce = console_events_new();
	console_events_begin_hang(ce, 30);
	for (size_t off = 0; off < len; off += chunk)
		console_events_feed(ce, data + off, len - off < chunk ? len - off : chunk);
	console_events_finish(ce);
	json_object *ev = console_events_to_json(ce);
	console_events_free(ce);
	return ev;
}

static void test_hang_signatures(void **state)
{
	(void)state;
	static const char *const files[] = {"hang-nmi-6.1.txt", "hang-nmi-irq-6.1.txt",
					    "hang-nmi-softirq-6.1.txt", "hang-nmi-waiter-6.1.txt",
					    "hang-nmi-wakeup-6.1.txt"};
	for (size_t f = 0; f < ELEMENTSOF(files); f++) {
		size_t chunks[] = {1 << 20, 1, 13};
		size_t len;
		char *data = load(files[f], &len);
		for (size_t c = 0; c < ELEMENTSOF(chunks); c++) {
			json_object *ev = scan_hang(data, len, chunks[c]);
			print_message("%s: %s\n", files[f], sig(ev, 0, "title"));
			assert_string_equal(sig(ev, 0, "kind"), "hang");
			assert_string_equal(sig(ev, 0, "title"), "hang in push_rt_task");
			json_object_put(ev);
		}
		free(data);
	}

	/* The holder interrupted by the NMI itself (hang-nmi-pushloop-6.1.txt:
	 * a loop planted in push_rt_tasks): its frame is in the <NMI> section,
	 * after end_repeat_nmi, and the <TASK> section starts at its caller.
	 * The interrupted frame names the hang, as syzkaller titles lockups. */
	size_t len;
	char *data = load("hang-nmi-pushloop-6.1.txt", &len);
	for (size_t chunk = 1; chunk <= (1 << 20); chunk = chunk == 1 ? 13 : 1 << 20) {
		json_object *pl = scan_hang(data, len, chunk);
		assert_string_equal(sig(pl, 0, "title"), "hang in push_rt_tasks");
		json_object_put(pl);
		if (chunk == 1 << 20)
			break;
	}
	free(data);

	/* Only the tick's victim (the holder's backtrace cut off). */
	data = load("hang-nmi-irq-6.1.txt", &len);
	char *cut = strstr(data, "NMI backtrace for cpu 0");
	assert_non_null(cut);
	json_object *ev = scan_hang(data, (size_t)(cut - data), 1 << 20);
	assert_string_equal(sig(ev, 0, "title"), "hang in scheduler_tick");
	json_object_put(ev);
	free(data);

	/* Only the waiter in __schedule (the holder's backtrace cut off). */
	data = load("hang-nmi-waiter-6.1.txt", &len);
	cut = strstr(data, "NMI backtrace for cpu 1");
	assert_non_null(cut);
	ev = scan_hang(data, (size_t)(cut - data), 1 << 20);
	assert_string_equal(sig(ev, 0, "title"), "hang in __schedule");
	json_object_put(ev);
	free(data);
}

/* A report printed in the middle of another (tests/data/console/README:
 * the lockdep report that printing the first atomic-sleep report from under
 * the runqueue lock sets off comes between its headline and its "in_atomic():"
 * line): the first report reads its own continuation after the lockdep
 * report's trace ends, and gets the title and id of the same bug's next,
 * uninterrupted report; the lockdep report is a signature of its own. */
static void test_interrupted_report(void **state)
{
	(void)state;
	size_t chunks[] = {1 << 20, 1, 13};
	for (size_t c = 0; c < ELEMENTSOF(chunks); c++) {
		json_object *ev =
		    scan("atomic-sleep-interrupted-captured-6.1.txt", chunks[c], NULL);
		for (size_t i = 0; i < json_object_array_length(ev); i++)
			print_message("event %zu: %s / %s / %s\n", i, sig(ev, i, "kind"),
				      sig(ev, i, "title"), sig(ev, i, "id"));
		assert_int_equal(json_object_array_length(ev), 3);
		static const char *const sleeping =
		    "BUG: sleeping function called from invalid context in push_rt_task";
		assert_string_equal(sig(ev, 0, "kind"), "atomic_sleep");
		assert_string_equal(sig(ev, 0, "title"), sleeping);
		assert_string_equal(sig(ev, 0, "location"), "kernel/sched/rt.c:2105");
		assert_string_equal(sig(ev, 1, "kind"), "lockdep");
		assert_string_equal(sig(ev, 1, "title"),
				    "possible deadlock in console_emit_next_record");
		assert_string_equal(sig(ev, 2, "title"), sleeping);
		assert_string_equal(sig(ev, 0, "id"), sig(ev, 2, "id"));
		assert_string_not_equal(sig(ev, 0, "id"), sig(ev, 1, "id"));
		/* The first report's excerpt shows its own continuation too. */
		const char *x = field(ev, 0, "excerpt");
		assert_non_null(strstr(x, "BUG: sleeping function called"));
		assert_non_null(strstr(x, "in_atomic(): 1, irqs_disabled(): 1"));
		json_object_put(ev);
	}
	/* Cut down from it: a WARN in the middle, whose "---[ end trace" comes
	 * after its own trace, does not end the resumed report; a third
	 * report before the interrupting one's trace ended stops it. */
	static const char *const sleep_bug =
	    "BUG: sleeping function called from invalid context at kernel/sched/rt.c:2105\n";
	static const char *const warn = "WARNING: CPU: 1 PID: 34 at kernel/printk/printk.c:9 x\n"
					"Call Trace:\n <TASK>\n ? vprintk_emit+0x1/0x2\n </TASK>\n"
					"---[ end trace 0000000000000000 ]---\n";
	static const char *const rest = "in_atomic(): 1, irqs_disabled(): 1, non_block: 0\n"
					"Call Trace:\n <TASK>\n ? __might_resched+0x1/0x2\n"
					" ? push_rt_task+0x149/0x1a0\n </TASK>\n";
	static const struct {
		const char *second, *title;
	} cases[] = {
	    {"", "BUG: sleeping function called from invalid context in push_rt_task"},
	    {"WARNING: CPU: 0 PID: 1 at kernel/sched/core.c:9 set_task_cpu+0x1/0x2\n",
	     "BUG: sleeping function called from invalid context"},
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		char text[1024];
		snprintf(text, sizeof(text), "%s%s%s%s", sleep_bug, cases[i].second, warn, rest);
		struct console_events *ce = console_events_new();
		console_events_feed(ce, text, strlen(text));
		console_events_finish(ce);
		json_object *ev = console_events_to_json(ce);
		assert_string_equal(sig(ev, 0, "title"), cases[i].title);
		json_object_put(ev);
		console_events_free(ce);
	}
}

/* The same bug in three runs, with other timestamps, CPUs and PIDs: one id;
 * another bug: another id. Two reports on one console: two signatures. */
static void test_same_bug_same_id(void **state)
{
	(void)state;
	const char *runs[] = {
	    "[ 1.0] WARNING: CPU: 0 PID: 10 at kernel/sched/rt.c:2124 push_rt_task+0x1/0x2\n",
	    "[ 9.5] WARNING: CPU: 1 PID: 77 at kernel/sched/rt.c:2124 "
	    "push_rt_task.part.0+0x3/0x9\n",
	    "<4>[ 3.3] WARNING: CPU: 1 PID: 5 at kernel/sched/rt.c:2124 push_rt_task+0x1/0x2\n"};
	char first[17] = "";
	for (size_t i = 0; i < ELEMENTSOF(runs); i++) {
		struct console_events *ce = console_events_new();
		console_events_feed(ce, runs[i], strlen(runs[i]));
		console_events_finish(ce);
		json_object *ev = console_events_to_json(ce);
		if (i == 0)
			snprintf(first, sizeof(first), "%s", sig(ev, 0, "id"));
		assert_string_equal(sig(ev, 0, "id"), first);
		json_object_put(ev);
		console_events_free(ce);
	}
	const char *two = "WARNING: CPU: 0 PID: 1 at kernel/sched/rt.c:9 push_rt_task+0x1/0x2\n"
			  "---[ end trace 0000000000000000 ]---\n"
			  "WARNING: CPU: 0 PID: 1 at kernel/sched/core.c:9 set_task_cpu+0x1/0x2\n";
	struct console_events *ce = console_events_new();
	console_events_feed(ce, two, strlen(two));
	console_events_finish(ce);
	json_object *ev = console_events_to_json(ce);
	assert_int_equal(json_object_array_length(ev), 2);
	assert_string_equal(sig(ev, 1, "title"), "WARNING in set_task_cpu");
	assert_string_not_equal(sig(ev, 1, "id"), first);
	json_object_put(ev);
	console_events_free(ce);
	/* A tab from the console stays out of a title (fuzz_console found it). */
	ce = console_events_new();
	const char *tab = "Kernel panic - not syncing: a\tb\n";
	console_events_feed(ce, tab, strlen(tab));
	console_events_finish(ce);
	ev = console_events_to_json(ce);
	assert_string_equal(sig(ev, 0, "title"), "kernel panic: a b");
	json_object_put(ev);
	console_events_free(ce);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clean_boot_has_no_events),
	    cmocka_unit_test(test_real_panic),
	    cmocka_unit_test(test_real_panic_schedlab),
	    cmocka_unit_test(test_chunking_does_not_matter),
	    cmocka_unit_test(test_documented_samples),
	    cmocka_unit_test(test_line_kinds),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_golden_signatures),
	    cmocka_unit_test(test_hang_signatures),
	    cmocka_unit_test(test_interrupted_report),
	    cmocka_unit_test(test_same_bug_same_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
