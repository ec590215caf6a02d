/*
 * Reading the files the config names: one bounded reader, one rule for
 * secrets (cfile.h).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "cfile.h"

int
cfile_read(const char *path, size_t max, int flags, char **buf,
    size_t *len, char *err, size_t errlen)
{
	struct stat	 sb;
	ssize_t		 n;
	size_t		 off = 0, size;
	char		*b;
	int		 fd;

	*buf = NULL;
	*len = 0;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    (size_t)sb.st_size > max) {
		snprintf(err, errlen, "%s: not a regular file of at most %zu "
		    "bytes", path, max);
		close(fd);
		return -1;
	}
	size = (size_t)sb.st_size;
	if ((b = malloc(size + 1)) == NULL)
		fatal("malloc");
	while (off < size) {
		n = read(fd, b + off, size - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "%s: %s", path, n == 0 ?
			    "changed while read" : strerror(errno));
			freezero(b, size + 1);
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	close(fd);
	b[off] = '\0';
	if (flags & CFILE_SECRET) {
		/* Files made with echo or an editor end with a newline. */
		while (off > 0 && (b[off - 1] == '\n' || b[off - 1] == '\r'))
			b[--off] = '\0';
		if (off > 0 && memchr(b, '\0', off) != NULL) {
			snprintf(err, errlen, "%s: holds a NUL byte", path);
			freezero(b, size + 1);
			return -1;
		}
	}
	if (off == 0 && (flags & (CFILE_SECRET | CFILE_NONEMPTY))) {
		snprintf(err, errlen, "%s: empty", path);
		freezero(b, size + 1);
		return -1;
	}
	*buf = b;
	*len = off;
	return 0;
}

void
cfile_free(char *buf, size_t len)
{
	if (buf != NULL)
		freezero(buf, len + 1);
}
