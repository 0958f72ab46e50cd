/* How a command reaches a schedlab service: the options `schedlab submit`
 * and `schedlab nightly` share (--server, --token, --cacert,
 * --connect-timeout, --stall-timeout, with their environment defaults), so
 * both parse, document and apply them the same way. */
#pragma once

#include "cli/httpclient.h"
#include "util/error.h"

/* The largest --connect-timeout, --stall-timeout (and --retry-for). */
#define CLI_SECONDS_MAX 86400

struct cli_conn {
	const char *server, *token, *cacert;
	long connect_s, stall_s;
};

/* getopt_long codes of the long-only options (above any short option). */
enum {
	CLI_CONN_OPT_CACERT = 0x1000,
	CLI_CONN_OPT_CONNECT,
	CLI_CONN_OPT_STALL,
};

/* The option table's rows, for a struct option array. */
#define CLI_CONN_OPTIONS                                                                           \
	{"server", required_argument, NULL, 's'}, {"token", required_argument, NULL, 't'},         \
	    {"cacert", required_argument, NULL, CLI_CONN_OPT_CACERT},                              \
	    {"connect-timeout", required_argument, NULL, CLI_CONN_OPT_CONNECT},                    \
	{                                                                                          \
		"stall-timeout", required_argument, NULL, CLI_CONN_OPT_STALL                       \
	}

/* The --help lines of those options. */
extern const char cli_conn_help[];

/* $SCHEDLAB_SERVER, $SCHEDLAB_TOKEN, $SCHEDLAB_CACERT and the default
 * timeouts. */
void cli_conn_defaults(struct cli_conn *c);

/* Takes getopt's opt when it is a connection option: 1 when taken, 0 when it
 * is not one, -EINVAL (a message on stderr, prefixed with prog) when its
 * value is bad. */
int cli_conn_option(struct cli_conn *c, int opt, const char *arg, const char *prog);

/* arg as whole seconds in min..CLI_SECONDS_MAX, or -EINVAL with a message on
 * stderr naming flag (prefixed with prog). */
int cli_parse_seconds(const char *prog, const char *flag, const char *arg, long min, long *ret);

/* A client for c: ERR_INVALID when no server is given, the CA file's error,
 * else 0 with the timeouts set. */
int cli_conn_open(const struct cli_conn *c, struct httpclient **ret, struct sl_error *err);
