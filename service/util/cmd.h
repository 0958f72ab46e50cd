/* The one command runner: argv (never a shell string), a timeout, captured
 * output, an optional cancel check, and a dry-run mode that records command
 * lines so tests can compare them with golden text (after libvirt's
 * vircommand). Every fd it opens is O_CLOEXEC; the child _exit()s on failure. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "util/error.h"

struct cmd_opts {
	const char *cwd;	/* NULL: inherit */
	char *const *env_extra; /* NULL-terminated "K=V" added to the environment, or NULL */
	int timeout_s; /* <= 0: none; on expiry SIGTERM the process group, then SIGKILL after 5 s */
	int log_fd;    /* >= 0: stdout+stderr are also appended here */
	size_t
	    capture_max; /* bytes of combined stdout+stderr kept in *ret_output (tail); 0: none */
	/* Called with each complete output line (without '\n'), e.g. for progress; may be NULL. */
	void (*on_line)(void *userdata, const char *line);
	void *userdata;
	/* Polled about every 200 ms; nonzero kills the command (ERR_CANCELLED). May be NULL. */
	int (*cancelled)(void *userdata);
};

/* Runs argv[0] (searched in PATH) with argv. On success returns 0 and, when
 * ret_exit is not NULL, the exit status (a signal death is 128+sig); a
 * non-zero exit is NOT an error here. ret_output (may be NULL) receives a
 * malloc'd NUL-terminated tail of the output, owned by the caller.
 * Errors: spawn failure (ERR_INTERNAL), timeout (ERR_TIMEOUT), cancel (ERR_CANCELLED). */
int cmd_run(char *const argv[], const struct cmd_opts *opts, int *ret_exit, char **ret_output,
	    struct sl_error *err);

/* Dry-run mode: while enabled, cmd_run() appends the shell-quoted command line
 * (with "cd DIR && " when cwd is set) plus '\n' to an internal buffer and
 * returns exit status 0 without running anything. */
void cmd_dry_run_begin(void);
/* Ends dry-run mode; returns the recorded text (caller frees). */
char *cmd_dry_run_end(void);
