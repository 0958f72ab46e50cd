/* The outcome of a guest run (guest.h): filled from the finished run's
 * state, freed, and shown as JSON. */
#include <string.h>

#include "guest/console_events.h"
#include "guest/guest-internal.h"
#include "guest/guest.h"

void guest_outcome_free(struct guest_outcome *o)
{
	if (!o)
		return;
	free(o->reason);
	json_object_put(o->events);
	free(o->console_tail);
	json_object_put(o->frames);
	json_object_put(o->interference);
	json_object_put(o->vcpu_pin_applied);
	free(o);
}

char *guest_tail_lines(const char *text, int max_lines)
{
	if (!text)
		return strdup("");
	size_t n = strlen(text);
	size_t i = n;
	int lines = 0;
	/* A trailing newline does not start another line. */
	if (i > 0 && text[i - 1] == '\n')
		i--;
	while (i > 0) {
		if (text[i - 1] == '\n' && ++lines >= max_lines)
			break;
		i--;
	}
	return strdup(text + i);
}

json_object *guest_outcome_to_json(const struct guest_outcome *o)
{
	json_object *j = json_object_new_object();
	json_object_object_add(j, "status", json_object_new_string(o->status));
	json_object_object_add(j, "reason", o->reason ? json_object_new_string(o->reason) : NULL);
	json_object_object_add(j, "domain", json_object_new_string(o->domain));
	json_object_object_add(j, "accelerator", json_object_new_string(o->accel));
	json_object_object_add(j, "create_seconds", json_object_new_double(o->create_s));
	json_object_object_add(j, "boot_seconds",
			       o->boot_s >= 0 ? json_object_new_double(o->boot_s) : NULL);
	json_object_object_add(j, "agent_start_seconds",
			       o->agent_start_s >= 0 ? json_object_new_double(o->agent_start_s)
						     : NULL);
	json_object_object_add(j, "total_seconds", json_object_new_double(o->total_s));
	json_object_object_add(j, "kernel_events", json_object_get(o->events));
	json_object_object_add(j, "frames", json_object_get(o->frames));
	json_object_object_add(j, "host_interference", json_object_get(o->interference));
	char *ex = guest_tail_lines(o->console_tail, 60);
	json_object_object_add(j, "console_excerpt", json_object_new_string(ex ? ex : ""));
	free(ex);
	return j;
}

/* Fills the outcome from the finished run. Called under r->lock. */
void guest_outcome_fill(struct guest_state *r, struct guest_outcome *o, bool hung, int deadline_s,
			bool probe, int silent_s)
{
	const char *perr = NULL;
	int nerr;

	frame_parser_finish(r->fp);
	guest_state_pop_frames(r);
	console_events_finish(r->ce);
	nerr = frame_parser_errors(r->fp, &perr);
	r->closed = true;

	o->events = console_events_to_json(r->ce);
	o->frames = json_object_get(r->frames);
	o->console_tail = malloc(r->tail_len + 1);
	if (o->console_tail) {
		size_t start =
		    (r->tail_pos + GUEST_CONSOLE_TAIL_MAX - r->tail_len) % GUEST_CONSOLE_TAIL_MAX;
		size_t k = 0;
		for (size_t i = 0; i < r->tail_len; i++) {
			unsigned char c =
			    (unsigned char)r->tail[(start + i) % GUEST_CONSOLE_TAIL_MAX];
			if (c == '\r' || c == 0)
				continue;
			/* Untrusted bytes go into JSON: ASCII only. */
			o->console_tail[k++] =
			    (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' ? (char)c : '?';
		}
		o->console_tail[k] = '\0';
	}
	for (size_t i = 0; i < json_object_array_length(r->frames); i++) {
		json_object *f = json_object_array_get_idx(r->frames, i);
		json_object *kind = json_object_object_get(f, "kind");
		if (strcmp(json_object_get_string(kind), "summary") == 0)
			o->summary = json_object_object_get(f, "payload");
	}

	const char *status = "error";
	char *reason = NULL;
	const char *panic_line = NULL;
	if (console_events_has(r->ce, "panic")) {
		json_object *ev = o->events;
		for (size_t i = 0; i < json_object_array_length(ev); i++) {
			json_object *e = json_object_array_get_idx(ev, i);
			if (strcmp(json_object_get_string(json_object_object_get(e, "kind")),
				   "panic") == 0) {
				panic_line =
				    json_object_get_string(json_object_object_get(e, "line"));
				break;
			}
		}
	}

	if (probe) {
		status = r->saw_linux || r->hello ? "ok" : hung ? "hung" : "error";
		if (strcmp(status, "ok") != 0 &&
		    asprintf(&reason, "The probe saw no kernel output within %d s.", deadline_s) <
			0)
			reason = NULL;
	} else if (silent_s > 0) {
		/* The NMI's backtraces end in a panic ("NMI: Not continuing"):
		 * the kernel stopped first, so this is a hang. */
		status = "hung";
		if (asprintf(&reason,
			     "The guest sent no heartbeat and no console output for %d s; the "
			     "host asked its kernel for backtraces of all CPUs (an NMI) and "
			     "destroyed it.",
			     silent_s) < 0)
			reason = NULL;
	} else if (panic_line) {
		status = "panic";
		if (asprintf(&reason, "The guest kernel panicked: %s", panic_line) < 0)
			reason = NULL;
	} else if (hung) {
		status = "hung";
		if (asprintf(&reason,
			     "The guest did not finish within its deadline of %d s and was "
			     "destroyed.",
			     deadline_s) < 0)
			reason = NULL;
	} else if (nerr > 0) {
		if (asprintf(&reason, "The results port had %d unreadable frame(s): %s", nerr,
			     perr ? perr : "no detail") < 0)
			reason = NULL;
	} else if (r->payload_errors > 0) {
		reason = strdup(r->payload_error);
	} else if (r->crashed_event || console_events_saw_restart(r->ce)) {
		status = "crashed";
		reason =
		    strdup(r->crashed_event ? "The guest crashed without a kernel panic line."
					    : "The guest rebooted without a kernel panic line.");
	} else if (r->summary) {
		status = "ok";
	} else if (r->dropped_frames > 0) {
		reason = strdup("The guest sent more frames than the limit before its summary.");
	} else {
		if (asprintf(&reason,
			     "The guest stopped without sending a summary frame (%d frame(s) "
			     "received%s).",
			     r->n_frames, r->hello ? ", the agent had started" : ", no hello") < 0)
			reason = NULL;
	}
	snprintf(o->status, sizeof(o->status), "%s", status);
	o->reason = reason;
}
