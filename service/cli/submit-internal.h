/* What the forms of `schedlab submit` share (submit_cmd.c, submit_follow.c):
 * following a job to its end, fetching and writing its result, cancelling
 * it, and the SIGINT/SIGTERM flag that stops a wait. Not for other
 * commands. */
#pragma once

#include <signal.h>
#include <stdbool.h>

#include "cli/httpclient.h"
#include "util/json.h"
#include "util/json_get.h"

/* Seconds the client keeps trying to reach a service that stopped answering
 * while it follows a job (--retry-for): a restarting service resumes the job,
 * a dead one must not hold a CI job for ever. */
#define SUBMIT_RETRY_FOR_S 120

/* Set by the SIGINT/SIGTERM handler that submit_signals_install() sets up. */
extern volatile sig_atomic_t submit_interrupted;

/* Catches SIGINT and SIGTERM once: the first sets submit_interrupted (the
 * client's transfers stop), the handler then resets itself so that a second
 * signal ends the process at once. */
void submit_signals_install(void);

/* Prints "schedlab submit: WHAT: <the server's error message> [at PATH] (HTTP N)",
 * or the status when the body is not an error document. */
void submit_print_http_error(const char *what, const struct httpclient_response *r);

/* Follows job id (progress on stderr from its event stream) until its status
 * is final; *ret_job is a new reference to the job's status document. While
 * the service does not answer, retries every 2 s for up to retry_for_s
 * seconds since the last answer. ERR_CANCELLED when submit_interrupted was
 * set; ERR_INFRA when the service is gone or answers an error. */
int submit_follow(struct httpclient *c, const char *id, long retry_for_s, json_object **ret_job,
		  struct sl_error *err);

/* Where a finished job's outputs go; any may be NULL. */
struct submit_outputs {
	const char *result; /* -o: the result JSON */
	const char *junit;  /* --junit */
	const char *report; /* --report: the HTML report */
};

/* GETs the result of job id, writes the outputs, prints the summary table
 * on stderr, and returns in *ret_result a new reference to the result and
 * in *ret_exit the exit status its verdict gives (summary_exit_code). A
 * job that is not done yet is ERR_CONFLICT, naming its status; a result
 * the typed model cannot read is ERR_INVALID naming the field. */
int submit_fetch_result(struct httpclient *c, const char *id, const struct submit_outputs *out,
			json_object **ret_result, int *ret_exit, struct sl_error *err);

/* DELETEs job id (not interruptible: it clears the client's interrupt flag).
 * Returns 0 when the job is cancelled (HTTP 200) or stopping (202), with
 * *ret_requested true for 202; ERR_CONFLICT when it already ended. */
int submit_cancel(struct httpclient *c, const char *id, bool *ret_requested, struct sl_error *err);

/* Prints why a job that ended without a result ended (failed: its error;
 * cancelled) on stderr. */
void submit_print_ending(const char *id, json_object *job);
