/*
 * Authentication building blocks, free of the daemon's state so that the
 * unit tests call them directly: the users file, bcrypt verification,
 * random secrets and their hashes, cookies, and the login rate limiter.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/tree.h>
#include <crypt.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "log.h"
#include "text.h"
#include "conf.h"
#include "auth.h"
#include "cfile.h"

#define AUTH_LINE_MAX		1024
#define AUTH_USERS_MAX		10000
#define AUTH_FILE_MAX		(1024 * 1024)

static const char auth_bcrypt_chars[] =
    "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* Users file. */

const char *
auth_check_hash(const char *h)
{
	int	 cost;

	if (strncmp(h, "$2b$", 4) != 0 && strncmp(h, "$2y$", 4) != 0)
		return "not a bcrypt hash ($2b$ or $2y$): make one with "
		    "nopsctl hash-password";
	if (strlen(h) != AUTH_BCRYPT_LEN || !isdigit((unsigned char)h[4]) ||
	    !isdigit((unsigned char)h[5]) || h[6] != '$' ||
	    strspn(h + 7, auth_bcrypt_chars) != AUTH_BCRYPT_LEN - 7)
		return "malformed bcrypt hash";
	cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (cost < AUTH_BCRYPT_COST_MIN)
		return "bcrypt cost below 10 is too cheap (htpasswd -B "
		    "defaults to 5: use -C 12, or nopsctl hash-password)";
	if (cost > AUTH_BCRYPT_COST_MAX)
		return "bcrypt cost above 14: each login would hold the "
		    "daemon for seconds";
	return NULL;
}

static int
auth_user_cmp(const void *a, const void *b)
{
	const struct auth_user	*ua = a, *ub = b;

	return strcmp(ua->au_name, ub->au_name);
}

static int
auth_user_key_cmp(const void *key, const void *elem)
{
	const struct auth_user	*u = elem;

	return strcmp(key, u->au_name);
}

/* Alike on purpose: repo_snap_free, survey_free: other arrays. */
void
auth_users_free(struct auth_users *u)
{
	size_t	 i;

	if (u == NULL)
		return;
	for (i = 0; i < u->au_n; i++) {
		free(u->au_users[i].au_name);
		free(u->au_users[i].au_hash);
	}
	free(u->au_users);
	free(u);
}

