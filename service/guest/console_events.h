/* Kernel events on a guest's console: a streaming line scanner that turns the
 * lines the kernel prints for a panic, BUG, WARNING, Oops, soft or hard
 * lockup, hung task and RCU stall into events {kind, line, excerpt}. The
 * console is untrusted guest output: lines, excerpts and the number of
 * events kept are all bounded. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

#define CONSOLE_LINE_MAX       512 /* bytes kept of one line; the rest is dropped */
#define CONSOLE_EVENTS_MAX     32  /* events kept; later ones are only counted */
#define CONSOLE_EXCERPT_BEFORE 4   /* lines before the event line in its excerpt */
#define CONSOLE_EXCERPT_AFTER  24  /* lines after it */
#define CONSOLE_REPORT_LINES   100 /* a panic/Oops this close to a report is part of it */
#define CONSOLE_HANG_AFTER     160 /* lines of a hang's backtraces kept in its excerpt */

/* The kind of event line is, or NULL: "panic", "oops", "bug", "warning",
 * "soft_lockup", "hard_lockup", "hung_task", "rcu_stall". line has no '\n';
 * a leading printk timestamp "[    1.234567] " is allowed. */
const char *console_line_kind(const char *line);

struct console_events;

/* NULL on OOM. */
struct console_events *console_events_new(void);
void console_events_free(struct console_events *ce);

/* Feeds raw console bytes in any chunking ('\r' is dropped, '\n' ends a line). */
void console_events_feed(struct console_events *ce, const void *buf, size_t len);
/* The host found the guest silent for silent_s seconds and is asking it for
 * backtraces (guest_run.c): starts an event of kind "hang" whose excerpt
 * keeps the next CONSOLE_HANG_AFTER lines and whose signature ("hang in F",
 * kind "hang") names the first meaningful function they show. */
void console_events_begin_hang(struct console_events *ce, int silent_s);
/* Ends the stream: a last line without '\n' is scanned too. */
void console_events_finish(struct console_events *ce);

/* A new reference to a JSON array of {"kind","line","excerpt"} (excerpt: the
 * lines around the event joined with '\n'), in the order seen. An event that
 * begins a report also has "signature": {"id","kind","title","location"?}
 * (bug_signature.h); one that continues the report before it (the panic
 * after an Oops, the Oops after "BUG: kernel NULL pointer dereference") has
 * "part_of": that event's index instead. A report printed in the middle of
 * another (after its headline, before its "Call Trace:") does not end it:
 * the other reads its own lines again once this one's trace has ended
 * (docs/kernel-bugs.md, "One report, one signature"). */
json_object *console_events_to_json(const struct console_events *ce);
/* Whether an event of kind was seen; the number of events seen (kept or not). */
bool console_events_has(const struct console_events *ce, const char *kind);
int console_events_count(const struct console_events *ce);
/* Whether the kernel said it is restarting ("reboot: Restarting system") or
 * powering off ("reboot: Power down"). */
bool console_events_saw_restart(const struct console_events *ce);
bool console_events_saw_power_down(const struct console_events *ce);
/* Whether the kernel halted ("reboot: System halted"): a power-off request
 * without a working power-off driver ends here, and the guest idles forever. */
bool console_events_saw_halt(const struct console_events *ce);
