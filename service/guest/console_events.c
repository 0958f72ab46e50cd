/* Kernel events on a guest console: see console_events.h. */
#include <string.h>

#include "guest/bug_signature.h"
#include "guest/console_events.h"

struct event {
	const char *kind;
	char line[CONSOLE_LINE_MAX + 1];
	char *excerpt; /* grows to at most (BEFORE + 1 + AFTER) lines */
	size_t excerpt_len;
	int after_left;
	/* A report's first event has a signature; a panic or Oops that follows
	 * it within CONSOLE_REPORT_LINES lines (or the hard-lockup panic after
	 * the hard-lockup report) is part of that report: part_of is the
	 * report's index, else -1. */
	struct bug_signature sig;
	int part_of;
	int after_held; /* excerpt lines left while suspended (see interrupted) */
};

struct console_events {
	char cur[CONSOLE_LINE_MAX + 1];
	size_t cur_len;
	char before[CONSOLE_EXCERPT_BEFORE][CONSOLE_LINE_MAX + 1]; /* ring of recent lines */
	int before_n, before_pos;
	struct event ev[CONSOLE_EVENTS_MAX];
	int n_kept, n_seen;
	int report;	   /* index of the last report's event, or -1 */
	int since_report;  /* lines since it began */
	bool report_trace; /* the report's "Call Trace:" was seen */
	/* A report another one was printed in the middle of (the lockdep report
	 * that printing an atomic-sleep report under the runqueue lock sets off,
	 * between its headline and its "in_atomic():" line): index, or -1. When
	 * the interrupting report's trace ends ("</TASK>"), it is the report
	 * again and reads its own continuation (bug_signature_suspend()). */
	int interrupted;
	bool restart, power_down, halt;
};

/* Markers in the order they are tried: a soft lockup is also a "BUG:" line,
 * so the specific ones come first. at_start: must begin the message. */
static const struct {
	const char *kind;
	const char *marker;
	bool at_start;
} markers[] = {
    {"panic", "Kernel panic - not syncing", true},
    {"soft_lockup", "BUG: soft lockup", false},
    {"hard_lockup", "Watchdog detected hard LOCKUP", false},
    {"hard_lockup", "Kernel panic - not syncing: Hard LOCKUP", false},
    {"hung_task", "INFO: task ", true},
    {"rcu_stall", "detected stalls on CPUs/tasks", false},
    {"rcu_stall", "self-detected stall on CPU", false},
    {"oops", "Oops: ", true},
    {"oops", "general protection fault", true},
    {"bug", "BUG: ", true},
    {"bug", "kernel BUG at ", true},
    {"warning", "WARNING: ", true},
};

/* The message after an optional "<N>" level and "[ 1.234567] " timestamp. */
static const char *message_of(const char *line)
{
	const char *s = line;
	if (s[0] == '<' && s[1] >= '0' && s[1] <= '9' && s[2] == '>')
		s += 3;
	if (*s == '[') {
		const char *e = strchr(s, ']');
		if (e && (size_t)(e - s) < 24 &&
		    strspn(s + 1, " 0123456789.") == (size_t)(e - s - 1))
			s = e + 1;
		while (*s == ' ')
			s++;
	}
	return s;
}

/* The message from the scanner's marker on ("watchdog: BUG: soft lockup"
 * -> "BUG: soft lockup ..."), for the signature's headline. */
static const char *msg_at_marker(const char *msg, const char *kind)
{
	for (size_t i = 0; i < ELEMENTSOF(markers); i++) {
		if (strcmp(markers[i].kind, kind) != 0 || markers[i].at_start)
			continue;
		const char *m = strstr(msg, markers[i].marker);
		if (m)
			return m;
	}
	return msg;
}

const char *console_line_kind(const char *line)
{
	const char *msg = message_of(line);
	for (size_t i = 0; i < ELEMENTSOF(markers); i++) {
		const char *m = markers[i].marker;
		if (markers[i].at_start ? strncmp(msg, m, strlen(m)) == 0
					: strstr(msg, m) != NULL) {
			/* "INFO: task x:1 blocked for more than 120 seconds." only. */
			if (strcmp(markers[i].kind, "hung_task") == 0 &&
			    !strstr(msg, "blocked for more than"))
				continue;
			return markers[i].kind;
		}
	}
	return NULL;
}

struct console_events *console_events_new(void)
{
	struct console_events *ce = calloc(1, sizeof(struct console_events));
	if (ce) {
		ce->report = -1;
		ce->interrupted = -1;
	}
	return ce;
}