static void
auth_users_err(int *nerr, char *err, size_t errlen, const char *name,
    int line, const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[256];

	va_start(ap, fmt);
	text_vprintf(msg, sizeof(msg), 0, fmt, ap);
	va_end(ap);
	log_warnx("%s:%d: %s", name, line, msg);
	if ((*nerr)++ == 0 && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s:%d: %s", name, line, msg);
}

struct auth_users *
auth_users_parse(FILE *fp, const char *name, char *err, size_t errlen)
{
	struct auth_users	*u;
	struct auth_user	*n;
	char			*buf = NULL, *colon;
	const char		*why;
	size_t			 cap = 0, total = 0, i;
	ssize_t			 len;
	int			 line = 0, nerr = 0;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if ((u = calloc(1, sizeof(*u))) == NULL)
		fatal("calloc");
	while ((len = getline(&buf, &cap, fp)) != -1) {
		line++;
		total += (size_t)len;
		if (total > AUTH_FILE_MAX) {
			auth_users_err(&nerr, err, errlen, name, line,
			    "file larger than %d bytes", AUTH_FILE_MAX);
			break;
		}
		if (len > AUTH_LINE_MAX) {
			auth_users_err(&nerr, err, errlen, name, line,
			    "line longer than %d bytes", AUTH_LINE_MAX);
			continue;
		}
		if (strlen(buf) != (size_t)len) {
			auth_users_err(&nerr, err, errlen, name, line,
			    "NUL byte");
			continue;
		}
		buf[strcspn(buf, "\r\n")] = '\0';
		if (buf[0] == '\0' || buf[0] == '#')
			continue;
		if ((colon = strchr(buf, ':')) == NULL) {
			auth_users_err(&nerr, err, errlen, name, line,
			    "expected name:hash");
			continue;
		}
		*colon = '\0';
		if ((why = config_check_username(buf)) != NULL) {
			/* Never echo the line: it may be a password. */
			auth_users_err(&nerr, err, errlen, name, line,
			    "bad user name: %s", why);
			continue;
		}
		/* The name is the audit log's actor, which holds 63. */
		if (strlen(buf) > AUTH_USER_NAME_MAX) {
			auth_users_err(&nerr, err, errlen, name, line,
			    "user name longer than %d characters",
			    AUTH_USER_NAME_MAX);
			continue;
		}
		if ((why = auth_check_hash(colon + 1)) != NULL) {
			auth_users_err(&nerr, err, errlen, name, line,
			    "user \"%s\": %s", buf, why);
			continue;
		}
		for (i = 0; i < u->au_n; i++)
			if (strcmp(u->au_users[i].au_name, buf) == 0)
				break;
		if (i < u->au_n) {
			auth_users_err(&nerr, err, errlen, name, line,
			    "user \"%s\" listed twice", buf);
			continue;
		}
		if (u->au_n >= AUTH_USERS_MAX) {
			auth_users_err(&nerr, err, errlen, name, line,
			    "more than %d users", AUTH_USERS_MAX);
			break;
		}
		if ((n = reallocarray(u->au_users, u->au_n + 1,
		    sizeof(*n))) == NULL)
			fatal("reallocarray");
		u->au_users = n;
		n = &u->au_users[u->au_n++];
		if ((n->au_name = strdup(buf)) == NULL ||
		    (n->au_hash = strdup(colon + 1)) == NULL)
			fatal("strdup");
	}
	if (ferror(fp))
		auth_users_err(&nerr, err, errlen, name, line, "read error");
	if (buf != NULL)
		freezero(buf, cap);
	if (nerr > 0) {
		auth_users_free(u);
		return NULL;
	}
	if (u->au_n > 0)
		qsort(u->au_users, u->au_n, sizeof(*u->au_users),
		    auth_user_cmp);
	return u;
}

struct auth_users *
auth_users_load(const char *path, char *err, size_t errlen)
{
	struct auth_users	*u;
	FILE			*fp;
	char			*buf, why[512];
	size_t			 len;

	/* One reader for every file the config names (cfile.h). */
	if (cfile_read(path, AUTH_FILE_MAX, 0, &buf, &len, why,
	    sizeof(why)) == -1) {
		if (err != NULL)
			snprintf(err, errlen, "users file %s", why);
		log_warnx("users file %s", why);
		return NULL;
	}
	/* fmemopen(3) of an empty buffer fails: an empty line instead. */
	if ((fp = len > 0 ? fmemopen(buf, len, "r") :
	    fmemopen("\n", 1, "r")) == NULL)
		fatal("fmemopen");
	u = auth_users_parse(fp, path, err, errlen);
	fclose(fp);
	cfile_free(buf, len);
	return u;
}

const char *
auth_users_hash(const struct auth_users *u, const char *user)
{
	const struct auth_user	*found;

	if (u == NULL || u->au_n == 0)
		return NULL;
	found = bsearch(user, u->au_users, u->au_n, sizeof(*u->au_users),
	    auth_user_key_cmp);
	return found != NULL ? found->au_hash : NULL;
}

int
auth_password_verify(const char *password, size_t len, const char *hash)
{
	struct crypt_data		*cd;	/* 32 KiB: not on the stack */
	char				 pw[AUTH_PASSWORD_MAX + 1];
	const char			*out;
	int				 rv = -1;

	if (memchr(password, '\0', len) != NULL || auth_check_hash(hash) !=
	    NULL)
		return -1;
	/* bcrypt reads 72 bytes at most; the rest never counted. */
	if (len > AUTH_PASSWORD_MAX)
		len = AUTH_PASSWORD_MAX;
	memcpy(pw, password, len);
	pw[len] = '\0';
	/* One per call: the hashing threads run this at once. */
	if ((cd = calloc(1, sizeof(*cd))) == NULL)
		fatal(NULL);
	out = crypt_r(pw, hash, cd);
	if (out != NULL && out[0] != '*') {
		rv = strlen(out) == strlen(hash) &&
		    CRYPTO_memcmp(out, hash, strlen(hash)) == 0;
	}
	explicit_bzero(pw, sizeof(pw));
	freezero(cd, sizeof(*cd));
	return rv;
}

/* Secrets. */

void
auth_random(void *buf, size_t len)
{
	unsigned char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = getrandom(p, len, 0)) == -1) {
			if (errno == EINTR)
				continue;
			fatal("getrandom");
		}
		p += n;
		len -= (size_t)n;
	}
}

