/*
 * Notifications of deployments (notify blocks of nops.conf): the master
 * decides when and builds each request; the nomadworker, which alone has
 * outbound network besides the gitworker, sends it once.
 */
#ifndef NOPS_NOTIFY_H
#define NOPS_NOTIFY_H

#include <stdint.h>

#include "deploy.h"

struct nops_conf;
struct worker;
struct imsg;
union imsg_payload;
struct metrics_out;

/* Read the notifiers' token files (as root): start and reload. */
void	 notify_configure(const struct nops_conf *);

/*
 * A deployment entered state to (after its transaction committed).
 * Notifies for pending_approval, failed, awaiting_promotion, and for
 * completed when the job's meta has nops_notify_completed = "true" and
 * the deployment was applied; other states are ignored.
 */
void	 notify_deployment(int64_t id, enum deploy_state to);

/* IMSG_NOTIFY_RESULT from the nomadworker. */
void	 notify_result(struct worker *, struct imsg *,
	    const union imsg_payload *);

/* Sent and failed counters for /metrics. */
void	 notify_metrics(struct metrics_out *);

#endif /* NOPS_NOTIFY_H */
