/*
 * libFuzzer target: the payload decoders of shared/wire*.c.  The first
 * byte picks a layout, the rest is its payload.  Invariants (abort on
 * violation): a payload that decodes re-encodes to the same bytes; one
 * that does not says what failed.
 */
/* FUZZ-SOURCES: shared/wire.c shared/msg.c shared/imsg.c shared/log.c */
/* FUZZ-SOURCES: shared/wire_git.c shared/wire_nomad.c */
/* FUZZ-SOURCES: shared/wire_notify.c shared/wire_auth.c */
/* FUZZ-SOURCES: shared/wire_proc.c shared/wire_hosts.c */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "wire.h"
#include "wire_auth.h"
#include "wire_git.h"
#include "wire_hosts.h"
#include "wire_nomad.h"
#include "wire_notify.h"
#include "wire_proc.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct layout {
	int	(*get)(struct msgr *, void *);
	void	(*put)(struct msgw *, const void *);
};

#define LAYOUT(name)							\
static int								\
get_##name(struct msgr *r, void *p)					\
{									\
	return wire_get_##name(r, p);					\
}									\
static void								\
put_##name(struct msgw *m, const void *p)				\
{									\
	wire_put_##name(m, p);						\
}
#define ROW(name)	{ get_##name, put_##name }

/* Every layout of wire.h: one LAYOUT() and one ROW() each. */
LAYOUT(web_request)
LAYOUT(web_answer)
LAYOUT(web_doc)
LAYOUT(web_want)
LAYOUT(git_repo)
LAYOUT(git_poll)
LAYOUT(git_unchanged)
LAYOUT(git_error)
LAYOUT(git_begin)
LAYOUT(git_file)
LAYOUT(git_data)
LAYOUT(git_note)
LAYOUT(git_end)
LAYOUT(nomad_config)
LAYOUT(nomad_request)
LAYOUT(nomad_response)
LAYOUT(nomad_body)
LAYOUT(notify)
LAYOUT(notify_result)
LAYOUT(auth_begin)
LAYOUT(auth_class)
LAYOUT(auth_principal)
LAYOUT(auth_forget)
LAYOUT(empty)
LAYOUT(init)
LAYOUT(verbose)
LAYOUT(web_listen)
LAYOUT(web_seen)
LAYOUT(ssh_key)
LAYOUT(ssh_run)
LAYOUT(ssh_result)
LAYOUT(http_probe)
LAYOUT(http_probe_result)

static const struct layout layouts[] = {
	ROW(web_request),
	ROW(web_answer),
	ROW(web_doc),
	ROW(web_want),
	ROW(git_repo),
	ROW(git_poll),
	ROW(git_unchanged),
	ROW(git_error),
	ROW(git_begin),
	ROW(git_file),
	ROW(git_data),
	ROW(git_note),
	ROW(git_end),
	ROW(nomad_config),
	ROW(nomad_request),
	ROW(nomad_response),
	ROW(nomad_body),
	ROW(notify),
	ROW(notify_result),
	ROW(auth_begin),
	ROW(auth_class),
	ROW(auth_principal),
	ROW(auth_forget),
	ROW(empty),
	ROW(init),
	ROW(verbose),
	ROW(web_listen),
	ROW(web_seen),
	ROW(ssh_key),
	ROW(ssh_run),
	ROW(ssh_result),
	ROW(http_probe),
	ROW(http_probe_result),
};

/* Large enough for any wire_* struct. */
union wire_any {
	struct wire_web_request	 request;
	struct wire_web_answer	 answer;
	struct wire_web_doc	 doc;
	struct wire_web_want	 want;
	struct wire_git_repo	 git_repo;
	struct wire_git_begin	 git_begin;
	struct wire_git_file	 git_file;
	struct wire_nomad_config nomad_config;
	struct wire_nomad_request nomad_request;
	struct wire_nomad_response nomad_response;
	struct wire_notify	 notify;
	struct wire_auth_principal auth_principal;
	struct wire_init	 init;
	struct wire_web_listen	 web_listen;
	struct wire_web_seen	 web_seen;
	struct wire_ssh_run	 ssh_run;
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static union wire_any	 v;	/* web_seen is large */
	const struct layout	*l;
	struct msgr		 r;
	struct msgw		 w;

	if (size < 1)
		return 0;
	l = &layouts[data[0] % (sizeof(layouts) / sizeof(layouts[0]))];
	data++;
	size--;
	memset(&v, 0, sizeof(v));
	msg_reader_buf(&r, data, size);
	if (l->get(&r, &v) == -1) {
		if (r.err == 0 || r.what == NULL)
			abort();
		return 0;
	}
	if (r.what != NULL)
		abort();
	msg_init(&w);
	l->put(&w, &v);
	/* An empty payload leaves w.buf NULL: nothing to compare. */
	if (w.err || w.len != size ||
	    (size > 0 && memcmp(w.buf, data, size) != 0))
		abort();
	msg_free(&w);
	return 0;
}
