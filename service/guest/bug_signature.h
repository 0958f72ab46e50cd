/* A kernel bug report's signature, as syzkaller names one: a kind and a title
 * made of the report's headline and its first meaningful function ("WARNING
 * in enqueue_task_rt", "possible deadlock in planted_take_b"), with the
 * file:line when the kernel prints one. Two reports of the same bug in two
 * runs get the same kind and title, hence the same id. The rules (kinds,
 * which frames are skipped, how far a report is read) are in
 * docs/kernel-bugs.md.
 *
 * It is a streaming parser of one report: begin() with the line that opened
 * it, then line() with each following console line until done() or the
 * scanner stops feeding it; end() settles the title. Lines are untrusted
 * guest output: everything kept is bounded and ASCII. */
#pragma once

#include <stdbool.h>

#define BUG_SIG_TITLE_MAX    160 /* bytes of a title, NUL included */
#define BUG_SIG_LOCATION_MAX 128 /* bytes of "file:line", NUL included */
#define BUG_SIG_FUNC_MAX     96	 /* bytes of a function name, NUL included */
#define BUG_SIG_SCAN_LINES   120 /* lines after the headline read for a function */
#define BUG_SIG_HANG_LINES   480 /* a hang's: one backtrace per CPU, about 60 lines each */
#define BUG_SIG_ID_LEN	     17	 /* 16 hex characters and NUL */

struct bug_signature {
	const char *kind;		  /* lockdep, atomic_sleep, warn, bug, oops, panic,
					     soft_lockup, hard_lockup, rcu_stall, hung_task, hang */
	char headline[BUG_SIG_TITLE_MAX]; /* the title without " in FUNC" */
	char location[BUG_SIG_LOCATION_MAX];
	char func[BUG_SIG_FUNC_MAX];   /* the first meaningful function, or "" */
	char guess[BUG_SIG_FUNC_MAX];  /* the first meaningful "? f" frame, or "" */
	char title[BUG_SIG_TITLE_MAX]; /* set by end() */
	char id[BUG_SIG_ID_LEN];       /* set by end(): hash of kind and title */
	int lines_left;
	bool in_trace, in_irq, use_rip, stack_only, done;
	bool suspended, resumed; /* see bug_signature_suspend() */
	/* A hang reads one backtrace per CPU ("NMI backtrace for cpu N"): the
	 * innermost meaningful function of the CPU being read, where it was
	 * found, whether its <IRQ> section is the scheduler's timer-driven
	 * housekeeping; and the best CPU's function so far, by rank (1: task
	 * context, 2: another interrupt, 3 and 4: the scheduler's common
	 * lock-taking paths and its housekeeping; docs/kernel-bugs.md). */
	/* past_nmi_entry: inside <NMI>, past end_repeat_nmi, where the frames
	 * are the code the NMI interrupted; from_nmi: first was found there,
	 * and its context is the section after </NMI> (ctx_known once read). */
	struct {
		char first[BUG_SIG_FUNC_MAX];
		bool first_in_task, housekeeping, in_nmi;
		bool past_nmi_entry, from_nmi, ctx_known;
	} cpu;
	char best[BUG_SIG_FUNC_MAX];
	int best_rank; /* 0: none yet */
};

/* Starts the signature of the report whose first line's message (no
 * timestamp) is msg, classified by the console scanner as event_kind
 * ("warning", "bug", "panic", ...: console_events.h). */
void bug_signature_begin(struct bug_signature *s, const char *event_kind, const char *msg);
/* Feeds a following line's message; a no-op once done. */
void bug_signature_line(struct bug_signature *s, const char *msg);
/* Whether it still wants lines. */
bool bug_signature_wants_lines(const struct bug_signature *s);
/* Another report's headline came: suspends s when that report interrupts it
 * (printed between s's headline and its trace: s has not reached its "Call
 * Trace:", still wants lines and was never suspended before) and returns
 * true; otherwise stops s for good and returns false. A suspended s ignores
 * lines until bug_signature_resume(). */
bool bug_signature_suspend(struct bug_signature *s);
/* The interrupting report ended: s reads its own continuation again, and an
 * "---[ end trace" before its own "Call Trace:" (the interrupting WARN's)
 * does not end it. */
void bug_signature_resume(struct bug_signature *s);
/* Settles title and id (the headline alone when no function was found). */
void bug_signature_end(struct bug_signature *s);

/* The function a stack-frame or "RIP: 0010:" line names, without its offset
 * and compiler suffixes (".isra.0", ".cold", ".constprop.0", ".part.0");
 * false when line is not a frame. *unreliable: a "? func+0x" frame. Exposed
 * for the unit tests. */
bool bug_signature_frame(const char *msg, char func[BUG_SIG_FUNC_MAX], bool *unreliable);
/* Whether func is generic (reporting, locking, scheduling, waiting
 * machinery) and never names a bug; kind widens the list for reports whose
 * stack is a sleeping task's (hung_task, atomic_sleep). */
bool bug_signature_skipped(const char *kind, const char *func);
