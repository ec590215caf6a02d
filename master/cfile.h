/*
 * Files the config names (keys, certificates, tokens, secrets), read
 * whole by the master, as root.
 */
#ifndef NOPS_CFILE_H
#define NOPS_CFILE_H

#include <stddef.h>

/*
 * cfile_read: open path without following a symbolic link; it must be a
 * regular file of at most max bytes.  *buf gets its content,
 * NUL-terminated, *len its length; free it with cfile_free() (zeroed: it
 * may be a secret).  -1 with the reason, path first, in err.
 *
 * CFILE_SECRET: the file holds one secret value, and one rule reads it
 * (nops.conf(5), secret files): trailing newlines (LF and CR) are not
 * part of it, nothing else is trimmed; what is left must not be empty and
 * must hold no NUL byte.  Errors never quote the content.
 */
#define CFILE_SECRET	0x01
#define CFILE_NONEMPTY	0x02	/* an empty file is an error */

int	 cfile_read(const char *path, size_t max, int flags, char **buf,
	    size_t *len, char *err, size_t errlen);
void	 cfile_free(char *buf, size_t len);

#endif /* NOPS_CFILE_H */