void
auth_session_new(char out[AUTH_SECRET_B64 + 1])
{
	unsigned char	 raw[AUTH_SECRET_BYTES];

	auth_random(raw, sizeof(raw));
	auth_b64url(raw, sizeof(raw), out);
	explicit_bzero(raw, sizeof(raw));
}

void
auth_token_new(char out[AUTH_TOKEN_LEN + 1])
{
	char	 b64[AUTH_SECRET_B64 + 1];

	auth_session_new(b64);
	snprintf(out, AUTH_TOKEN_LEN + 1, "%s%s", AUTH_TOKEN_PREFIX, b64);
	explicit_bzero(b64, sizeof(b64));
}

int
auth_secret_file(const char *path, char *out, size_t outlen, char *err,
    size_t errlen)
{
	char	*buf;
	size_t	 len, i;
	int	 rv = -1;

	/* Room for a final CR LF, which the secret rule drops. */
	if (cfile_read(path, AUTH_BOOTSTRAP_MAX + 2, CFILE_SECRET, &buf, &len,
	    err, errlen) == -1)
		return -1;
	for (i = 0; i < len; i++)
		if ((unsigned char)buf[i] <= ' ' ||
		    (unsigned char)buf[i] >= 0x7f)
			break;
	if (i < len) {
		snprintf(err, errlen, "%s: the token must be one line of "
		    "printable characters without spaces", path);
		goto out;
	}
	if (len < AUTH_BOOTSTRAP_MIN || len > AUTH_BOOTSTRAP_MAX) {
		snprintf(err, errlen, "%s: the token must be %d to %d "
		    "characters (nopsctl gen-secret makes one)", path,
		    AUTH_BOOTSTRAP_MIN, AUTH_BOOTSTRAP_MAX);
		goto out;
	}
	if (len >= outlen) {
		snprintf(err, errlen, "%s: token too long", path);
		goto out;
	}
	memcpy(out, buf, len + 1);
	rv = 0;
out:
	cfile_free(buf, len);
	return rv;
}

/*
 * Login rate limiting: failures per key in a fixed window.  The table is
 * bounded; when full, a slot whose window is over is reused, else the
 * one whose window started first.  The slots that count (rs_count > 0)
 * are in a tree by key: every login looks its address up, and a scan of
 * the whole table cost each login more than the rest of its checks.
 */
struct auth_rl_slot {
	RB_ENTRY(auth_rl_slot)	 rs_node;
	char			 rs_key[96];	/* "u:" user or "a:" address */
	time_t			 rs_start;
	time_t			 rs_last;	/* the last failure */
	int			 rs_count;
};
RB_HEAD(auth_rl_tree, auth_rl_slot);
int	 auth_rl_cmp(struct auth_rl_slot *, struct auth_rl_slot *);
RB_PROTOTYPE(auth_rl_tree, auth_rl_slot, rs_node, auth_rl_cmp);

