/*
 * Payload layouts of a notification (master <-> nomadworker), as wire.h
 * for the web channel.  peerid is the notification's id.
 */
#ifndef NOPS_WIRE_NOTIFY_H
#define NOPS_WIRE_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "nops.h"
#include "wire.h"

/*
 * Alike on purpose (whole file): one struct per layout, its members in
 * payload order, as in every wire_*.h; layouts whose fields have the
 * same types look alike and are still different messages.
 */

/*
 * IMSG_NOTIFY: u32 kind (NOTIFY_KIND_*), str url (http:// or https://),
 * str title, str tags, str click URL (the three "" for a JSON kind),
 * data body, data token ("" for none; last, so that the buffer does not
 * grow and copy it).  The decoder refuses header values with control
 * characters (the title may hold spaces, the others not).
 */
struct wire_notify {
	uint32_t	 kind;
	const char	*url;
	const char	*title;
	const char	*tags;
	const char	*click;
	const void	*body;
	size_t		 bodylen;
	const void	*token;
	size_t		 tokenlen;
};
WIRE_DECLARE(notify);

/*
 * IMSG_NOTIFY_RESULT: u32 HTTP status (0 when there was none, else
 * 100-599), str error.
 */
struct wire_notify_result {
	uint32_t	 status;
	const char	*error;
};
WIRE_DECLARE(notify_result);

#endif /* NOPS_WIRE_NOTIFY_H */
