/* CPU lists; see cpu_list.h. */
#include <errno.h>
#include <stdio.h>

#include "util/cpu_list.h"

/* A decimal CPU number at *p, advancing *p; -1 when there is none or it is
 * out of range. */
static int cpu_number(const char **p)
{
	int v = 0, digits = 0;
	while (**p >= '0' && **p <= '9') {
		v = v * 10 + (**p - '0');
		(*p)++;
		if (++digits > 3)
			return -1;
	}
	return digits && v < CPU_LIST_MAX_CPUS ? v : -1;
}

int cpu_list_parse(const char *s, uint64_t *mask)
{
	uint64_t m = 0;
	const char *p = s;
	if (!s || !*s || *s == '\n')
		return -EINVAL;
	for (;;) {
		int a = cpu_number(&p), b = a;
		if (a < 0)
			return -EINVAL;
		if (*p == '-') {
			p++;
			b = cpu_number(&p);
			if (b < a)
				return -EINVAL;
		}
		for (int c = a; c <= b; c++)
			m |= UINT64_C(1) << c;
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
	*mask = m;
	return 0;
}

void cpu_list_format(uint64_t mask, char *buf, size_t len)
{
	size_t n = 0;
	if (len)
		buf[0] = '\0';
	for (int c = 0; c < CPU_LIST_MAX_CPUS; c++) {
		if (!(mask >> c & 1))
			continue;
		int e = c;
		while (e + 1 < CPU_LIST_MAX_CPUS && (mask >> (e + 1) & 1))
			e++;
		int w =
		    e > c ? snprintf(buf + n, len > n ? len - n : 0, "%s%d-%d", n ? "," : "", c, e)
			  : snprintf(buf + n, len > n ? len - n : 0, "%s%d", n ? "," : "", c);
		if (w < 0 || (size_t)w >= (len > n ? len - n : 0))
			return; /* cut: callers size buf with CPU_LIST_TEXT_MAX */
		n += (size_t)w;
		c = e;
	}
}
