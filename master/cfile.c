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

#include <sys/queue.h>

#include "log.h"
#include "xmalloc.h"
#include "cfile.h"

/*
 * What the master read as root at start (cfile_keep()): once it dropped
 * root, a file it cannot open itself is taken from here, as long as it
 * is the same file unchanged (device, inode, size, modification and
 * change times).  A file that changed must be readable by the master's
 * user (nops.conf(5), secret files).
 */
struct cfile_kept {
	TAILQ_ENTRY(cfile_kept)	 ck_entry;
	char			*ck_path;
	struct stat		 ck_sb;
	int			 ck_fd;		/* O_PATH, opened as root */
	char			*ck_buf;
	size_t			 ck_len;
	int			 ck_mark;
};
static TAILQ_HEAD(, cfile_kept) cfile_kept =
    TAILQ_HEAD_INITIALIZER(cfile_kept);

static int
cfile_same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	    a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	    a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	    a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/*
 * Alike on purpose: notifier_find (notify.c), plans_find (plans.c) and
 * repo_find (repo.c) search their own TAILQ by name the same way; the
 * element types differ, and one search for all would need a macro.
 */
static struct cfile_kept *
cfile_find(const char *path)
{
	struct cfile_kept	*ck;

	TAILQ_FOREACH(ck, &cfile_kept, ck_entry)
		if (strcmp(ck->ck_path, path) == 0)
			return ck;
	return NULL;
}

static void
cfile_drop(struct cfile_kept *ck)
{
	TAILQ_REMOVE(&cfile_kept, ck, ck_entry);
	if (ck->ck_fd != -1)
		close(ck->ck_fd);
	freezero(ck->ck_buf, ck->ck_len + 1);
	free(ck->ck_path);
	free(ck);
}

/* The whole file, as it is on disk; -1 with the reason in err. */
static int
cfile_load(const char *path, size_t max, struct stat *sb, char **buf,
    size_t *len, char *err, size_t errlen)
{
	ssize_t		 n;
	size_t		 off = 0, size;
	char		*b;
	int		 fd;

	/* O_NONBLOCK: a FIFO in place of the file does not hang us. */
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, sb) == -1 || !S_ISREG(sb->st_mode) ||
	    (size_t)sb->st_size > max) {
		snprintf(err, errlen, "%s: not a regular file of at most %zu "
		    "bytes", path, max);
		close(fd);
		errno = EINVAL;
		return -1;
	}
	size = (size_t)sb->st_size;
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
			errno = EIO;
			return -1;
		}
		off += (size_t)n;
	}
	close(fd);
	b[off] = '\0';
	*buf = b;
	*len = off;
	return 0;
}

/*
 * The kept copy of path, if the master cannot open the file (errno
 * EACCES: permissions or Landlock) and it did not change since it was
 * kept.  NULL otherwise.
 */
static struct cfile_kept *
cfile_kept_copy(const char *path, int error)
{
	struct cfile_kept	*ck;
	struct stat		 sb;

	if (error != EACCES && error != EPERM)
		return NULL;
	if ((ck = cfile_find(path)) == NULL)
		return NULL;
	/*
	 * In a directory the master's user may not search, the path cannot
	 * even be looked at: the file opened at start (O_PATH, which reads
	 * nothing) says whether it changed; a file put in its place there
	 * cannot be seen, nor read.
	 */
	if (lstat(path, &sb) == -1 && (errno != EACCES || ck->ck_fd == -1 ||
	    fstat(ck->ck_fd, &sb) == -1))
		return NULL;
	if (sb.st_nlink == 0 || !cfile_same(&sb, &ck->ck_sb))
		return NULL;
	return ck;
}

int
cfile_keep(const char *path)
{
	struct cfile_kept	*ck;
	struct stat		 sb;
	char			 err[256], *buf;
	size_t			 len;

	if (cfile_load(path, CFILE_KEEP_MAX, &sb, &buf, &len, err,
	    sizeof(err)) == -1) {
		/* Whoever reads it says what is wrong with it. */
		log_debug("not kept: %s", err);
		return -1;
	}
	if ((ck = cfile_find(path)) != NULL)
		cfile_drop(ck);
	if ((ck = calloc(1, sizeof(*ck))) == NULL)
		fatal(NULL);
	ck->ck_path = xstrdup(path);
	ck->ck_fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	ck->ck_sb = sb;
	ck->ck_buf = buf;
	ck->ck_len = len;
	TAILQ_INSERT_TAIL(&cfile_kept, ck, ck_entry);
	return 0;
}

int
cfile_readable(const char *path, int *changed)
{
	int	 fd, error;

	*changed = 0;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) != -1) {
		close(fd);
		return 1;
	}
	error = errno;
	if (cfile_kept_copy(path, error) != NULL)
		return 1;
	*changed = cfile_find(path) != NULL;
	errno = error;
	return 0;
}

void
cfile_mark(const char *path)
{
	struct cfile_kept	*ck;

	if ((ck = cfile_find(path)) != NULL)
		ck->ck_mark = 1;
}

void
cfile_sweep(void)
{
	struct cfile_kept	*ck, *next;

	for (ck = TAILQ_FIRST(&cfile_kept); ck != NULL; ck = next) {
		next = TAILQ_NEXT(ck, ck_entry);
		if (!ck->ck_mark)
			cfile_drop(ck);
		else
			ck->ck_mark = 0;
	}
}

int
cfile_read(const char *path, size_t max, int flags, char **buf,
    size_t *len, char *err, size_t errlen)
{
	struct cfile_kept	*ck;
	struct stat		 sb;
	size_t			 off, size;
	char			*b;

	*buf = NULL;
	*len = 0;
	if (cfile_load(path, max, &sb, &b, &off, err, errlen) == -1) {
		if ((ck = cfile_kept_copy(path, errno)) == NULL)
			return -1;
		if (ck->ck_len > max) {
			snprintf(err, errlen, "%s: not a regular file of at "
			    "most %zu bytes", path, max);
			return -1;
		}
		if ((b = malloc(ck->ck_len + 1)) == NULL)
			fatal("malloc");
		memcpy(b, ck->ck_buf, ck->ck_len + 1);
		off = ck->ck_len;
	}
	size = off;
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