int
auth_rl_cmp(struct auth_rl_slot *a, struct auth_rl_slot *b)
{
	return strcmp(a->rs_key, b->rs_key);
}
RB_GENERATE(auth_rl_tree, auth_rl_slot, rs_node, auth_rl_cmp);

struct auth_rl {
	struct auth_rl_slot	*rl_slots;
	struct auth_rl_tree	 rl_tree;
	size_t			 rl_n;
	int			 rl_max;
	int			 rl_window;
};

struct auth_rl *
auth_rl_new(size_t slots, int max, int window)
{
	struct auth_rl	*rl;

	if ((rl = calloc(1, sizeof(*rl))) == NULL ||
	    (rl->rl_slots = calloc(slots, sizeof(*rl->rl_slots))) == NULL)
		fatal("calloc");
	RB_INIT(&rl->rl_tree);
	rl->rl_n = slots;
	rl->rl_max = max;
	rl->rl_window = window;
	return rl;
}

void
auth_rl_free(struct auth_rl *rl)
{
	if (rl == NULL)
		return;
	free(rl->rl_slots);
	free(rl);
}

static struct auth_rl_slot *
auth_rl_find(struct auth_rl *rl, const char *key)
{
	struct auth_rl_slot	 k;

	if (strlcpy(k.rs_key, key, sizeof(k.rs_key)) >= sizeof(k.rs_key))
		return NULL;	/* never stored: see auth_rl_fail() */
	return RB_FIND(auth_rl_tree, &rl->rl_tree, &k);
}

/* The slot counts no more: out of the tree. */
static void
auth_rl_clear(struct auth_rl *rl, struct auth_rl_slot *s)
{
	if (s->rs_count > 0)
		RB_REMOVE(auth_rl_tree, &rl->rl_tree, s);
	s->rs_count = 0;
}

int
auth_rl_check(struct auth_rl *rl, const char *key, time_t now)
{
	struct auth_rl_slot	*s;

	if ((s = auth_rl_find(rl, key)) == NULL)
		return 0;
	if (now - s->rs_start >= rl->rl_window || now < s->rs_start) {
		auth_rl_clear(rl, s);
		return 0;
	}
	if (s->rs_count < rl->rl_max)
		return 0;
	return (int)(s->rs_start + rl->rl_window - now);
}

void
auth_rl_fail(struct auth_rl *rl, const char *key, time_t now)
{
	struct auth_rl_slot	*s, *old = NULL;
	size_t			 i;

	if ((s = auth_rl_find(rl, key)) != NULL) {
		if (now - s->rs_start >= rl->rl_window || now < s->rs_start) {
			s->rs_start = now;
			s->rs_count = 0;
		}
		s->rs_count++;
		s->rs_last = now;
		return;
	}
	for (i = 0; i < rl->rl_n; i++) {
		s = &rl->rl_slots[i];
		if (s->rs_count == 0 || now - s->rs_start >= rl->rl_window)
			break;
		if (old == NULL || s->rs_start < old->rs_start)
			old = s;
	}
	if (i == rl->rl_n)
		s = old;
	if (s == NULL)		/* a table of no slots counts nothing */
		return;
	auth_rl_clear(rl, s);
	strlcpy(s->rs_key, key, sizeof(s->rs_key));
	s->rs_start = now;
	s->rs_last = now;
	s->rs_count = 1;
	/* A key cut to the slot's size may equal one already counted. */
	if (RB_INSERT(auth_rl_tree, &rl->rl_tree, s) != NULL)
		s->rs_count = 0;
}

int
auth_rl_count(struct auth_rl *rl, const char *key, time_t now, time_t *end,
    time_t *last)
{
	struct auth_rl_slot	*s;

	if ((s = auth_rl_find(rl, key)) == NULL ||
	    now - s->rs_start >= rl->rl_window || now < s->rs_start)
		return 0;
	if (end != NULL)
		*end = s->rs_start + rl->rl_window;
	if (last != NULL)
		*last = s->rs_last;
	return s->rs_count;
}
