/*
 * nomadworker: the only process that talks to Nomad (and, later, SSH hosts
 * and notification endpoints).  It starts as
 * root just long enough to initialise libcurl and OpenSSL,
 * then drops to the unprivileged user, confines its filesystem to the CA
 * and resolver files and installs its syscall filter.
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
#include <curl/curl.h>

#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "proc.h"
#include "sandbox.h"
#include "nomadworker.h"

static struct imsgev	 nomad_iev;

static void
nomad_dispatch_master_msg(struct imsg *imsg, void *arg)
{
	fatalx("nomadworker: unexpected %s from the master",
	    imsg_to_str(imsg->hdr.type));
}

static void
nomad_dispatch_master(int fd, short event, void *arg)
{
	proc_worker_read(&nomad_iev, event, nomad_dispatch_master_msg, NULL);
}

void
nomadworker_main(int debug, int verbose)
{
	struct worker_init	 wi;
	struct event_base	*base;

	log_init(debug, LOG_DAEMON);
	log_setverbose(verbose);
	log_procinit("nomadworker");

	if (imsgbuf_init(&nomad_iev.ibuf, PROC_CHILD_FD, 0, 0) == -1)
		fatal("imsgbuf_init");
	proc_worker_init("nomadworker", &nomad_iev.ibuf, &wi);

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		fatalx("curl_global_init failed");

	sandbox_drop("nomadworker", NULL, wi.wi_uid, wi.wi_gid);
	nomadworker_sandbox_fs();
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	imsgev_attach(&nomad_iev, base, "nomadworker", nomad_dispatch_master, NULL);
	nomadworker_sandbox_syscalls();

	imsgev_compose(&nomad_iev, IMSG_WORKER_READY, 0, -1, NULL, 0);
#ifdef NOPS_TEST_HOOKS
	proc_worker_testhooks(&wi, &nomad_iev);
#endif
	log_debug("ready");
	/* Messages that arrived with IMSG_INIT are handled first. */
	nomad_dispatch_master(PROC_CHILD_FD, 0, NULL);
	event_base_dispatch(base);
	exit(0);
}
