/*
 * Login throttling that cannot be turned into a lockout (nopsd.8,
 * AUTHENTICATION).  Failures are counted per source (an address, or the
 * /64 of an IPv6 one) and per user name, in a fixed window of 5 minutes,
 * and of everyone together over the last minute (sliding, in 5-second
 * steps, so that failures spread across a minute's edge still count).
 * The rule that makes it safe: only sources that have failed are ever
 * refused.
 *
 * - A source with 5 failures waits until its window ends.
 * - A user name with 5 failures (from anywhere) is under attack: a
 *   source that has failed at all waits until its own failures expire;
 *   a source that has not still tries.
 * - While everyone together fails 60 times a minute, the brake is on: a
 *   source that has failed may try once every 30 seconds.  Nobody is
 *   refused by it outright; it spaces out those already failing.
 *
 * Unknown user names share one entry, so the table of names is as large
 * as the users file, whatever an attacker sends: it cannot be flushed
 * by trying many names (the cache overflow that let Argo CD's per-user
 * counts be evaded, CVE-2024-21662).
 */
#include "config.h"

#include <sys/types.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "nops.h"
#include "auth.h"

static struct auth_rl	*th_src, *th_user;

/*
 * Everyone's failures over the last AUTH_RL_GLOBAL_WINDOW seconds, in
 * buckets of TH_STEP seconds: a sliding window, not one that resets.
 */
#define TH_STEP		5
#define TH_BUCKETS	(AUTH_RL_GLOBAL_WINDOW / TH_STEP)
static struct {
	time_t		 at[TH_BUCKETS];	/* the step a bucket counts */
	unsigned int	 n[TH_BUCKETS];
} th_all;

static void
th_all_fail(time_t now)
{
	time_t	 step = now / TH_STEP;
	size_t	 i = (size_t)(step % TH_BUCKETS);

	if (th_all.at[i] != step) {
		th_all.at[i] = step;
		th_all.n[i] = 0;
	}
	th_all.n[i]++;
}

/* Failures in the steps that overlap the last window. */
unsigned int
auth_throttle_global(time_t now)
{
	time_t		 step = now / TH_STEP;
	unsigned int	 sum = 0;
	size_t		 i;

	for (i = 0; i < TH_BUCKETS; i++)
		if (th_all.at[i] <= step && step - th_all.at[i] < TH_BUCKETS)
			sum += th_all.n[i];
	return sum;
}

void
auth_throttle_shutdown(void)
{
	auth_rl_free(th_src);
	auth_rl_free(th_user);
	th_src = th_user = NULL;
	memset(&th_all, 0, sizeof(th_all));
}

static void
auth_throttle_init(void)
{
	if (th_src != NULL)
		return;
	th_src = auth_rl_new(AUTH_RL_SLOTS, AUTH_RL_FAILS, AUTH_RL_WINDOW);
	th_user = auth_rl_new(AUTH_RL_SLOTS, AUTH_RL_FAILS, AUTH_RL_WINDOW);
}

void
auth_throttle_source(const char *remote, char *key, size_t keylen)
{
	struct in6_addr	 a6;
	const char	*colon = strrchr(remote, ':');
	char		 addr[WEB_REMOTE_MAX], buf[INET6_ADDRSTRLEN];
	size_t		 n = colon != NULL ? (size_t)(colon - remote) :
			    strlen(remote);

	snprintf(addr, sizeof(addr), "%.*s", (int)n, remote);
	/* "[v6]:port" */
	if (addr[0] == '[' && n > 2 && addr[n - 1] == ']') {
		memmove(addr, addr + 1, n - 2);
		addr[n - 2] = '\0';
	}
	if (inet_pton(AF_INET6, addr, &a6) == 1) {
		memset(&a6.s6_addr[8], 0, 8);
		if (inet_ntop(AF_INET6, &a6, buf, sizeof(buf)) != NULL) {
			snprintf(key, keylen, "a:%s/64", buf);
			return;
		}
	}
	snprintf(key, keylen, "a:%s", addr);
}

int
auth_throttle_check(const char *remote, const char *user, time_t now)
{
	char	 src[WEB_REMOTE_MAX + 8], ukey[80];
	time_t	 end = now, last = now;
	int	 fails;

	auth_throttle_init();
	auth_throttle_source(remote, src, sizeof(src));
	snprintf(ukey, sizeof(ukey), "u:%s", user != NULL ? user : "?");
	if ((fails = auth_rl_count(th_src, src, now, &end, &last)) == 0)
		return 0;	/* a source that has not failed goes on */
	if (fails >= AUTH_RL_FAILS)
		return (int)(end - now);
	if (auth_rl_count(th_user, ukey, now, NULL, NULL) >= AUTH_RL_FAILS)
		return (int)(end - now);
	if (auth_throttle_global(now) >= AUTH_RL_GLOBAL_FAILS &&
	    now - last < AUTH_RL_BRAKE_SPACING)
		return (int)(AUTH_RL_BRAKE_SPACING - (now - last));
	return 0;
}

void
auth_throttle_failed(const char *remote, const char *user, time_t now)
{
	char	 src[WEB_REMOTE_MAX + 8], ukey[80];

	auth_throttle_init();
	auth_throttle_source(remote, src, sizeof(src));
	snprintf(ukey, sizeof(ukey), "u:%s", user != NULL ? user : "?");
	auth_rl_fail(th_src, src, now);
	auth_rl_fail(th_user, ukey, now);
	th_all_fail(now);
}
