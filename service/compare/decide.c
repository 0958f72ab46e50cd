/* The rule (docs/statistics.md section 3). With alpha the level a look must
 * reach, T the practical threshold, p the two-sided Mann-Whitney p, est the
 * Hodges-Lehmann shift (the median of the pairwise differences candidate -
 * baseline) and [lo, hi] its distribution-free interval at 1 - 2 * alpha:
 *
 *  - a change: p <= alpha and est beyond T on one side (-> regressed on the
 *    worse side, improved on the better, changed when the metric has no
 *    better direction). p <= alpha bounds the false changes at alpha; the
 *    threshold only removes changes too small to matter;
 *  - unchanged: the whole interval within [-T, +T]. That is two one-sided
 *    tests at alpha each, so "the same" is shown at the error rate alpha,
 *    like "different"; at n too small for a bounded interval it never is;
 *  - otherwise undecided, with the reason: too few values, the interval
 *    crosses the threshold, or p above alpha (and at n where even complete
 *    separation cannot reach alpha, that).
 *
 * A gate asks only "worse by more than T?": it fails on regressed, passes
 * when the interval's worse end is within T (non-inferiority at alpha; an
 * improved passes too) and is inconclusive otherwise. A gated comparison
 * that passed without equivalence is "undecided" with the reason saying the
 * gate passed; one that neither failed nor passed is "inconclusive", the
 * word gates always used, so older readers of results keep working. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "compare/decide.h"

static void say(struct decision *out, const char *verdict, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(struct decision *out, const char *verdict, const char *fmt, ...)
{
	va_list ap;
	out->verdict = verdict;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
}

/* +1 when a positive change is worse (better = lower), -1 when it is
 * better, 0 when the metric has no direction. */
static int worse_sign(const char *better)
{
	return strcmp(better, "lower") == 0 ? 1 : strcmp(better, "higher") == 0 ? -1 : 0;
}

/* The undecided reason when neither a change nor equivalence was shown. */
static void why_undecided(const struct decision_input *in, struct decision *out,
			  const char *verdict)
{
	const struct stats_shift *s = &in->shift;
	bool beyond = fabs(s->estimate) > in->thr;
	bool significant = isfinite(in->p) && in->p <= in->alpha;
	if (beyond && !significant && in->min_p > in->alpha)
		say(out, verdict, "%zu v %zu runs cannot reach p <= %.3g (smallest p %.2g)", in->nb,
		    in->na, in->alpha, in->min_p);
	else if (beyond && !significant)
		say(out, verdict, "p %.3g above alpha %.3g", in->p, in->alpha);
	else if (!s->bounded)
		say(out, verdict, "%zu v %zu runs give no bounded %.3g %% interval", in->nb, in->na,
		    100 * s->level);
	else
		say(out, verdict, "interval crosses ±%.6g", in->thr);
}

void compare_decide(const struct decision_input *in, struct decision *out)
{
	out->reason[0] = '\0';
	if (in->na < 2 || in->nb < 2) {
		say(out, in->gated ? "inconclusive" : "undecided", "too few values (%zu v %zu)",
		    in->nb, in->na);
		return;
	}
	const struct stats_shift *s = &in->shift;
	int sign = worse_sign(in->better);
	double est = s->estimate, thr = in->thr;
	if (isfinite(in->p) && in->p <= in->alpha && fabs(est) > thr) {
		int dir = est > 0 ? 1 : -1;
		out->verdict = sign == 0 ? "changed" : dir == sign ? "regressed" : "improved";
		return;
	}
	if (s->bounded && s->lo >= -thr && s->hi <= thr) {
		out->verdict = "unchanged";
		return;
	}
	if (in->gated) {
		/* The worse end: hi for lower-is-better, -lo for higher, the
		 * farther of both for a metric without a direction. */
		double worse = sign > 0 ? s->hi : sign < 0 ? -s->lo : fmax(s->hi, -s->lo);
		if (s->bounded && worse <= thr) {
			say(out, "undecided",
			    "gate passes: no regression beyond %.6g, interval "
			    "crosses the better side's threshold",
			    thr);
			return;
		}
		why_undecided(in, out, "inconclusive");
		return;
	}
	why_undecided(in, out, "undecided");
}
