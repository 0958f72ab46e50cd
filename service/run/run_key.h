/* A run's key: which variant, which repeat. Written "<variant>#<repeat>"
 * (e.g. "baseline#0") in result.order, in each run's "key", in the store's
 * runs table and in console log names; struct run_key is the typed form the
 * runner works with, and run_key_parse() the one way back from text. */
#pragma once

#include <stddef.h>

/* A variant name is at most 64 bytes by the job schema; this leaves room. */
#define RUN_KEY_VARIANT_MAX 128
/* Bytes of a formatted key, NUL included: variant, '#', an int. */
#define RUN_KEY_STRLEN (RUN_KEY_VARIANT_MAX + 1 + 10 + 1)

struct run_key {
	char variant[RUN_KEY_VARIANT_MAX + 1]; /* a key of spec.variants */
	int repeat;			       /* 0-based repeat (round) number */
};

/* Fills *ret from variant and repeat. Returns 0, or -EINVAL when variant is
 * empty or holds a '#', or repeat is negative, or -ENAMETOOLONG when variant
 * is longer than RUN_KEY_VARIANT_MAX; *ret is written only on success. */
int run_key_init(const char *variant, int repeat, struct run_key *ret);

/* Writes "<variant>#<repeat>" into buf (RUN_KEY_STRLEN bytes) and returns buf. */
const char *run_key_format(const struct run_key *key, char buf[static RUN_KEY_STRLEN]);

/* Parses text written by run_key_format(): a variant run_key_init() accepts,
 * one '#', and a repeat in plain decimal (no sign, no leading zeros, no
 * spaces, at most INT_MAX). Returns 0, or -EINVAL (-ENAMETOOLONG for a long
 * variant) for anything else; *ret is written only on success. */
int run_key_parse(const char *text, struct run_key *ret);
