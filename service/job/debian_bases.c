/* The Debian sources with a built-in base; see debian_bases.h. */
#include <stddef.h>
#include <string.h>

#include "job/debian_bases.h"

static const struct {
	const char *source, *builtin;
} bases[] = {
    {"debian:linux-source-6.1", "linux-6.1"},
    {"debian:linux-source-6.12", "linux-6.12"},
};

const char *debian_base_builtin(const char *source)
{
	for (size_t i = 0; source && i < sizeof(bases) / sizeof(bases[0]); i++)
		if (strcmp(source, bases[i].source) == 0)
			return bases[i].builtin;
	return NULL;
}

const char *debian_base_default_config(const char *source)
{
	const char *b = debian_base_builtin(source);
	return b ? b : bases[0].builtin;
}

const char *debian_base_list(void)
{
	return "'debian:linux-source-6.1' or 'debian:linux-source-6.12'";
}
