/*
 * The process table: one row per process of nopsd, the master's first,
 * read by the runtime that confines every one of them (proc_run(),
 * shared/proc.c).  A row
 * says whether the process is chrooted, its sandbox profile (Landlock
 * paths and system calls, in its *_sandbox.c), its channel to the master
 * and the steps it runs: privileged set-up, event loop, service.
 */
#include "config.h"

#include <sys/types.h>
#include <string.h>

#include "log.h"
#include "imsg.h"
#include "nops.h"
#include "proc.h"
#include "sandbox.h"
#include "gitworker.h"
#include "nomadworker.h"
#include "webworker.h"
#include "nopsd_sandbox.h"
#include "master.h"

/*
 * Alike on purpose: one row per process (the model is relayd's
 * privsep_proc table), each the shape of the others.
 */
const struct proc_def procs[PROC_MAX] = {
	[PROC_MASTER] = {
		.pd_title = "nopsd",
		.pd_id = PROC_MASTER,
		.pd_chroot = 0,		/* owns the database and config */
		.pd_iev = NULL,		/* the others' channels are its */
		.pd_profile = &nopsd_profile,
		.pd_init = nopsd_init,	/* as root; before any worker */
		.pd_loop = NULL,	/* its event base is made as root */
		.pd_run = nopsd_run,	/* starts the workers, then serves */
	},
	[PROC_GITWORKER] = {
		.pd_title = "gitworker",
		.pd_id = PROC_GITWORKER,
		.pd_chroot = 0,		/* libgit2 needs CAs, DNS, its cache */
		.pd_iev = &git_iev,
		.pd_imsgflags = 0,
		.pd_maxmsg = GITWORKER_MSG_MAX,
		.pd_profile = &gitworker_profile,
		.pd_init = gitworker_init,
		.pd_loop = gitworker_loop,
		.pd_run = gitworker_run,
	},
	[PROC_NOMADWORKER] = {
		.pd_title = "nomadworker",
		.pd_id = PROC_NOMADWORKER,
		.pd_chroot = 0,		/* libcurl needs CAs and DNS */
		.pd_iev = &nomad_iev,
		.pd_imsgflags = IMSGF_PASSFD,	/* SSH stdin streams */
		.pd_maxmsg = NOMAD_MSG_MAX,
		.pd_profile = &nomadworker_profile,
		.pd_init = nomadworker_init,
		.pd_loop = nomadworker_loop,
		.pd_run = nomadworker_run,
	},
	[PROC_WEBWORKER] = {
		.pd_title = "webworker",
		.pd_id = PROC_WEBWORKER,
		.pd_chroot = 1,		/* needs no file at all */
		.pd_iev = &web_iev,
		.pd_imsgflags = IMSGF_PASSFD,	/* receives its listeners */
		.pd_maxmsg = WEBWORKER_MSG_MAX,
		.pd_profile = &webworker_profile,
		.pd_init = webworker_init,
		.pd_loop = webworker_loop,
		.pd_run = webworker_run,
	},
};

const struct proc_def *
proc_find(const char *title)
{
	int	 i;

	for (i = 0; i < PROC_MAX; i++)
		if (procs[i].pd_title != NULL &&
		    strcmp(procs[i].pd_title, title) == 0)
			return &procs[i];
	return NULL;
}
