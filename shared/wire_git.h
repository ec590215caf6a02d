/*
 * Payload layouts of the git channel (master <-> gitworker): one struct
 * and one field table each, as wire.h for the web channel.  The
 * peerid of every message is the repository's id.  Decoders enforce the
 * bounds of nops.h (GITW_*) and the layout's own rules (a commit id is
 * hex of its length, flags are known bits); whether a message fits the
 * poll in flight is the receiver's to check.
 */
#ifndef NOPS_WIRE_GIT_H
#define NOPS_WIRE_GIT_H

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
 * IMSG_GIT_REPO: str name, str url, str branch, str path, u32 largest
 * file, u32 most files, u64 largest snapshot, data SSH private key (PEM,
 * may be empty), data known_hosts (may be empty).
 */
struct wire_git_repo {
	const char	*name;
	const char	*url;
	const char	*branch;
	const char	*path;
	uint32_t	 max_file;
	uint32_t	 max_files;
	uint64_t	 max_total;
	const void	*key;
	size_t		 keylen;
	const void	*known;
	size_t		 knownlen;
};
WIRE_DECLARE(git_repo);

/*
 * IMSG_GIT_POLL: u32 seq, str the commit the master has ("" or 40 hex).
 * IMSG_GIT_UNCHANGED: u32 seq, str that commit (40 hex).
 */
struct wire_git_poll {
	uint32_t	 seq;
	const char	*commit;
};
#define wire_git_unchanged	wire_git_poll	/* the same struct */
WIRE_DECLARE(git_poll);
WIRE_DECLARE(git_unchanged);

/* IMSG_GIT_ERROR: u32 seq, str error (not empty). */
struct wire_git_error {
	uint32_t	 seq;
	const char	*error;
};
WIRE_DECLARE(git_error);

/*
 * IMSG_GIT_SNAP_BEGIN: u32 seq, str commit (40 hex), str author ("Name
 * <email>"), i64 commit time (unix s), str subject, u32 files, u64 bytes
 * in all.
 */
struct wire_git_begin {
	uint32_t	 seq;
	const char	*commit;
	const char	*author;
	int64_t		 time;
	const char	*subject;
	uint32_t	 nfiles;
	uint64_t	 total;
};
WIRE_DECLARE(git_begin);

/*
 * IMSG_GIT_SNAP_FILE: u32 seq, u8 kind (GITW_FILE_*), str path, u64 size,
 * str SHA-256 of the content (64 hex).
 */
struct wire_git_file {
	uint32_t	 seq;
	uint8_t		 kind;
	const char	*path;
	uint64_t	 size;
	const char	*sha256;
};
WIRE_DECLARE(git_file);

/*
 * IMSG_GIT_SNAP_SAME: u32 seq, u8 kind (GITW_FILE_*), str path: the file
 * is the one at that path in the snapshot of the commit the poll named
 * as known; the master takes it from there (no content follows).
 */
struct wire_git_same {
	uint32_t	 seq;
	uint8_t		 kind;
	const char	*path;
};
WIRE_DECLARE(git_same);

/* IMSG_GIT_SNAP_DATA: u32 seq, data the next piece (GITW_CHUNK_MAX). */
struct wire_git_data {
	uint32_t	 seq;
	const void	*data;
	size_t		 len;
};
WIRE_DECLARE(git_data);

/* IMSG_GIT_SNAP_NOTE: u32 seq, str path, str why it was not taken. */
struct wire_git_note {
	uint32_t	 seq;
	const char	*path;
	const char	*text;
};
WIRE_DECLARE(git_note);

/* IMSG_GIT_SNAP_END: u32 seq, u32 flags (GITW_SNAP_*). */
struct wire_git_end {
	uint32_t	 seq;
	uint32_t	 flags;
};
WIRE_DECLARE(git_end);

#endif /* NOPS_WIRE_GIT_H */
