/*
 * What the message table (NOPS_IMSGS in nops.h) says of each type: its
 * name for the log, who may send it to whom, and its payload's layout
 * (wire.h), which decodes it into union imsg_payload (msgtab.h); and the
 * names of the operations IMSG_NOMAD_REQUEST carries.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "msg.h"
#include "msgtab.h"
#include "nops.h"

struct imsg_row {
	const char		*name;
	uint32_t		 from;		/* IMSG_P_* */
	uint32_t		 to;
	const struct wire_layout *layout;	/* its payload's */
};

#define IMSG_TABLE_ROW(type, f, t, payload, handler)			\
	[type] = { #type, IMSG_P_##f, IMSG_P_##t, &wire_layout_##payload },
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
imsg_decode(uint32_t type, const void *buf, size_t len,
    union imsg_payload *u, const char **what)
{
	const struct wire_layout	*l;
	struct msgr			 r;

	*what = NULL;
	if (type >= IMSG_MAX || (l = imsg_rows[type].layout) == NULL) {
		*what = "no such message type";
		return -1;
	}
	/*
	 * The layout's struct is the union's member of its name, at the
	 * start; only the member is cleared: IMSG_WEB_SEEN's is large.
	 */
	memset(u, 0, l->wl_size);
	msg_reader_buf(&r, buf, len);
	if (wire_get(&r, l, u) == -1) {
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
