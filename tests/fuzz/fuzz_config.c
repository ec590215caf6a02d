/*
 * libFuzzer target for the nops.conf parser: every input is written to a
 * file and parsed, and a config that parses is printed and parsed again,
 * which must succeed (the -nv round trip).  The owner/mode check is off:
 * the fuzzer does not run as root.  Build inputs for tests/fuzz/build:
 */
/* FUZZ-SOURCES: master/config.c master/parse.c shared/addr.c shared/log.c */
/* FUZZ-SOURCES: shared/xmalloc.c */
/* FUZZ-LIBS: libbsd-overlay */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "conf.h"

int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
/* Present when a sanitizer is linked in. */
void	__sanitizer_set_report_fd(void *) __attribute__((weak));

static char	 fuzz_dir[] = "/tmp/fuzz_config.XXXXXX";
static char	 fuzz_in[64], fuzz_out[64];
static int	 fuzz_stderr = -1, fuzz_null = -1;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (mkdtemp(fuzz_dir) == NULL)
		abort();
	snprintf(fuzz_in, sizeof(fuzz_in), "%s/in.conf", fuzz_dir);
	snprintf(fuzz_out, sizeof(fuzz_out), "%s/out.conf", fuzz_dir);
	log_init(1, LOG_DAEMON);
	/*
	 * Config errors are the normal case here: they go to /dev/null
	 * while parsing, but sanitizer reports keep the real stderr.
	 */
	if ((fuzz_stderr = dup(STDERR_FILENO)) == -1 ||
	    (fuzz_null = open("/dev/null", O_WRONLY)) == -1)
		abort();
	if (__sanitizer_set_report_fd != NULL)
		__sanitizer_set_report_fd((void *)(intptr_t)fuzz_stderr);
	return 0;
}

static struct nops_conf *
quiet_parse(const char *path)
{
	struct nops_conf	*conf;

	fflush(stderr);
	dup2(fuzz_null, STDERR_FILENO);
	conf = parse_config(path, CONF_NOSECRECY);
	fflush(stderr);
	dup2(fuzz_stderr, STDERR_FILENO);
	return conf;
}

static int
write_file(const char *path, const uint8_t *data, size_t len)
{
	FILE	*fp;
	int	 ok;

	if ((fp = fopen(path, "w")) == NULL)
		return -1;
	ok = fwrite(data, 1, len, fp) == len;
	return (fclose(fp) == 0 && ok) ? 0 : -1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct nops_conf	*conf, *again;
	FILE			*fp;
	char			*first = NULL, *second = NULL;
	size_t			 firstlen, secondlen;

	if (write_file(fuzz_in, data, len) == -1)
		abort();
	if ((conf = quiet_parse(fuzz_in)) == NULL)
		return 0;
	if ((fp = open_memstream(&first, &firstlen)) == NULL)
		abort();
	config_print(fp, conf);
	fclose(fp);
	if (write_file(fuzz_out, (const uint8_t *)first, firstlen) == -1)
		abort();
	/* What -nv prints must parse again, and print the same. */
	if ((again = quiet_parse(fuzz_out)) == NULL)
		abort();
	if ((fp = open_memstream(&second, &secondlen)) == NULL)
		abort();
	config_print(fp, again);
	fclose(fp);
	if (firstlen != secondlen || memcmp(first, second, firstlen) != 0)
		abort();
	free(first);
	free(second);
	config_free(again);
	config_free(conf);
	return 0;
}
