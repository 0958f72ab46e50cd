/* The search of a bisection (bisect_search.h). */
#include "run/bisect_search.h"

void bisect_search(size_t n, bisect_measure_fn measure, void *userdata, struct bisect_answer *ret)
{
	/* the base (0) passes by definition; the whole series (n) failed */
	size_t good = 0, bad = n;
	*ret = (struct bisect_answer){.certain = true};
	while (bad - good > 1) {
		size_t mid = good + (bad - good) / 2;
		enum bisect_verdict v = measure(userdata, mid);
		ret->steps++;
		if (v == BISECT_BAD) {
			bad = mid;
		} else if (v == BISECT_GOOD) {
			good = mid;
		} else if (v == BISECT_INCONCLUSIVE) {
			/* not shown to fail after every repeat: counted good, unsure */
			ret->certain = false;
			good = mid;
		} else {
			ret->error = true;
			ret->certain = false;
			break;
		}
	}
	ret->first_bad = bad;
}
