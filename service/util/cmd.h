/* The one command runner: argv (never a shell string), a timeout, captured
 * output, an optional cancel check, and a dry-run mode that records command
 * lines so tests can compare them with golden text (after libvirt's
 * vircommand). Every fd it opens is O_CLOEXEC; the child _exit()s on failure. */
#pragma once

#include <stdbool.h>
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
	/* fds the command inherits: pass_fds[i] is open at 3 + i in it, not
	 * close-on-exec (e.g. bwrap's --seccomp 3). At most CMD_PASS_FDS_MAX. */
	const int *pass_fds;
	size_t n_pass_fds;
	/* non-NULL: a cgroup v2 directory the child moves itself into before
	 * exec; a failure to is a failure to start (nothing runs outside it). */
	const char *cgroup_dir;
};
#define CMD_PASS_FDS_MAX 16

/* Runs argv[0] (searched in PATH) with argv. On success returns 0 and, when
 * ret_exit is not NULL, the exit status (a signal death is 128+sig); a
 * non-zero exit is NOT an error here. ret_output (may be NULL) receives a
 * malloc'd NUL-terminated tail of the output, owned by the caller.
 * Errors: spawn failure (ERR_INTERNAL), timeout (ERR_TIMEOUT), cancel (ERR_CANCELLED). */
int cmd_run(char *const argv[], const struct cmd_opts *opts, int *ret_exit, char **ret_output,
	    struct sl_error *err);

/* Dry-run mode: while enabled, cmd_run() appends the shell-quoted command line
 * (with "cd DIR && " when cwd is set) plus '\n' to an internal buffer and
 * returns without running anything: exit status 0 and no output, or what the
 * hook (cmd_dry_run_set_hook) says. */
void cmd_dry_run_begin(void);
/* Ends dry-run mode and clears the hook; returns the recorded text (caller
 * frees), or NULL when memory ran out while recording (the text would
 * lack commands). */
char *cmd_dry_run_end(void);
/* True while a dry run records (for callers that memoise command output). */
bool cmd_dry_run_active(void);

/* Answers one dry-run command (after libvirt's virCommandSetDryRun callback):
 * returns the exit status it "had" and may set *ret_output to a malloc'd
 * text it "printed" (handed to on_line, log_fd and the captured tail as a
 * real run's output would be; freed by cmd_run). It may create files that
 * stand for the command's effect. Called with no lock held, from the thread
 * that called cmd_run(); it must not call cmd_run(). */
typedef int (*cmd_dry_run_hook)(void *userdata, char *const argv[], const char *cwd,
				char **ret_output);
/* Sets the hook of the dry run (NULL: every command exits 0, prints nothing). */
void cmd_dry_run_set_hook(cmd_dry_run_hook hook, void *userdata);
