/* See redact.h. */
#include <stdbool.h>
#include <string.h>

#include "util/redact.h"

static bool path_char(char c)
{
	return c && !strchr(" \t\n'\"`()<>,;", c);
}

void redact_host_paths(const char *in, char *out, size_t out_size)
{
	size_t o = 0;
	if (!out_size)
		return;
	for (size_t i = 0; in[i] && o + 1 < out_size;) {
		bool start = in[i] == '/' && (i == 0 || strchr(" '\"(=:,`", in[i - 1]));
		size_t end = i, last = i;
		if (start) {
			while (path_char(in[end])) {
				if (in[end] == '/')
					last = end;
				end++;
			}
			/* A trailing '.' ends the sentence, not the path. */
			while (end > i + 1 && in[end - 1] == '.')
				end--;
		}
		if (!start || last == i) {
			out[o++] = in[i++];
			continue;
		}
		const char *tag = "<host>";
		for (const char *t = tag; *t && o + 1 < out_size; t++)
			out[o++] = *t;
		for (size_t k = last; k < end && o + 1 < out_size; k++)
			out[o++] = in[k];
		i = end;
	}
	out[o] = '\0';
}
