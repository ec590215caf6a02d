/*
 * What the message table (NOPS_IMSGS in nops.h) says of each type: its
 * name for the log, who may send it to whom, and its payload's decoder;
 * and the names of the operations IMSG_NOMAD_REQUEST carries.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "msg.h"
#include "nops.h"
#include "wire.h"
#include "wire_auth.h"
#include "wire_git.h"
#include "wire_hosts.h"
#include "wire_nomad.h"
#include "wire_notify.h"
#include "wire_proc.h"

/* Run a layout's decoder on a payload: wire_check_<layout>(). */
#define WIRE_CHECK(layout)						\
static int								\
wire_check_##layout(struct msgr *r)					\
{									\
	struct wire_##layout	 p;					\
									\
	memset(&p, 0, sizeof(p));					\
	return wire_get_##layout(r, &p);				\
}
WIRE_CHECK(empty)
WIRE_CHECK(web_request)
WIRE_CHECK(web_answer)
WIRE_CHECK(web_doc)
WIRE_CHECK(web_want)
WIRE_CHECK(auth_begin)
WIRE_CHECK(auth_class)
WIRE_CHECK(auth_principal)
WIRE_CHECK(auth_forget)
WIRE_CHECK(nomad_config)
WIRE_CHECK(nomad_request)
WIRE_CHECK(nomad_response)
WIRE_CHECK(nomad_body)
WIRE_CHECK(notify)
WIRE_CHECK(notify_result)
WIRE_CHECK(git_repo)
WIRE_CHECK(git_poll)
WIRE_CHECK(git_unchanged)
WIRE_CHECK(git_error)
WIRE_CHECK(git_begin)
WIRE_CHECK(git_file)
WIRE_CHECK(git_data)
WIRE_CHECK(git_same)
WIRE_CHECK(git_note)
WIRE_CHECK(git_end)
WIRE_CHECK(init)
WIRE_CHECK(verbose)
WIRE_CHECK(web_listen)
WIRE_CHECK(ssh_key)
WIRE_CHECK(ssh_run)
WIRE_CHECK(ssh_result)
WIRE_CHECK(http_probe)
WIRE_CHECK(http_probe_result)

/* IMSG_WEB_SEEN's layout is large (4096 entries): not on the stack. */
static int
wire_check_web_seen(struct msgr *r)
{
	static struct wire_web_seen	 p;

	memset(&p, 0, sizeof(p));
	return wire_get_web_seen(r, &p);
}

struct imsg_row {
	const char	*name;
	uint32_t	 from;		/* IMSG_P_* */
	uint32_t	 to;
	int		(*check)(struct msgr *);
};

#define IMSG_TABLE_ROW(type, f, t, payload, handler)			\
	[type] = { #type, IMSG_P_##f, IMSG_P_##t, wire_check_##payload },
static const struct imsg_row imsg_rows[IMSG_MAX] = {
	[IMSG_NONE] = { "IMSG_NONE", 0, 0, NULL },
	NOPS_IMSGS(IMSG_TABLE_ROW)
};

const char *
imsg_to_str(uint32_t type)
{
	static char	 buf[32];

	if (type < IMSG_MAX && imsg_rows[type].name != NULL)
		return imsg_rows[type].name;
	snprintf(buf, sizeof(buf), "IMSG_%u", type);
	return buf;
}

int
imsg_permitted(uint32_t type, enum nops_proc from, enum nops_proc to)
{
	if (type >= IMSG_MAX || from >= PROC_MAX || to >= PROC_MAX)
		return 0;
	return (imsg_rows[type].from & (1U << from)) != 0 &&
	    (imsg_rows[type].to & (1U << to)) != 0;
}

int
imsg_check_payload(uint32_t type, const void *buf, size_t len,
    const char **what)
{
	struct msgr	 r;

	*what = NULL;
	if (type >= IMSG_MAX || imsg_rows[type].check == NULL)
		return 1;
	msg_reader_buf(&r, buf, len);
	if (imsg_rows[type].check(&r) == -1) {
		*what = r.what != NULL ? r.what : "trailing bytes";
		return -1;
	}
	return 0;
}

static const char *const nomad_op_names[NOMAD_OP_MAX] = {
	[NOMAD_OP_NONE] = "none",
	[NOMAD_OP_PARSE] = "parse",
	[NOMAD_OP_PLAN] = "plan",
	[NOMAD_OP_REGISTER] = "register",
	[NOMAD_OP_JOB_READ] = "job-read",
	[NOMAD_OP_JOB_ALLOCATIONS] = "job-allocations",
	[NOMAD_OP_JOB_DEPLOYMENT] = "job-deployment",
	[NOMAD_OP_DEPLOYMENT_READ] = "deployment-read",
	[NOMAD_OP_DEPLOYMENT_PROMOTE] = "deployment-promote",
	[NOMAD_OP_DISPATCH] = "dispatch",
	[NOMAD_OP_ALLOC_LOGS] = "alloc-logs",
	[NOMAD_OP_JOB_STOP] = "job-stop",
	[NOMAD_OP_JOBS_LIST] = "jobs-list",
	[NOMAD_OP_DEPLOYMENTS_LIST] = "deployments-list",
	[NOMAD_OP_STATUS_LEADER] = "status-leader",
	[NOMAD_OP_AGENT_SELF] = "agent-self",
};

const char *
nomad_op_name(uint32_t op)
{
	if (op < NOMAD_OP_MAX && nomad_op_names[op] != NULL)
		return nomad_op_names[op];
	return "unknown";
}
