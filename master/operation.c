/*
 * Operations.  Not built yet: no revision declares any, so every
 * <job>.<operation> is refused as the revision not doing operations
 * (invalid_configuration), and no job lists one.
 */
#include "config.h"

#include <sys/types.h>
#include <stdint.h>

#include <jansson.h>

#include "conf.h"
#include "api.h"
#include "action.h"
#include "operation.h"

void
operation_conditions(struct action_ctx *ac)
{
	(void)ac;
}

void
operation_list(struct action_ctx *ac, const struct action_def *ad,
    json_t *list)
{
	(void)ac;
	(void)ad;
	(void)list;
}

void
operation_action(struct action_ctx *ac, json_t *input, struct api_resp *resp)
{
	api_error(resp, 422, "invalid_configuration", "job %s/%s: its "
	    "deployed revision declares no operations", ac->ac_ns, ac->ac_job);
}
