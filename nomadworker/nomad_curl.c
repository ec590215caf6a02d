/*
 * libcurl's multi interface on libevent: curl says which sockets to watch
 * and when to call it back; we tell it what happened and hand each ended
 * transfer to its owner.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/time.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "log.h"
#include "nops.h"
#include "nomad_curl.h"

static void
curl_loop_check(struct curl_loop *cl)
{
	CURLMsg		*msg;
	CURLcode	 rc;
	char		*priv;
	int		 left;

	while ((msg = curl_multi_info_read(cl->cl_multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		priv = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
		rc = msg->data.result;	/* msg dies with the handle */
		cl->cl_done(priv, rc);
	}
}

/* Activity on a socket curl asked us to watch. */
static void
curl_loop_event_cb(int fd, short what, void *arg)
{
	struct curl_loop	*cl = arg;
	int			 flags = 0, running;

	if (what & EV_READ)
		flags |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	curl_multi_socket_action(cl->cl_multi, fd, flags, &running);
	curl_loop_check(cl);
}

static void
curl_loop_timer_cb(int fd, short what, void *arg)
{
	struct curl_loop	*cl = arg;
	int			 running;

	curl_multi_socket_action(cl->cl_multi, CURL_SOCKET_TIMEOUT, 0,
	    &running);
	curl_loop_check(cl);
}

/* CURLMOPT_SOCKETFUNCTION: watch (or stop watching) a socket for curl. */
static int
curl_loop_socket_cb(CURL *easy, curl_socket_t s, int what, void *userp,
    void *socketp)
{
	struct curl_loop	*cl = userp;
	struct event		*ev = socketp;
	short			 kind;

	if (what == CURL_POLL_REMOVE) {
		if (ev != NULL) {
			event_free(ev);
			curl_multi_assign(cl->cl_multi, s, NULL);
		}
		return 0;
	}
	kind = EV_PERSIST;
	if (what & CURL_POLL_IN)
		kind |= EV_READ;
	if (what & CURL_POLL_OUT)
		kind |= EV_WRITE;
	if (ev == NULL) {
		if ((ev = event_new(cl->cl_base, s, kind, curl_loop_event_cb,
		    cl)) == NULL)
			fatal("event_new");
		curl_multi_assign(cl->cl_multi, s, ev);
	} else {
		event_del(ev);
		if (event_assign(ev, cl->cl_base, s, kind, curl_loop_event_cb,
		    cl) == -1)
			fatalx("event_assign");
	}
	if (event_add(ev, NULL) == -1)
		fatalx("event_add");
	return 0;
}

/* CURLMOPT_TIMERFUNCTION: curl wants to be called back in ms. */
static int
curl_loop_timer_set_cb(CURLM *multi, long ms, void *userp)
{
	struct curl_loop	*cl = userp;
	struct timeval		 tv;

	if (ms < 0) {
		evtimer_del(cl->cl_timer);
		return 0;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(cl->cl_timer, &tv);
	return 0;
}

void
curl_loop_init(struct curl_loop *cl, struct event_base *base,
    void (*done)(char *, CURLcode))
{
	cl->cl_base = base;
	cl->cl_done = done;
	if ((cl->cl_multi = curl_multi_init()) == NULL)
		fatalx("curl_multi_init");
	if ((cl->cl_timer = evtimer_new(base, curl_loop_timer_cb, cl)) == NULL)
		fatal("evtimer_new");
	curl_multi_setopt(cl->cl_multi, CURLMOPT_SOCKETFUNCTION,
	    curl_loop_socket_cb);
	curl_multi_setopt(cl->cl_multi, CURLMOPT_SOCKETDATA, cl);
	curl_multi_setopt(cl->cl_multi, CURLMOPT_TIMERFUNCTION,
	    curl_loop_timer_set_cb);
	curl_multi_setopt(cl->cl_multi, CURLMOPT_TIMERDATA, cl);
}

void
nomad_curl_opts(CURL *e, const char *url, long timeout_ms, long connect_ms,
    char *errbuf, curl_write_callback write_cb, void *arg)
{
	curl_easy_setopt(e, CURLOPT_URL, url);
	/* Only http(s), never a redirect, no proxy from the environment. */
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, arg);
	curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)arg);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "nops/" NOPS_VERSION);
}

void
nomad_curl_headers_free(struct curl_slist *headers)
{
	struct curl_slist	*h;

	for (h = headers; h != NULL; h = h->next)
		explicit_bzero(h->data, strlen(h->data));
	curl_slist_free_all(headers);
}
