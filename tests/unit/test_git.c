/*
 * Unit tests of the git checks: the master's rules for what the gitworker
 * sends (repo_check_path; text itself is test_text), and the gitworker's
 * own: tree entry names, the known_hosts matcher and ssh URL ports.
 */
#include "config.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "nops.h"
#include "master.h"
#include "repo.h"
#include "git.h"
#include "test.h"

/* repo.c lives in libmaster with supervise.c: stand in for nopsd.c. */
struct nopsd	*nopsd_env;
int		 nopsd_reload(const char *);
void		 nopsd_set_verbose(int);

int
nopsd_reload(const char *who)
{
	return -1;
}

void
nopsd_set_verbose(int v)
{
}

#define KEY_A	"AAAAC3NzaC1lZDI1NTE5AAAAIH0LBblPa0krpaXa2GJz"	\
		"bxsegHHnkibQsGIe6j02oNtS"
#define KEY_B	"AAAAC3NzaC1lZDI1NTE5AAAAIIVdKLu5S7U/Mwhc8yOJ"	\
		"GtNqc7f8I/x1XimT8sXcQAdI"

static size_t
unb64(const char *s, unsigned char *out)
{
	int	 n = EVP_DecodeBlock(out, (const unsigned char *)s,
		    (int)strlen(s));

	return n < 0 ? 0 : (size_t)n;
}

/* 0 if known accepts KEY_A for host:port, else -1; why gets the reason. */
static int
kh(const char *known, const char *host, int port, char *why, size_t len)
{
	unsigned char	 key[128];
	size_t		 keylen = unb64(KEY_A, key);

	why[0] = '\0';
	return git_known_hosts_check(known, strlen(known), host, port, key,
	    keylen, why, len);
}

/* A HashKnownHosts entry for name, with a fixed salt. */
static void
hashed(const char *name, char *out, size_t len)
{
	unsigned char	 salt[20], mac[20];
	unsigned char	 s64[64], m64[64];
	unsigned int	 maclen;

	memset(salt, 0x5a, sizeof(salt));
	HMAC(EVP_sha1(), salt, sizeof(salt), (const unsigned char *)name,
	    strlen(name), mac, &maclen);
	EVP_EncodeBlock(s64, salt, sizeof(salt));
	EVP_EncodeBlock(m64, mac, sizeof(mac));
	snprintf(out, len, "|1|%s|%s ssh-ed25519 %s\n", s64, m64, KEY_A);
}

