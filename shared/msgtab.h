/*
 * A message's payload as its row's decoder leaves it (NOPS_IMSGS in
 * nops.h).  The dispatch (the master's supervise_dispatch(), the workers'
 * proc_worker_handle()) decodes each message once, with imsg_decode(),
 * and hands the result to the row's handler, which reads the member its
 * row names: a handler never decodes its imsg again.
 */
#ifndef NOPS_MSGTAB_H
#define NOPS_MSGTAB_H

#include "msg.h"
#include "nops.h"
#include "wire.h"
#include "wire_auth.h"
#include "wire_git.h"
#include "wire_hosts.h"
#include "wire_nomad.h"
#include "wire_notify.h"
#include "wire_proc.h"

/*
 * Every payload layout of shared/wire*.h: struct wire_L, its table
 * wire_layout_L, wire_put_L(), wire_get_L().  The payload column of
 * NOPS_IMSGS names one of these.
 */
#define WIRE_LAYOUTS(X)							\
	X(web_request) X(web_answer) X(web_doc) X(web_want)		\
	X(git_repo) X(git_poll) X(git_unchanged) X(git_error)		\
	X(git_begin) X(git_file) X(git_data) X(git_note) X(git_end)	\
	X(nomad_config) X(nomad_request) X(nomad_response)		\
	X(nomad_body) X(notify) X(notify_result) X(auth_begin)		\
	X(auth_class) X(auth_principal) X(auth_forget) X(empty)	\
	X(init) X(verbose) X(web_listen) X(web_seen) X(ssh_key)		\
	X(ssh_run) X(ssh_result) X(http_probe) X(http_probe_result)	\
	X(git_same)

/* One member per layout, named after it: u->git_poll, u->web_request. */
#define WIRE_PAYLOAD_MEMBER(layout)	struct wire_##layout layout;
union imsg_payload {
	WIRE_LAYOUTS(WIRE_PAYLOAD_MEMBER)
};

#endif /* NOPS_MSGTAB_H */
