/*
 * Authentication to remotes.  ssh: the private key comes from the master
 * in memory (never a file, never an agent, never a password prompt) and
 * the host key must match an entry of the known_hosts text the master
 * sent: there is no trust on first use.  http(s): anonymous only; the
 * TLS certificate is checked by libgit2 against the system CA store.
 */
#include "config.h"

#include <sys/types.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>

#include "log.h"
#include "text.h"
#include "nops.h"
#include "git.h"
#include "knownhosts.h"

int
git_cb_credentials(git_credential **out, const char *url,
    const char *user_from_url, unsigned int allowed, void *payload)
{
	struct git_repo	*r = payload;
	const char	*user;

	user = user_from_url != NULL && user_from_url[0] != '\0' ?
	    user_from_url : "git";
	if (allowed & GIT_CREDENTIAL_USERNAME)
		return git_credential_username_new(out, user);
	/* One key, one try: a refused key is an error, not a prompt. */
	if (r->gr_auth_tries++ > 0) {
		snprintf(r->gr_why, sizeof(r->gr_why), "the remote refused "
		    "the ssh key for user %s", user);
		return GIT_EUSER;
	}
	if (allowed & GIT_CREDENTIAL_SSH_MEMORY) {
		if (r->gr_key == NULL) {
			snprintf(r->gr_why, sizeof(r->gr_why), "the remote "
			    "wants an ssh key and none is configured");
			return GIT_EUSER;
		}
		return git_credential_ssh_key_memory_new(out, user, NULL,
		    r->gr_key, NULL);
	}
	snprintf(r->gr_why, sizeof(r->gr_why), "the remote asks for "
	    "credentials nops does not give (only anonymous http(s) and "
	    "ssh keys are supported)");
	return GIT_EUSER;
}

int
git_known_hosts_check(const char *known, size_t knownlen, const char *host,
    int port, const unsigned char *key, size_t keylen, char *why,
    size_t whylen)
{
	if (knownhosts_check(known, knownlen, host, port, key, keylen, why,
	    whylen) == 0)
		return 0;
	text_clean_inplace(why, whylen, 0);
	return -1;
}

/* The port of an ssh URL: ssh://[user@]host[:port]/path; scp-like is 22. */
int
git_url_port(const char *url)
{
	const char	*p, *slash, *colon;
	long		 port;
	char		*end;

	if (strncmp(url, "ssh://", 6) != 0)
		return 22;
	p = url + 6;
	if ((slash = strchr(p, '/')) == NULL)
		slash = p + strlen(p);
	if ((colon = memchr(p, '@', slash - p)) != NULL)
		p = colon + 1;
	if (*p == '[') {
		if ((p = memchr(p, ']', slash - p)) == NULL)
			return 22;
		p++;
	}
	if ((colon = memchr(p, ':', slash - p)) == NULL)
		return 22;
	port = strtol(colon + 1, &end, 10);
	if (end != slash || port < 1 || port > 65535)
		return 22;
	return (int)port;
}

int
git_cb_certificate(git_cert *cert, int valid, const char *host,
    void *payload)
{
	struct git_repo		*r = payload;
	git_cert_hostkey	*hk;

	if (cert->cert_type == GIT_CERT_HOSTKEY_LIBSSH2) {
		hk = (git_cert_hostkey *)cert;
		if (!(hk->type & GIT_CERT_SSH_RAW) || hk->hostkey == NULL) {
			snprintf(r->gr_why, sizeof(r->gr_why), "%s sent no "
			    "host key to check", host);
			return GIT_ECERTIFICATE;
		}
		if (r->gr_known == NULL) {
			snprintf(r->gr_why, sizeof(r->gr_why), "no known-hosts "
			    "file is configured: ssh host keys are pinned");
			return GIT_ECERTIFICATE;
		}
		if (git_known_hosts_check(r->gr_known, r->gr_knownlen, host,
		    git_url_port(r->gr_url),
		    (const unsigned char *)hk->hostkey, hk->hostkey_len,
		    r->gr_why, sizeof(r->gr_why)) == -1)
			return GIT_ECERTIFICATE;
		return 0;
	}
	/* TLS: libgit2 checked the chain and the name. */
	if (!valid) {
		snprintf(r->gr_why, sizeof(r->gr_why), "the TLS certificate "
		    "of %s does not verify against the system's CA store",
		    host);
		return GIT_ECERTIFICATE;
	}
	return 0;
}
