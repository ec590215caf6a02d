/*
 * Pushed reads (master/webpub.c): the master pushes to the webworker the
 * identities it may serve reads for and the read documents it asked for,
 * and pushes each document again when its answer changes.  The protocol
 * is in shared/nops.h ("Pushed reads").
 */
#ifndef NOPS_WEBPUB_H
#define NOPS_WEBPUB_H

#include <stdint.h>
#include <time.h>

#include "imsg.h"

struct worker;
union imsg_payload;
struct metrics_out;

void	 webpub_init(void);
void	 webpub_shutdown(void);
/*
 * A whole new identity table (the webworker started, the config was
 * reloaded); the webworker drops its documents and asks again.
 */
void	 webpub_reset(void);
/* Something reads show may have changed: push what changed soon. */
void	 webpub_changed(void);
/* The same, for an outcome readers wait for: less spacing. */
void	 webpub_changed_now(void);
/* What is committed until (0) adds to the audit log only (a login). */
void	 webpub_audit_only(int);
/* Push what changed now (before answering a write). */
void	 webpub_flush(void);
/* A session began or a token was made: the webworker learns it now. */
void	 webpub_session_add(const char *hash, const char *user, time_t seen,
	    time_t expires);
void	 webpub_token_add(const char *hash, const char *name,
	    const char *policy, time_t used, time_t expires);
/* A session or token ended (logout, expiry, revocation). */
void	 webpub_forget(const char *hash);
/* Its families of /metrics. */
void	 webpub_metrics(struct metrics_out *);
/* IMSG_WEB_WANT, IMSG_WEB_UNWANT, IMSG_WEB_SEEN from the webworker. */
/* The webworker's IMSG_WEB_WANT, _UNWANT and _SEEN (NOPS_IMSGS). */
void	 webpub_want(struct worker *, struct imsg *,
	    const union imsg_payload *);
void	 webpub_unwant(struct worker *, struct imsg *,
	    const union imsg_payload *);
void	 webpub_seen(struct worker *, struct imsg *,
	    const union imsg_payload *);

#endif /* NOPS_WEBPUB_H */
