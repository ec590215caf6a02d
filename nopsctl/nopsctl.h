#ifndef NOPS_NOPSCTL_H
#define NOPS_NOPSCTL_H

#include <jansson.h>

#ifndef __dead
#define __dead	__attribute__((__noreturn__))
#endif

#define EXIT_ANSWER	1	/* the daemon answered with an error */
#define EXIT_USAGE	2

struct ctl {
	const char	*socket;	/* control socket, or NULL with url */
	const char	*url;		/* base URL, e.g. http://host:8080 */
	char		*token;		/* bearer token read from -t file */
	int		 json;		/* -j */
};

struct ctl_cmd {
	const char	*name;
	int		 minargs;
	int		 maxargs;
	const char	*args;		/* for the usage line */
	int		(*fn)(struct ctl *, int, char **);
};

#endif
