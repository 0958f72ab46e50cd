/* Building the kernels of many prefixes at once (see prefix_prebuild.h). */
#include <pthread.h>
#include <stdlib.h>

#include "run/prefix_prebuild.h"
#include "util/macro.h"
#include "util/time.h"

struct prebuild {
	const struct series_input *in;
	const char *tag;
	json_object **jobs; /* per prefix, built here in the calling thread */
	char **dirs;
	size_t n, next; /* job i is prefix i + 1 */
	int *built;
	size_t total;
	pthread_mutex_t lock; /* next and the lines said */
};

static void *builder(void *arg)
{
	struct prebuild *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		size_t i = p->next++;
		if (i < p->n && p->jobs[i])
			prefix_say(p->in, "[%s] building the kernel of the first %zu of %zu",
				   p->tag, i + 1, p->total);
		pthread_mutex_unlock(&p->lock);
		if (i >= p->n)
			return NULL;
		if (!p->jobs[i]) {
			p->built[i] = -1;
			continue;
		}
		double t0 = time_monotonic_s();
		int b = 0;
		if (p->in->step_build(p->in->step_userdata, p->jobs[i], p->dirs[i], &b) < 0)
			b = -1;
		p->built[i] = b < 0 ? -1 : b > 0;
		pthread_mutex_lock(&p->lock);
		prefix_say(p->in, "[%s] the kernel of the first %zu of %zu: %s (%.1f s)", p->tag,
			   i + 1, p->total,
			   b < 0    ? "not built; its step will say why"
			   : b == 0 ? "in the cache"
				    : "built",
			   time_monotonic_s() - t0);
		pthread_mutex_unlock(&p->lock);
	}
}

int prefix_prebuild(const struct series_input *in, json_object *patches, size_t n, const char *tag,
		    const char *dir, int *built)
{
	for (size_t i = 0; i < n; i++)
		built[i] = 0;
	int slots = in->build_slots;
	if (slots <= 1 || !in->step_build || n == 0)
		return 0;
	if ((size_t)slots > n)
		slots = (int)n;
	struct prebuild p = {.in = in,
			     .tag = tag,
			     .n = n,
			     .built = built,
			     .total = json_object_array_length(patches),
			     .jobs = calloc(n, sizeof(json_object *)),
			     .dirs = calloc(n, sizeof(char *))};
	pthread_t *threads = calloc((size_t)slots, sizeof(pthread_t));
	int started = 0, count = 0;
	if (!p.jobs || !p.dirs || !threads)
		goto out;
	pthread_mutex_init(&p.lock, NULL);
	/* the jobs are made here: json-c objects are not shared across threads */
	for (size_t i = 0; i < n; i++) {
		p.jobs[i] = prefix_step_job(in, patches, i + 1, tag);
		p.dirs[i] = prefix_step_dir(in, dir, i + 1);
		if (!p.dirs[i]) {
			json_object_put(p.jobs[i]);
			p.jobs[i] = NULL;
		}
	}
	prefix_say(in, "[%s] building %zu prefix kernel(s) ahead, %d at a time", tag, n, slots);
	double t0 = time_monotonic_s();
	for (int t = 0; t < slots; t++)
		if (pthread_create(&threads[t], NULL, builder, &p) == 0)
			started++;
	if (started == 0)
		builder(&p); /* no thread: one at a time here */
	for (int t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	for (size_t i = 0; i < n; i++)
		count += built[i] > 0;
	prefix_say(in, "[%s] %d of %zu prefix kernels built, in %.1f s", tag, count, n,
		   time_monotonic_s() - t0);
	pthread_mutex_destroy(&p.lock);
out:
	for (size_t i = 0; p.jobs && i < n; i++)
		json_object_put(p.jobs[i]);
	for (size_t i = 0; p.dirs && i < n; i++)
		free(p.dirs[i]);
	free(p.jobs);
	free(p.dirs);
	free(threads);
	return count;
}