int
main(void)
{
	char		 why[512], buf[1024];
	const char	*w;

	TEST_BEGIN("repo_check_path: good paths");
	CHECK(repo_check_path("nomad/web.nomad.hcl", "nomad",
	    GITW_FILE_JOB) == NULL);
	CHECK(repo_check_path("nomad/a/b/db.nomad", "nomad",
	    GITW_FILE_JOB) == NULL);
	CHECK(repo_check_path("web.nomad.hcl", "", GITW_FILE_JOB) == NULL);
	CHECK(repo_check_path("nomad/web.vars.hcl", "nomad",
	    GITW_FILE_VARS) == NULL);
	CHECK(repo_check_path("nomad/nops.plan.json", "nomad",
	    GITW_FILE_PLAN) == NULL);
	CHECK(repo_check_path("nops.plan.json", "", GITW_FILE_PLAN) == NULL);
	CHECK(repo_check_path("nix/nops.plan.nix", "nix",
	    GITW_FILE_PLAN_NIX) == NULL);
	CHECK(repo_check_path("nix/hosts/a.nix", "nix", GITW_FILE_NIX) ==
	    NULL);
	CHECK(repo_check_path("nomad/s/a.schema.json", "nomad",
	    GITW_FILE_SCHEMA) == NULL);
	CHECK(repo_check_path("nomad/a.json", "nomad", GITW_FILE_SCHEMA) !=
	    NULL);
	CHECK(repo_check_path("nomad/.schema.json", "nomad",
	    GITW_FILE_SCHEMA) != NULL);
	CHECK(repo_check_path("nomad/a link", "nomad", 0) == NULL);
	CHECK(repo_check_path("nomad/é.nomad", "nomad", GITW_FILE_JOB) ==
	    NULL);
	TEST_END();

	TEST_BEGIN("repo_check_path: outside the path, absolute, dot parts");
	CHECK(repo_check_path("other/web.nomad.hcl", "nomad",
	    GITW_FILE_JOB) != NULL);
	CHECK(repo_check_path("nomadic/web.nomad.hcl", "nomad",
	    GITW_FILE_JOB) != NULL);
	CHECK(repo_check_path("/nomad/web.nomad.hcl", "nomad",
	    GITW_FILE_JOB) != NULL);
	CHECK(repo_check_path("/etc/x.nomad", "", GITW_FILE_JOB) != NULL);
	CHECK(repo_check_path("nomad/../x.nomad", "nomad",
	    GITW_FILE_JOB) != NULL);
	CHECK(repo_check_path("nomad/./x.nomad", "nomad",
	    GITW_FILE_JOB) != NULL);
	CHECK(repo_check_path("nomad//x.nomad", "nomad",
	    GITW_FILE_JOB) != NULL);
	CHECK(repo_check_path("nomad/..", "nomad", 0) != NULL);
	CHECK(repo_check_path("nomad/x/", "nomad", 0) != NULL);
	CHECK(repo_check_path("", "", 0) != NULL);
	CHECK(repo_check_path("nomad", "nomad", 0) != NULL);
	TEST_END();

	TEST_BEGIN("repo_check_path: names must match the kind");
	CHECK(repo_check_path("nomad/web.hcl", "nomad", GITW_FILE_JOB) !=
	    NULL);
	CHECK(repo_check_path("nomad/.nomad", "nomad", GITW_FILE_JOB) !=
	    NULL);
	CHECK(repo_check_path("nomad/web.nomad.hcl", "nomad",
	    GITW_FILE_VARS) != NULL);
	CHECK(repo_check_path("nomad/sub/nops.plan.json", "nomad",
	    GITW_FILE_PLAN) != NULL);
	CHECK(repo_check_path("nix/sub/nops.plan.nix", "nix",
	    GITW_FILE_PLAN_NIX) != NULL);
	CHECK(repo_check_path("nix/nops.plan.json", "nix",
	    GITW_FILE_PLAN_NIX) != NULL);
	CHECK(repo_check_path("nix/a.nix.txt", "nix", GITW_FILE_NIX) != NULL);
	CHECK(repo_check_path("nix/.nix", "nix", GITW_FILE_NIX) != NULL);
	CHECK(repo_check_path("nomad/web.nomad.hcl", "nomad", 9) != NULL);
	TEST_END();

	TEST_BEGIN("repo_check_path: control characters, bad UTF-8");
	CHECK(repo_check_path("nomad/a\tb.nomad", "nomad", GITW_FILE_JOB) !=
	    NULL);
	CHECK(repo_check_path("nomad/a\nb.nomad", "nomad", GITW_FILE_JOB) !=
	    NULL);
	CHECK(repo_check_path("nomad/a\x7f.nomad", "nomad", GITW_FILE_JOB) !=
	    NULL);
	CHECK(repo_check_path("nomad/\xff.nomad", "nomad", GITW_FILE_JOB) !=
	    NULL);
	CHECK(repo_check_path("nomad/\xc0\xaf.nomad", "nomad",
	    GITW_FILE_JOB) != NULL);
	CHECK(repo_check_path("nomad/\xed\xa0\x80.nomad", "nomad",
	    GITW_FILE_JOB) != NULL);
	TEST_END();

	TEST_BEGIN("git_name_ok");
	CHECK(git_name_ok("web.nomad.hcl", &w));
	CHECK(git_name_ok("..x", &w));
	CHECK(!git_name_ok("..", &w) && strstr(w, "\"..\"") != NULL);
	CHECK(!git_name_ok(".", &w));
	CHECK(!git_name_ok("", &w));
	CHECK(!git_name_ok("a/b", &w) && strstr(w, "slash") != NULL);
	CHECK(!git_name_ok("a\tb", &w) && strstr(w, "control") != NULL);
	CHECK(!git_name_ok("a\xff", &w) && strstr(w, "UTF-8") != NULL);
	TEST_END();

	TEST_BEGIN("known_hosts: a plain entry, port 22");
	snprintf(buf, sizeof(buf), "# comment\n\ngit.example ssh-ed25519 %s "
	    "c\n", KEY_A);
	CHECK(kh(buf, "git.example", 22, why, sizeof(why)) == 0);
	CHECK(kh(buf, "GIT.example", 22, why, sizeof(why)) == 0);
	CHECK(kh(buf, "other.example", 22, why, sizeof(why)) == -1 &&
	    strstr(why, "no known-hosts entry for other.example") != NULL);
	CHECK(kh(buf, "git.example", 2222, why, sizeof(why)) == -1);
	TEST_END();

	TEST_BEGIN("known_hosts: [host]:port is literal, not a glob");
	snprintf(buf, sizeof(buf), "[127.0.0.1]:2222 ssh-ed25519 %s\n",
	    KEY_A);
	CHECK(kh(buf, "127.0.0.1", 2222, why, sizeof(why)) == 0);
	CHECK(kh(buf, "127.0.0.1", 22, why, sizeof(why)) == -1);
	CHECK(kh(buf, "1", 2222, why, sizeof(why)) == -1);
	TEST_END();

	TEST_BEGIN("known_hosts: a different key is a mismatch, named");
	snprintf(buf, sizeof(buf), "git.example ssh-ed25519 %s\n", KEY_B);
	CHECK(kh(buf, "git.example", 22, why, sizeof(why)) == -1 &&
	    strstr(why, "does not match") != NULL &&
	    strstr(why, "ssh-ed25519 SHA256:") != NULL);
	snprintf(buf, sizeof(buf), "git.example ssh-ed25519 %s\n"
	    "git.example ssh-ed25519 %s\n", KEY_B, KEY_A);
	CHECK(kh(buf, "git.example", 22, why, sizeof(why)) == 0);
	TEST_END();

	TEST_BEGIN("known_hosts: lists, wildcards, negation");
	snprintf(buf, sizeof(buf), "a.example,*.git.example,!bad.git.example "
	    "ssh-ed25519 %s\n", KEY_A);
	CHECK(kh(buf, "a.example", 22, why, sizeof(why)) == 0);
	CHECK(kh(buf, "x.git.example", 22, why, sizeof(why)) == 0);
	CHECK(kh(buf, "bad.git.example", 22, why, sizeof(why)) == -1);
	CHECK(kh(buf, "git.example", 22, why, sizeof(why)) == -1);
	TEST_END();

	TEST_BEGIN("known_hosts: hashed entries");
	hashed("[10.0.0.1]:2200", buf, sizeof(buf));
	CHECK(kh(buf, "10.0.0.1", 2200, why, sizeof(why)) == 0);
	CHECK(kh(buf, "10.0.0.2", 2200, why, sizeof(why)) == -1);
	TEST_END();

	TEST_BEGIN("known_hosts: @revoked wins, @cert-authority is ignored");
	snprintf(buf, sizeof(buf), "git.example ssh-ed25519 %s\n"
	    "@revoked * ssh-ed25519 %s\n", KEY_A, KEY_A);
	CHECK(kh(buf, "git.example", 22, why, sizeof(why)) == -1 &&
	    strstr(why, "revoked") != NULL);
	snprintf(buf, sizeof(buf), "@cert-authority * ssh-ed25519 %s\n",
	    KEY_A);
	CHECK(kh(buf, "git.example", 22, why, sizeof(why)) == -1);
	TEST_END();

	TEST_BEGIN("known_hosts: garbage lines are skipped");
	snprintf(buf, sizeof(buf), "git.example\ngit.example ssh-ed25519\n"
	    "git.example ssh-ed25519 !!!notbase64\n"
	    "git.example ssh-ed25519 %s\n", KEY_A);
	CHECK(kh(buf, "git.example", 22, why, sizeof(why)) == 0);
	CHECK(git_known_hosts_check(NULL, 0, "h", 22,
	    (const unsigned char *)"x", 1, why, sizeof(why)) == -1);
	TEST_END();

	TEST_BEGIN("git_url_port");
	CHECK(git_url_port("ssh://git@h.example:2222/x.git") == 2222);
	CHECK(git_url_port("ssh://h.example/x.git") == 22);
	CHECK(git_url_port("ssh://git@[::1]:2200/x.git") == 2200);
	CHECK(git_url_port("git@h.example:x.git") == 22);
	CHECK(git_url_port("ssh://h.example:99999/x") == 22);
	TEST_END();

	TEST_EXIT();
}
