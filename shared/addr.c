/*
 * Addresses (addr.h).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <strings.h>

#include "addr.h"

int
addr_is_loopback(const char *host)
{
	struct in_addr	 in;
	struct in6_addr	 in6;

	if (strcasecmp(host, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, host, &in) == 1)
		return (ntohl(in.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &in6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&in6);
	return 0;
}
