/* The service connection options; see connection.h. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/connection.h"
#include "util/parse.h"

const char cli_conn_help[] =
    "  --server URL           the service (default: $SCHEDLAB_SERVER)\n"
    "  --token T              bearer token (default: $SCHEDLAB_TOKEN)\n"
    "  --cacert FILE          trust this PEM CA file for an https:// server\n"
    "                         (default: $SCHEDLAB_CACERT, else the system's CAs)\n"
    "  --connect-timeout S    give up connecting after S seconds (default 10)\n"
    "  --stall-timeout S      fail a request when no byte moves for S seconds\n"
    "                         (default 60; the event stream allows at least 20)\n";

void cli_conn_defaults(struct cli_conn *c)
{
	*c = (struct cli_conn){
	    .server = getenv("SCHEDLAB_SERVER"),
	    .token = getenv("SCHEDLAB_TOKEN"),
	    .cacert = getenv("SCHEDLAB_CACERT"),
	    .connect_s = HTTPCLIENT_CONNECT_TIMEOUT_S,
	    .stall_s = HTTPCLIENT_STALL_TIMEOUT_S,
	};
}

int cli_parse_seconds(const char *prog, const char *flag, const char *arg, long min, long *ret)
{
	if (parse_int(arg, min, CLI_SECONDS_MAX, ret) < 0) {
		fprintf(stderr, "%s: %s '%s' is not a number of seconds in %ld..%d.\n", prog, flag,
			arg, min, CLI_SECONDS_MAX);
		return -EINVAL;
	}
	return 0;
}

int cli_conn_option(struct cli_conn *c, int opt, const char *arg, const char *prog)
{
	switch (opt) {
	case 's':
		c->server = arg;
		return 1;
	case 't':
		c->token = arg;
		return 1;
	case CLI_CONN_OPT_CACERT:
		c->cacert = arg;
		return 1;
	case CLI_CONN_OPT_CONNECT:
		return cli_parse_seconds(prog, "--connect-timeout", arg, 1, &c->connect_s) < 0
			   ? -EINVAL
			   : 1;
	case CLI_CONN_OPT_STALL:
		return cli_parse_seconds(prog, "--stall-timeout", arg, 1, &c->stall_s) < 0 ? -EINVAL
											   : 1;
	default:
		return 0;
	}
}

int cli_conn_open(const struct cli_conn *c, struct httpclient **ret, struct sl_error *err)
{
	*ret = NULL;
	if (!c->server || !c->server[0])
		return error_set(err, ERR_INVALID, EINVAL,
				 "No service given: use --server URL or set SCHEDLAB_SERVER.");
	int r = httpclient_new(c->server, c->token, ret, err);
	if (r < 0)
		return r;
	if ((r = httpclient_set_cacert(*ret, c->cacert, err)) < 0) {
		httpclient_free(*ret);
		*ret = NULL;
		return r;
	}
	httpclient_set_timeouts(*ret, c->connect_s, c->stall_s);
	return 0;
}
