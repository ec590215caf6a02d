/*
 * nopsctl's authentication commands: API tokens, managed over the API
 * (management only), and two offline helpers that need no daemon:
 * hash-password (a bcrypt line for the users file) and gen-secret (a
 * random secret for a webhook or the bootstrap token).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/random.h>
#include <crypt.h>
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <readpassphrase.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "nopsctl.h"
#include "ctl_auth.h"

#define CTL_BCRYPT_COST		12
#define CTL_PASSWORD_MAX	72	/* bcrypt reads no more */
#define CTL_SECRET_BYTES	32

/* token create NAME --policy POLICY [--expires DURATION] */
static int
token_create(struct ctl *ctl, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "policy",	required_argument,	NULL, 'p' },
		{ "expires",	required_argument,	NULL, 'e' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*policy = NULL, *expires = NULL;
	json_t		*body, *a;
	int		 ch, rv;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			policy = optarg;
			break;
		case 'e':
			expires = optarg;
			break;
		default:
			warnx("token create: unknown option or missing value: "
			    "%s", argv[optind - 1]);
			ctl_usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1 || policy == NULL) {
		warnx("token create needs a name and --policy");
		ctl_usage();
	}
	body = json_pack("{s:s,s:s}", "name", argv[0], "policy", policy);
	json_object_set_new(body, "expires", expires != NULL ?
	    json_string(expires) : json_null());
	rv = ctl_post(ctl, "/api/v1/tokens", body, &a);
	if (rv == 0 && !ctl->json) {
		/* The token alone on stdout: "... > file" keeps just it. */
		fprintf(stderr, "token %s (id %lld, policy %s, expires %s); "
		    "it is shown this once:\n", ctl_str(a, "name", "?"),
		    ctl_int(a, "id"),
		    ctl_str(a, "policy", "?"), ctl_str(a, "expires_at",
		    "never"));
		printf("%s\n", ctl_str(a, "token", "?"));
	}
	/* The answer held the token: jsonwipe_init() wipes it. */
	json_decref(a);
	return rv;
}

static int
token_list(struct ctl *ctl)
{
	struct ctl_table	*t;
	json_t			*a, *tok, *items;
	char			 id[24];
	size_t			 i;
	int			 rv;

	if (!ctl_get(ctl, "/api/v1/tokens", &a, &rv))
		goto out;
	/* Alike on purpose: cmd_jobs (ctl_engine.c) lists so; other columns. */
	if ((items = ctl_items(a, "no tokens")) == NULL)
		goto out;
	t = table_new(8, "ID", "NAME", "POLICY", "STATE", "CREATED BY",
	    "CREATED", "EXPIRES", "LAST USED");
	json_array_foreach(items, i, tok) {
		table_row(t, ctl_num(id, sizeof(id), tok, "id"),
		    ctl_str(tok, "name", "?"),
		    ctl_str(tok, "policy", "?"), ctl_str(tok, "state", "?"),
		    ctl_str(tok, "created_by", "?"),
		    ctl_str(tok, "created_at", NULL),
		    ctl_str(tok, "expires_at", "never"),
		    ctl_str(tok, "last_used", NULL));
	}
	table_out(t, 0);
out:
	json_decref(a);
	return rv;
}

static int
token_revoke(struct ctl *ctl, const char *which)
{
	json_t	*a, *body = json_object();
	char	 path[512], *esc;
	int	 rv;

	esc = ctl_escape(which);
	snprintf(path, sizeof(path), "/api/v1/tokens/%s/revoke", esc);
	free(esc);
	rv = ctl_post(ctl, path, body, &a);
	if (rv == 0 && !ctl->json)
		printf("token %s (id %lld) revoked\n",
		    ctl_str(a, "name", "?"), ctl_int(a, "id"));
	json_decref(a);
	return rv;
}

int
cmd_token(struct ctl *ctl, int argc, char **argv)
{
	if (argc < 1)
		ctl_usage();
	if (strcmp(argv[0], "create") == 0)
		return token_create(ctl, argc, argv);
	if (strcmp(argv[0], "list") == 0 && argc == 1)
		return token_list(ctl);
	if (strcmp(argv[0], "revoke") == 0 && argc == 2)
		return token_revoke(ctl, argv[1]);
	ctl_usage();
}

/*
 * The password from the terminal without echo (asked twice), or the
 * first line of stdin when it is not a terminal (scripts, tests).
 */
static int
read_password(char *buf, size_t len)
{
	char	 again[CTL_PASSWORD_MAX + 2];
	size_t	 n;

	if (isatty(STDIN_FILENO)) {
		if (readpassphrase("Password: ", buf, len,
		    RPP_REQUIRE_TTY) == NULL)
			err(1, "readpassphrase");
		if (readpassphrase("Again: ", again, sizeof(again),
		    RPP_REQUIRE_TTY) == NULL)
			err(1, "readpassphrase");
		if (strcmp(buf, again) != 0) {
			explicit_bzero(again, sizeof(again));
			warnx("the passwords differ");
			return -1;
		}
		explicit_bzero(again, sizeof(again));
	} else {
		if (fgets(buf, (int)len, stdin) == NULL) {
			warnx("no password on stdin");
			return -1;
		}
		n = strcspn(buf, "\r\n");
		if (buf[n] == '\0' && !feof(stdin)) {
			warnx("password longer than %d bytes (bcrypt "
			    "ignores the rest)", CTL_PASSWORD_MAX);
			return -1;
		}
		buf[n] = '\0';
	}
	if (buf[0] == '\0') {
		warnx("empty password");
		return -1;
	}
	/* A terminal's buffer is larger than 72: the rest would not count. */
	if (strlen(buf) > CTL_PASSWORD_MAX) {
		warnx("password longer than %d bytes (bcrypt ignores the "
		    "rest)", CTL_PASSWORD_MAX);
		return -1;
	}
	return 0;
}

int
cmd_hash_password(struct ctl *ctl, int argc, char **argv)
{
	static struct crypt_data	 cd;	/* 32 KiB */
	char				 pw[CTL_PASSWORD_MAX + 2];
	char				 salt[CRYPT_GENSALT_OUTPUT_SIZE];
	const char			*h;
	int				 rv = 1;

	if (read_password(pw, sizeof(pw)) == -1)
		goto out;
	/* NULL random bytes: libxcrypt takes them from the kernel. */
	if (crypt_gensalt_rn("$2b$", CTL_BCRYPT_COST, NULL, 0, salt,
	    sizeof(salt)) == NULL) {
		warn("crypt_gensalt_rn");
		goto out;
	}
	memset(&cd, 0, sizeof(cd));
	if ((h = crypt_r(pw, salt, &cd)) == NULL || h[0] == '*') {
		warnx("crypt_r failed");
		goto out;
	}
	printf("%s\n", h);
	rv = 0;
out:
	explicit_bzero(pw, sizeof(pw));
	explicit_bzero(&cd, sizeof(cd));
	return rv;
}

int
cmd_gen_secret(struct ctl *ctl, int argc, char **argv)
{
	unsigned char	 raw[CTL_SECRET_BYTES];
	size_t		 i, got = 0;
	ssize_t		 n;

	while (got < sizeof(raw)) {
		if ((n = getrandom(raw + got, sizeof(raw) - got, 0)) == -1) {
			if (errno == EINTR)
				continue;
			err(1, "getrandom");
		}
		got += (size_t)n;
	}
	for (i = 0; i < sizeof(raw); i++)
		printf("%02x", raw[i]);
	putchar('\n');
	explicit_bzero(raw, sizeof(raw));
	return 0;
}