void console_events_free(struct console_events *ce)
{
	if (!ce)
		return;
	for (int i = 0; i < ce->n_kept; i++)
		free(ce->ev[i].excerpt);
	free(ce);
}

static void excerpt_append(struct event *e, const char *line)
{
	size_t l = strlen(line);
	char *x = realloc(e->excerpt, e->excerpt_len + l + 2);
	if (!x)
		return; /* the excerpt stays shorter; never worth failing a run */
	e->excerpt = x;
	if (e->excerpt_len)
		e->excerpt[e->excerpt_len++] = '\n';
	memcpy(e->excerpt + e->excerpt_len, line, l + 1);
	e->excerpt_len += l;
}

/* A new report begins: the current one is suspended if the new one
 * interrupts it, every other one stops reading. */
static void stop_reports(struct console_events *ce)
{
	int r = ce->report;
	/* One at a time: a report interrupted before stops (a third report
	 * came before the one that interrupted it ended). */
	ce->interrupted = -1;
	if (r >= 0 && bug_signature_suspend(&ce->ev[r].sig)) {
		ce->interrupted = r;
		ce->ev[r].after_held = ce->ev[r].after_left;
		ce->ev[r].after_left = 0;
	}
	for (int i = 0; i < ce->n_kept; i++)
		if (i != ce->interrupted)
			ce->ev[i].sig.lines_left = 0;
	ce->report_trace = false;
}

/* The current report's trace ended: the report it interrupted is the report
 * again; its excerpt goes on after a line that says what was left out. */
static void resume_interrupted(struct console_events *ce)
{
	struct event *e = &ce->ev[ce->interrupted];
	ce->ev[ce->report].sig.lines_left = 0;
	bug_signature_resume(&e->sig);
	if (e->after_held > 0) {
		char note[128];
		snprintf(note, sizeof(note),
			 "schedlab: [kernel_events[%d], another report printed in the middle of "
			 "this one, left out]",
			 ce->report);
		excerpt_append(e, note);
		e->after_left = e->after_held - 1; /* the note is one of its lines */
	}
	e->after_held = 0;
	ce->report = ce->interrupted;
	ce->interrupted = -1;
	ce->since_report = 0;
	ce->report_trace = false;
}

static void handle_line(struct console_events *ce, const char *line)
{
	for (int i = 0; i < ce->n_kept; i++)
		if (ce->ev[i].after_left > 0) {
			excerpt_append(&ce->ev[i], line);
			ce->ev[i].after_left--;
		}

	const char *msg = message_of(line);
	if (strncmp(msg, "reboot: Restarting system", 25) == 0)
		ce->restart = true;
	else if (strncmp(msg, "reboot: Power down", 18) == 0)
		ce->power_down = true;
	else if (strncmp(msg, "reboot: System halted", 21) == 0)
		ce->halt = true;

	const char *kind = console_line_kind(line);
	/* Whether this event continues the current report (see struct event). */
	bool continues = false;
	if (kind && ce->report >= 0 && ce->since_report < CONSOLE_REPORT_LINES) {
		const struct event *r = &ce->ev[ce->report];
		/* The NMI watchdog's own panic is a hard_lockup line too. */
		continues = strcmp(kind, "panic") == 0 || strcmp(kind, "oops") == 0 ||
			    (strcmp(kind, "hard_lockup") == 0 && strcmp(r->kind, kind) == 0);
	}
	if (!kind || continues)
		for (int i = 0; i < ce->n_kept; i++)
			bug_signature_line(&ce->ev[i].sig, msg);
	if (!kind && ce->report >= 0) {
		const char *t = msg + strspn(msg, " \t");
		if (strncmp(t, "Call Trace:", 11) == 0)
			ce->report_trace = true;
		else if (ce->report_trace && ce->interrupted >= 0 && strncmp(t, "</TASK>", 7) == 0)
			resume_interrupted(ce);
	}
	ce->since_report++;
	if (kind) {
		ce->n_seen++;
		if (ce->n_kept < CONSOLE_EVENTS_MAX) {
			struct event *e = &ce->ev[ce->n_kept++];
			e->kind = kind;
			e->part_of = continues ? ce->report : -1;
			if (!continues) {
				/* A new report: the ones before it stop reading,
				 * or wait for it to end (stop_reports()). */
				stop_reports(ce);
				bug_signature_begin(&e->sig, kind, msg_at_marker(msg, kind));
				ce->report = ce->n_kept - 1;
				ce->since_report = 0;
			}
			snprintf(e->line, sizeof(e->line), "%s", line);
			int start = ce->before_n < CONSOLE_EXCERPT_BEFORE ? 0 : ce->before_pos;
			for (int k = 0; k < ce->before_n; k++)
				excerpt_append(e, ce->before[(start + k) % CONSOLE_EXCERPT_BEFORE]);
			excerpt_append(e, line);
			e->after_left = CONSOLE_EXCERPT_AFTER;
		}
	}

	snprintf(ce->before[ce->before_pos], CONSOLE_LINE_MAX + 1, "%s", line);
	ce->before_pos = (ce->before_pos + 1) % CONSOLE_EXCERPT_BEFORE;
	if (ce->before_n < CONSOLE_EXCERPT_BEFORE)
		ce->before_n++;
}

