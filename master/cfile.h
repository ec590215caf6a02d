/*
 * Files the config names (keys, certificates, tokens, secrets), read
 * whole by the master: as root at start, as the master's user once it
 * dropped root.
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

/*
 * Kept copies.  cfile_keep(), as root before the drop, reads path whole
 * (at most CFILE_KEEP_MAX bytes) and keeps it; from then on cfile_read()
 * of a file the master may not open (EACCES) gives the kept copy while
 * the file is unchanged (device, inode, size, times).  A changed one
 * fails as it did.
 *
 * cfile_readable: 1 when cfile_read() would get the file's content
 * (open or kept); else 0, errno set, and *changed 1 when a copy was kept
 * but the file changed since.
 * cfile_mark, cfile_sweep: keep only the copies marked since the last
 * sweep (the files the running configuration names).
 */
#define CFILE_KEEP_MAX	(4 * 1024 * 1024)

int	 cfile_keep(const char *path);
int	 cfile_readable(const char *path, int *changed);
void	 cfile_mark(const char *path);
void	 cfile_sweep(void);

#endif /* NOPS_CFILE_H */
