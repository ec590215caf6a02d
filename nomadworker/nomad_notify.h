/*
 * Notifications in the nomadworker: send what the master built (one
 * attempt, NOTIFY_TIMEOUT_MS at most) and answer with the outcome.
 */
#ifndef NOPS_NOMAD_NOTIFY_H
#define NOPS_NOMAD_NOTIFY_H

#include <event2/event.h>

struct imsgev;
struct imsg;
union imsg_payload;

void	 nomad_notify_init(struct event_base *, struct imsgev *);
/* IMSG_NOTIFY from the master. */
void	 nomad_notify(struct imsg *, const union imsg_payload *);

#endif /* NOPS_NOMAD_NOTIFY_H */
