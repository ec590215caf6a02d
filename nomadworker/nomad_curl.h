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

#endif /* NOPS_NOMAD_CURL_H */
