/*
 * Addresses, judged the same way by every process.
 */
#ifndef NOPS_ADDR_H
#define NOPS_ADDR_H

/*
 * addr_is_loopback: host (an IP literal, IPv6 without brackets, or a
 * name) is this machine's loopback: 127.0.0.0/8, ::1, or "localhost" in
 * any case (host names are not case-sensitive).  No name is resolved.
 */
int	 addr_is_loopback(const char *host);

#endif /* NOPS_ADDR_H */