void console_events_begin_hang(struct console_events *ce, int silent_s)
{
	ce->n_seen++;
	if (ce->n_kept >= CONSOLE_EVENTS_MAX)
		return;
	for (int i = 0; i < ce->n_kept; i++)
		ce->ev[i].sig.lines_left = 0;
	ce->interrupted = -1;
	ce->report_trace = false;
	struct event *e = &ce->ev[ce->n_kept++];
	e->kind = "hang";
	e->part_of = -1;
	snprintf(e->line, sizeof(e->line),
		 "schedlab: no heartbeat and no console output for %d s; NMI sent for the "
		 "backtraces of all CPUs",
		 silent_s);
	excerpt_append(e, e->line);
	e->after_left = CONSOLE_HANG_AFTER;
	bug_signature_begin(&e->sig, "hang", e->line);
	ce->report = ce->n_kept - 1;
	ce->since_report = 0;
}

void console_events_feed(struct console_events *ce, const void *buf, size_t len)
{
	const char *p = buf;
	for (size_t i = 0; i < len; i++) {
		char c = p[i];
		if (c == '\n') {
			ce->cur[ce->cur_len] = '\0';
			handle_line(ce, ce->cur);
			ce->cur_len = 0;
		} else if ((unsigned char)c < 0x20 && c != '\t') {
			continue; /* '\r' from the tty, escape sequences' ESC */
		} else if (ce->cur_len < CONSOLE_LINE_MAX) {
			/* Guest bytes end up in JSON: keep it ASCII, hence valid UTF-8. */
			ce->cur[ce->cur_len++] = (unsigned char)c < 0x7f ? c : '?';
		}
	}
}

void console_events_finish(struct console_events *ce)
{
	if (ce->cur_len) {
		ce->cur[ce->cur_len] = '\0';
		handle_line(ce, ce->cur);
		ce->cur_len = 0;
	}
}

/* {"id","kind","title","location"?} of a report, settled on a copy: the
 * scanner may still be reading its lines. */
static json_object *signature_to_json(const struct bug_signature *sig)
{
	struct bug_signature s = *sig;
	bug_signature_end(&s);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(s.id));
	json_object_object_add(o, "kind", json_object_new_string(s.kind));
	json_object_object_add(o, "title", json_object_new_string(s.title));
	if (s.location[0])
		json_object_object_add(o, "location", json_object_new_string(s.location));
	return o;
}

json_object *console_events_to_json(const struct console_events *ce)
{
	json_object *a = json_object_new_array();
	for (int i = 0; i < ce->n_kept; i++) {
		const struct event *e = &ce->ev[i];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "kind", json_object_new_string(e->kind));
		json_object_object_add(o, "line", json_object_new_string(e->line));
		json_object_object_add(o, "excerpt",
				       json_object_new_string(e->excerpt ? e->excerpt : e->line));
		if (e->part_of >= 0)
			json_object_object_add(o, "part_of", json_object_new_int(e->part_of));
		else
			json_object_object_add(o, "signature", signature_to_json(&e->sig));
		json_object_array_add(a, o);
	}
	return a;
}

bool console_events_has(const struct console_events *ce, const char *kind)
{
	for (int i = 0; i < ce->n_kept; i++)
		if (strcmp(ce->ev[i].kind, kind) == 0)
			return true;
	return false;
}

int console_events_count(const struct console_events *ce)
{
	return ce->n_seen;
}

bool console_events_saw_restart(const struct console_events *ce)
{
	return ce->restart;
}

bool console_events_saw_power_down(const struct console_events *ce)
{
	return ce->power_down;
}

bool console_events_saw_halt(const struct console_events *ce)
{
	return ce->halt;
}
