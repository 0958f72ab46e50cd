/* CPU lists; see cpu_list.h. */
#include <errno.h>
#include <stdio.h>

#include "util/cpu_list.h"

/* A decimal CPU number at *p, advancing *p; -1 when there is none or it is
 * max_cpus or more. */
static int cpu_number(const char **p, int max_cpus)
{
	int v = 0, digits = 0;
	while (**p >= '0' && **p <= '9') {
		v = v * 10 + (**p - '0');
		(*p)++;
		if (++digits > 5)
			return -1;
	}
	return digits && v < max_cpus ? v : -1;
}

int cpu_list_each(const char *s, int max_cpus, void (*add)(int lo, int hi, void *userdata),
		  void *userdata)
{
	const char *p = s;
	if (!s || !*s || *s == '\n')
		return -EINVAL;
	/* Checked whole first: add() sees only a list that parses. */
	for (int pass = 0; pass < 2; pass++) {
		p = s;
		for (;;) {
			int a = cpu_number(&p, max_cpus), b = a;
			if (a < 0)
				return -EINVAL;
			if (*p == '-') {
				p++;
				b = cpu_number(&p, max_cpus);
				if (b < a)
					return -EINVAL;
			}
			if (pass)
				add(a, b, userdata);
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p == '\n')
				p++;
			if (*p)
				return -EINVAL;
			break;
		}
	}
	return 0;
}

static void add_to_mask(int lo, int hi, void *userdata)
{
	uint64_t *m = userdata;
	for (int c = lo; c <= hi; c++)
		*m |= UINT64_C(1) << c;
}

int cpu_list_parse(const char *s, uint64_t *mask)
{
	uint64_t m = 0;
	int r = cpu_list_each(s, CPU_LIST_MAX_CPUS, add_to_mask, &m);
	if (r == 0)
		*mask = m;
	return r;
}

void cpu_list_format_each(int max_cpus, bool (*has)(int cpu, const void *userdata),
			  const void *userdata, char *buf, size_t len)
{
	size_t n = 0;
	if (!len)
		return;
	buf[0] = '\0';
	for (int c = 0; c < max_cpus; c++) {
		if (!has(c, userdata))
			continue;
		int e = c;
		while (e + 1 < max_cpus && has(e + 1, userdata))
			e++;
		int w = e > c ? snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "", c, e)
			      : snprintf(buf + n, len - n, "%s%d", n ? "," : "", c);
		if (w < 0 || (size_t)w >= len - n) {
			buf[n] = '\0'; /* cut at a whole entry */
			return;
		}
		n += (size_t)w;
		c = e;
	}
}

static bool in_mask(int cpu, const void *userdata)
{
	return *(const uint64_t *)userdata >> cpu & 1;
}

void cpu_list_format(uint64_t mask, char *buf, size_t len)
{
	cpu_list_format_each(CPU_LIST_MAX_CPUS, in_mask, &mask, buf, len);
}
