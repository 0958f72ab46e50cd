/* libFuzzer target: the console event scanner (service/guest/console_events.c) on
 * arbitrary guest console bytes, fed in chunks whose size the first byte
 * picks. Checks the bounds its header promises: at most CONSOLE_EVENTS_MAX
 * events kept, each with a line of at most CONSOLE_LINE_MAX bytes that
 * console_line_kind() classifies as the event's kind, and an excerpt no
 * longer than the lines around it can make, and a bounded signature per
 * report. */
#include <assert.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "guest/bug_signature.h"
#include "guest/console_events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t chunk = (size_t)data[0] % 128 + 1;
	data++, size--;
	struct console_events *ce = console_events_new();
	if (!ce)
		return 0;
	/* The top bit of the first byte: the host found the guest silent and
	 * reads what follows as a hang's backtraces (guest_run.c). */
	bool hang = data[-1] & 0x80;
	if (hang)
		console_events_begin_hang(ce, 30);
	for (size_t off = 0; off < size; off += chunk)
		console_events_feed(ce, data + off, size - off < chunk ? size - off : chunk);
	console_events_finish(ce);

	json_object *arr = console_events_to_json(ce);
	assert(arr && json_object_is_type(arr, json_type_array));
	size_t n = json_object_array_length(arr);
	assert(n <= CONSOLE_EVENTS_MAX);
	assert((int)n <= console_events_count(ce));
	const size_t excerpt_max =
	    (CONSOLE_EXCERPT_BEFORE + 1 + CONSOLE_EXCERPT_AFTER) * (CONSOLE_LINE_MAX + 1);
	for (size_t i = 0; i < n; i++) {
		json_object *ev = json_object_array_get_idx(arr, i), *v;
		assert(json_object_object_get_ex(ev, "kind", &v));
		const char *kind = json_object_get_string(v);
		assert(console_events_has(ce, kind));
		assert(json_object_object_get_ex(ev, "line", &v));
		assert((size_t)json_object_get_string_len(v) <= CONSOLE_LINE_MAX);
		const char *line_kind = console_line_kind(json_object_get_string(v));
		assert((line_kind && strcmp(line_kind, kind) == 0) ||
		       (hang && i == 0 && strcmp(kind, "hang") == 0));
		assert(json_object_object_get_ex(ev, "excerpt", &v));
		assert((size_t)json_object_get_string_len(v) <= excerpt_max);
		/* Each report has a bounded signature, or points back at the
		 * report it is part of. */
		json_object *sig = NULL, *part = NULL;
		bool has_sig = json_object_object_get_ex(ev, "signature", &sig);
		bool has_part = json_object_object_get_ex(ev, "part_of", &part);
		assert(has_sig != has_part);
		if (has_part) {
			assert(json_object_get_int(part) >= 0 &&
			       (size_t)json_object_get_int(part) < i);
			continue;
		}
		assert(json_object_object_get_ex(sig, "id", &v));
		assert(json_object_get_string_len(v) == BUG_SIG_ID_LEN - 1);
		assert(json_object_object_get_ex(sig, "kind", &v));
		assert(json_object_object_get_ex(sig, "title", &v));
		assert(json_object_get_string_len(v) > 0 &&
		       (size_t)json_object_get_string_len(v) < BUG_SIG_TITLE_MAX);
		for (const char *c = json_object_get_string(v); *c; c++)
			assert((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f);
	}
	json_object_put(arr);
	console_events_free(ce);
	return 0;
}
