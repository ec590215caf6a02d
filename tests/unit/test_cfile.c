/*
 * The reader of the files the config names, and the one rule for secret
 * files: trailing newlines dropped, nothing else; empty, NUL, a link, a
 * directory or a file past the bound refused, saying which file.
 */
#include "config.h"

#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfile.h"
#include "test.h"

static char	 tdir[] = "/tmp/nops-cfile.XXXXXX";

static const char *
put(const char *name, const void *data, size_t len)
{
	static char	 path[PATH_MAX];
	FILE		*fp;

	snprintf(path, sizeof(path), "%s/%s", tdir, name);
	if ((fp = fopen(path, "w")) == NULL ||
	    fwrite(data, 1, len, fp) != len || fclose(fp) != 0)
		abort();
	return path;
}

int
main(void)
{
	char		*buf, err[512], link[PATH_MAX];
	const char	*p;
	size_t		 len;

	if (mkdtemp(tdir) == NULL)
		abort();

	TEST_BEGIN("secret: trailing LF and CR LF are dropped");
	p = put("a", "tok\r\n\n", 6);
	CHECK(cfile_read(p, 64, CFILE_SECRET, &buf, &len, err,
	    sizeof(err)) == 0);
	CHECK_STR(buf, "tok");
	CHECK(len == 3);
	cfile_free(buf, len);
	TEST_END();

	TEST_BEGIN("secret: spaces and tabs are part of the value");
	p = put("b", " tok\t\n", 6);
	CHECK(cfile_read(p, 64, CFILE_SECRET, &buf, &len, err,
	    sizeof(err)) == 0);
	CHECK_STR(buf, " tok\t");
	cfile_free(buf, len);
	TEST_END();

	TEST_BEGIN("secret: empty, or only newlines, is refused");
	p = put("c", "\n\n", 2);
	CHECK(cfile_read(p, 64, CFILE_SECRET, &buf, &len, err,
	    sizeof(err)) == -1 && buf == NULL);
	CHECK(strstr(err, "/c: empty") != NULL);
	TEST_END();

	TEST_BEGIN("secret: a NUL byte is refused, the content not quoted");
	p = put("d", "se\0cret", 7);
	CHECK(cfile_read(p, 64, CFILE_SECRET, &buf, &len, err,
	    sizeof(err)) == -1);
	CHECK(strstr(err, "holds a NUL byte") != NULL);
	CHECK(strstr(err, "cret") == NULL);
	TEST_END();

	TEST_BEGIN("a file past the bound is refused");
	p = put("e", "0123456789", 10);
	CHECK(cfile_read(p, 9, 0, &buf, &len, err, sizeof(err)) == -1);
	CHECK(strstr(err, "at most 9 bytes") != NULL);
	CHECK(cfile_read(p, 10, 0, &buf, &len, err, sizeof(err)) == 0 &&
	    len == 10);
	cfile_free(buf, len);
	TEST_END();

	TEST_BEGIN("a symbolic link and a directory are refused");
	snprintf(link, sizeof(link), "%s/link", tdir);
	CHECK(symlink(p, link) == 0);
	CHECK(cfile_read(link, 64, 0, &buf, &len, err, sizeof(err)) == -1);
	CHECK(cfile_read(tdir, 64, 0, &buf, &len, err, sizeof(err)) == -1);
	CHECK(strstr(err, "not a regular file") != NULL);
	unlink(link);
	TEST_END();

	TEST_BEGIN("not a secret: the content as it is; empty allowed");
	p = put("f", "a\n", 2);
	CHECK(cfile_read(p, 64, 0, &buf, &len, err, sizeof(err)) == 0);
	CHECK_STR(buf, "a\n");
	cfile_free(buf, len);
	p = put("g", "", 0);
	CHECK(cfile_read(p, 64, 0, &buf, &len, err, sizeof(err)) == 0 &&
	    len == 0);
	cfile_free(buf, len);
	CHECK(cfile_read(p, 64, CFILE_NONEMPTY, &buf, &len, err,
	    sizeof(err)) == -1);
	TEST_END();

	for (p = "abcdefg"; *p != '\0'; p++) {
		char	 path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%c", tdir, *p);
		unlink(path);
	}
	rmdir(tdir);
	TEST_EXIT();
}
