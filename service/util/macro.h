/* Small language helpers shared by every module: cleanup attributes and
 * ownership transfer, after systemd's and kmod's macro.h. */
#pragma once

#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
#include <json-c/json.h>

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* Hands ownership of *p to the caller and leaves NULL behind. */
#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		__typeof__(p) _p_ = (p);                                                           \
		(p) = NULL;                                                                        \
		_p_;                                                                               \
	})
#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _fd_ = (fd);                                                                   \
		(fd) = -1;                                                                         \
		_fd_;                                                                              \
	})

static inline void freep(void *p)
{
	free(*(void **)p);
}
static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}
static inline void json_putp(json_object **o)
{
	json_object_put(*o);
}
static inline void strv_free(char **v)
{
	if (!v)
		return;
	for (char **s = v; *s; s++)
		free(*s);
	free(v);
}
static inline void strv_freep(char ***v)
{
	strv_free(*v);
}

#define _cleanup_(f)	    __attribute__((cleanup(f)))
#define _cleanup_free_	    _cleanup_(freep)
#define _cleanup_close_	    _cleanup_(closep)
#define _cleanup_fclose_    _cleanup_(fclosep)
#define _cleanup_json_	    _cleanup_(json_putp)
#define _cleanup_strv_free_ _cleanup_(strv_freep)
#define _unused_	    __attribute__((unused))
#define _printf_(a, b)	    __attribute__((format(printf, a, b)))
