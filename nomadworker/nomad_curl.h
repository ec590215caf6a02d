/*
 * A libcurl multi handle driven by libevent, for the nomadworker's two
 * senders (the Nomad client and the notifications).
 */
#ifndef NOPS_NOMAD_CURL_H
#define NOPS_NOMAD_CURL_H

#include <curl/curl.h>
#include <event2/event.h>

struct curl_loop {
	struct event_base	*cl_base;
	CURLM			*cl_multi;
	struct event		*cl_timer;
	/* A transfer ended: its CURLINFO_PRIVATE and its result. */
	void			(*cl_done)(char *priv, CURLcode);
};

void	 curl_loop_init(struct curl_loop *, struct event_base *,
	    void (*done)(char *, CURLcode));
/* The options every transfer of the worker has; arg is also its PRIVATE. */
void	 nomad_curl_opts(CURL *, const char *url, long timeout_ms,
	    long connect_ms, char *errbuf, curl_write_callback, void *arg);
/* Wipe (they may hold a token) and free a transfer's headers. */
void	 nomad_curl_headers_free(struct curl_slist *);

#endif /* NOPS_NOMAD_CURL_H */
