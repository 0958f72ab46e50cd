/* A scripted guest for unit tests of the runner (service/run/runner.c):
 * installed with runner_set_guest_hook() in place of guest_run(), it boots
 * nothing and returns the outcome the test scripted for each run, with the
 * frames the real agent would send, and records the runs it saw in order.
 * Its kernels hook (fake_guest_kernel) hands the runner an artifact whose
 * bzImage is a placeholder file, since the fake only passes its path on. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "run/run_key.h"
#include "util/error.h"

struct guest_host;
struct guest_spec;
struct guest_outcome;
struct kbuild_artifact;

enum fake_guest_kind {
	FAKE_GUEST_OK,	    /* the agent's workload and summary frames, powered off */
	FAKE_GUEST_HUNG,    /* the deadline passed: no summary */
	FAKE_GUEST_CRASHED, /* QEMU died without a panic line */
	FAKE_GUEST_ERROR,   /* the transport lost the summary frame */
	FAKE_GUEST_NOISY,   /* ok, but the host starved the vCPUs (host_interference) */
};

#define FAKE_GUEST_MAX_VARIANTS 8
#define FAKE_GUEST_MAX_STEPS	64
#define FAKE_GUEST_MAX_SEEN	256

struct fake_guest {
	pthread_mutex_t lock;
	/* each variant's hackbench "Time:" seconds for an ok run; unset: 1.0 */
	struct {
		char name[64];
		double seconds;
		double spread_pct; /* ok runs range over seconds +- this % */
		int runs;	   /* ok runs so far: the jitter's phase */
	} variants[FAKE_GUEST_MAX_VARIANTS];
	size_t n_variants;
	/* one-shot outcomes, each for the first run of its key ("b#0"), or with
	 * an empty key for whichever run comes next, consumed in order */
	struct {
		char key[RUN_KEY_STRLEN];
		enum fake_guest_kind kind;
		bool used;
	} steps[FAKE_GUEST_MAX_STEPS];
	size_t n_steps;
	/* every run booted, in order */
	char seen[FAKE_GUEST_MAX_SEEN][RUN_KEY_STRLEN];
	size_t n_seen;
	char tmpdir[64]; /* the placeholder kernel's directory */
};

/* Sets fg up (a private temporary directory) and installs it as the
 * runner's guest and kernel hooks; fake_guest_end() removes both. */
void fake_guest_begin(struct fake_guest *fg);
void fake_guest_end(struct fake_guest *fg);
/* Ok runs of variant report seconds, spread evenly over +-spread_pct % in
 * a cycle of five (so a variant's runs are not all equal: a small spread
 * lets the statistics decide, a wide one leaves them undecided). Unset: 1.0
 * and 2 %. */
void fake_guest_variant(struct fake_guest *fg, const char *variant, double seconds,
			double spread_pct);
/* The next run of key (NULL: the next run at all) ends as kind. */
void fake_guest_script(struct fake_guest *fg, const char *key, enum fake_guest_kind kind);
/* The runs seen so far as "a#0 b#0 a#1 ..." (static buffer). */
const char *fake_guest_seen(struct fake_guest *fg);

/* The hooks themselves (runner-internal.h), for tests that install them. */
int fake_guest_run(void *userdata, const struct run_key *k, struct guest_host *h,
		   const struct guest_spec *spec, struct guest_outcome **ret, struct sl_error *err);
int fake_guest_kernel(void *userdata, const char *name, struct kbuild_artifact **ret,
		      struct sl_error *err);
