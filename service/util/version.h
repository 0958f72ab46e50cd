/* The version every result and page carries, and the exit codes that the CLI,
 * the summary and `submit --gate` share. */
#pragma once

#define SCHEDLAB_VERSION "0.1.0"

enum {
	EXIT_PASS = 0,
	EXIT_FAIL = 1,
	EXIT_ERROR = 2,
	EXIT_INCONCLUSIVE = 3,
};
