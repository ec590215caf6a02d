/*
 * gitworker: the only process that talks to git remotes.  It starts as
 * root just long enough to initialise libgit2 (TLS randomness, CA file),
 * then drops to the unprivileged user, confines its filesystem to its
 * cache and installs its syscall filter before it serves the master.
 */
#include "config.h"

#include <sys/types.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>
#include <git2.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "proc.h"
#include "sandbox.h"
#include "gitworker.h"

static struct imsgev	 git_iev;

static void
git_dispatch_master_msg(struct imsg *imsg, void *arg)
{
	fatalx("gitworker: unexpected %s from the master",
	    imsg_to_str(imsg->hdr.type));
}

static void
git_dispatch_master(int fd, short event, void *arg)
{
	proc_worker_read(&git_iev, event, git_dispatch_master_msg, NULL);
}

void
gitworker_main(int debug, int verbose)
{
	struct worker_init	 wi;
	struct event_base	*base;
	char			 cachedir[1024];

	log_init(debug, LOG_DAEMON);
	log_setverbose(verbose);
	log_procinit("gitworker");

	if (imsgbuf_init(&git_iev.ibuf, PROC_CHILD_FD, 0, 0) == -1)
		fatal("imsgbuf_init");
	proc_worker_init("gitworker", &git_iev.ibuf, &wi);

	if (git_libgit2_init() < 0)
		fatalx("git_libgit2_init failed");
	if ((size_t)snprintf(cachedir, sizeof(cachedir), "%s/git",
	    wi.wi_statedir) >= sizeof(cachedir))
		fatalx("state directory path too long");

	sandbox_drop("gitworker", NULL, wi.wi_uid, wi.wi_gid);
	gitworker_sandbox_fs(cachedir);
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	imsgev_attach(&git_iev, base, "gitworker", git_dispatch_master, NULL);
	gitworker_sandbox_syscalls();

	imsgev_compose(&git_iev, IMSG_WORKER_READY, 0, -1, NULL, 0);
#ifdef NOPS_TEST_HOOKS
	proc_worker_testhooks(&wi, &git_iev);
#endif
	log_debug("ready, cache %s", cachedir);
	/* Messages that arrived with IMSG_INIT are handled first. */
	git_dispatch_master(PROC_CHILD_FD, 0, NULL);
	event_base_dispatch(base);
	exit(0);
}
