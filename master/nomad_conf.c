/*
 * What the master tells the nomadworker about Nomad: the address, the
 * namespaces, and the token and CA files' contents, which the master
 * reads as root (at start and at each reload) because the worker cannot.
 * The token is a secret: every copy made here is wiped.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "xmalloc.h"
#include "imsg.h"
#include "msg.h"
#include "nops.h"
#include "proc.h"
#include "conf.h"
#include "master.h"
#include "nomad.h"
#include "engine.h"
#include "wire_nomad.h"
#include "cfile.h"

/* What the master sends the nomadworker, read from the config as root. */
struct nomad_settings {
	char		*ns_address;	/* NULL: no nomad block */
	char		*ns_token;	/* secret */
	size_t		 ns_tokenlen;
	char		*ns_ca;
	size_t		 ns_calen;
	char		**ns_names;
	size_t		 ns_nnames;
	char		 ns_error[256];	/* why calls fail, or "" */
};

static struct nomad_settings	 nomad_set;

static void
nomad_settings_free(struct nomad_settings *s)
{
	size_t	 i;

	free(s->ns_address);
	cfile_free(s->ns_token, s->ns_tokenlen);
	free(s->ns_ca);
	for (i = 0; i < s->ns_nnames; i++)
		free(s->ns_names[i]);
	free(s->ns_names);
	memset(s, 0, sizeof(*s));
}

/*
 * The token file holds the token (a secret file: a final newline is not
 * part of it), visible ASCII characters.
 */
static int
nomad_load_token(const char *path, struct nomad_settings *s)
{
	char	*buf;
	size_t	 len, i;

	if (cfile_read(path, NOMAD_TOKEN_MAX, CFILE_SECRET, &buf, &len,
	    s->ns_error, sizeof(s->ns_error)) == -1)
		return -1;
	for (i = 0; i < len; i++)
		if ((unsigned char)buf[i] <= 0x20 ||
		    (unsigned char)buf[i] >= 0x7f)
			break;
	if (i != len) {
		/* Never quote the content: it is a secret. */
		snprintf(s->ns_error, sizeof(s->ns_error), "%s: the token "
		    "must be one line of visible ASCII characters", path);
		cfile_free(buf, len);
		return -1;
	}
	s->ns_token = buf;
	s->ns_tokenlen = len;
	return 0;
}

static int
nomad_load_ca(const char *path, struct nomad_settings *s)
{
	char	*buf;
	size_t	 len;

	if (cfile_read(path, NOMAD_CA_MAX, 0, &buf, &len, s->ns_error,
	    sizeof(s->ns_error)) == -1)
		return -1;
	if (strstr(buf, "-----BEGIN CERTIFICATE-----") == NULL) {
		snprintf(s->ns_error, sizeof(s->ns_error), "%s: no PEM "
		    "certificate in it", path);
		free(buf);
		return -1;
	}
	s->ns_ca = buf;
	s->ns_calen = len;
	return 0;
}

static void
nomad_send_config(struct worker *w)
{
	struct msgw			 m;
	struct wire_nomad_config	 c;
	size_t				 i;
	int				 usable =
	    nomad_set.ns_error[0] == '\0' && nomad_set.ns_address != NULL;

	memset(&c, 0, sizeof(c));
	c.address = usable ? nomad_set.ns_address : "";
	c.ca = usable ? nomad_set.ns_ca : NULL;
	c.calen = usable ? nomad_set.ns_calen : 0;
	for (i = 0; i < nomad_set.ns_nnames && i < NOMAD_NAMESPACES_MAX; i++)
		c.names[c.nnames++] = nomad_set.ns_names[i];
	c.token = usable ? nomad_set.ns_token : NULL;
	c.tokenlen = usable ? nomad_set.ns_tokenlen : 0;
	msg_init(&m);
	wire_put_nomad_config(&m, &c);
	if (m.err)
		fatalx("%s: out of memory", imsg_to_str(IMSG_NOMAD_CONFIG));
	if (imsgev_compose(&w->w_iev, IMSG_NOMAD_CONFIG, 0, -1, m.buf,
	    m.len) == -1)
		log_warn("%s to %s", imsg_to_str(IMSG_NOMAD_CONFIG),
		    w->w_title);
	freezero(m.buf, m.size);
	memset(&m, 0, sizeof(m));
}

/*
 * Take the nomad block of a (new) config: read the token and CA files
 * now, as root, and hand everything to the nomadworker.  A file that
 * cannot be read leaves Nomad unusable, with the reason in every call's
 * error, until the next reload.  Returns 0, or -1 if so.
 */
void
nomad_worker_started(struct worker *w)
{
	nomad_send_config(w);
	/* The blocking queries of event-driven drift (engine_watch.c). */
	watch_configure();
}

/* Why calls cannot be made now, or NULL. */
const char *
nomad_conf_error(void)
{
	return nomad_set.ns_error[0] != '\0' ? nomad_set.ns_error : NULL;
}

/* The namespace of a call that names none: the first configured. */
const char *
nomad_conf_namespace(void)
{
	return nomad_set.ns_nnames > 0 ? nomad_set.ns_names[0] : NULL;
}

void
nomad_conf_clear(void)
{
	nomad_settings_free(&nomad_set);
}

int
nomad_configure(const struct nops_conf *conf)
{
	struct nomad_settings	 s;
	struct conf_str		*cs;
	struct worker		*w;
	size_t			 n = 0;

	memset(&s, 0, sizeof(s));
	if (conf->nomad.address == NULL)
		strlcpy(s.ns_error, "Nomad is not configured (no nomad block)",
		    sizeof(s.ns_error));
	else
		s.ns_address = xstrdup(conf->nomad.address);
	if (s.ns_address != NULL && conf->nomad.token_file != NULL)
		nomad_load_token(conf->nomad.token_file, &s);
	if (s.ns_address != NULL && s.ns_error[0] == '\0' &&
	    conf->nomad.ca_file != NULL)
		nomad_load_ca(conf->nomad.ca_file, &s);

	TAILQ_FOREACH(cs, &conf->nomad.namespaces, entry)
		n++;
	/* More than the nomadworker takes (IMSG_NOMAD_CONFIG). */
	if (n > NOMAD_NAMESPACES_MAX && s.ns_error[0] == '\0')
		snprintf(s.ns_error, sizeof(s.ns_error), "more than %d "
		    "namespaces", NOMAD_NAMESPACES_MAX);
	if (n == 0) {
		if ((s.ns_names = calloc(1, sizeof(char *))) == NULL)
			fatal("calloc");
		s.ns_names[0] = xstrdup("default");
		s.ns_nnames = 1;
	} else {
		if ((s.ns_names = calloc(n, sizeof(char *))) == NULL)
			fatal("calloc");
		TAILQ_FOREACH(cs, &conf->nomad.namespaces, entry)
			s.ns_names[s.ns_nnames++] = xstrdup(cs->str);
	}
	if (s.ns_error[0] != '\0' && s.ns_address != NULL)
		log_warnx("nomad: %s; calls to Nomad fail until this is "
		    "fixed and the configuration reloaded", s.ns_error);

	/* Another cluster may parse differently. */
	if (nomad_set.ns_address == NULL || s.ns_address == NULL ||
	    strcmp(nomad_set.ns_address, s.ns_address) != 0)
		nomad_parse_cache_flush();
	nomad_settings_free(&nomad_set);
	nomad_set = s;

	w = supervise_worker(PROC_NOMADWORKER);
	if (w != NULL && w->w_running)
		nomad_send_config(w);
	return nomad_set.ns_error[0] == '\0' ? 0 : -1;
}
