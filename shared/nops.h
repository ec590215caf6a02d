/*
 * What every nops process agrees on: the processes, the message types
 * between them, and limits on what those messages may carry.
 */
#ifndef NOPS_NOPS_H
#define NOPS_NOPS_H

#include <stdint.h>

#define NOPS_VERSION		PACKAGE_VERSION

/* Processes; the order is the order of the process table. */
enum nops_proc {
	PROC_MASTER = 0,
	PROC_GITWORKER,
	PROC_NOMADWORKER,
	PROC_WEBWORKER,
	PROC_MAX
};

/*
 * Message types.  IMSG_<AREA>_<VERB>.  The master's permit table
 * (master/supervise.c) says which worker may send which; a worker treats
 * anything unexpected from the master as fatal.
 */
enum imsg_type {
	IMSG_NONE = 0,

	/* master -> any worker */
	IMSG_INIT,		/* start-up parameters, before sandboxing */
	IMSG_CTL_VERBOSE,	/* u32 log verbosity */

	/* any worker -> master */
	IMSG_WORKER_READY,	/* sandboxed and serving */

	/* master -> webworker */
	IMSG_WEB_LISTEN,	/* fd: a listening socket: kind, name, tls,
				   certificate chain and key (PEM) */
	IMSG_WEB_RESPONSE,	/* the answer to an IMSG_WEB_REQUEST */

	/*
	 * master -> webworker: the state reads are served from (see
	 * "Pushed reads" below).
	 */
	IMSG_WEB_AUTH_BEGIN,	/* a new identity table follows */
	IMSG_WEB_AUTH_CLASS,	/* an access class and what it may do */
	IMSG_WEB_AUTH_PRINCIPAL, /* a live session or API token, by hash */
	IMSG_WEB_AUTH_FORGET,	/* a session or token is no longer good */
	IMSG_WEB_AUTH_COMMIT,	/* the new table replaces the old one */
	IMSG_WEB_DOC,		/* a read's answer, for one class */

	/* webworker -> master */
	IMSG_WEB_REQUEST,	/* an HTTP request for the master to answer */
	IMSG_WEB_WANT,		/* push this read for this class, and keep
				   pushing it when it changes */
	IMSG_WEB_UNWANT,	/* stop pushing it */
	IMSG_WEB_SEEN,		/* sessions and tokens used; HTTP counts */

	/* master -> nomadworker */
	IMSG_NOMAD_CONFIG,	/* address, token, CA, namespaces */
	IMSG_NOMAD_REQUEST,	/* peerid: request id; a NOMAD_OP_* */

	/* nomadworker -> master */
	IMSG_NOMAD_RESPONSE,	/* peerid: request id; status, index, body */
	IMSG_NOMAD_BODY,	/* peerid: request id; the next body chunk */

	/* master -> nomadworker: one notification (peerid: its id) */
	IMSG_NOTIFY,		/* kind, url, title, tags, body, token */
	/* nomadworker -> master */
	IMSG_NOTIFY_RESULT,	/* peerid: its id; HTTP status, error */

	/* master -> gitworker (peerid: the repository's id) */
	IMSG_GIT_REPO,		/* a repository to watch, with its secrets */
	IMSG_GIT_REPO_END,	/* end of the list: forget any other */
	IMSG_GIT_POLL,		/* u32 seq, known commit: check, snapshot */

	/* gitworker -> master (peerid: the repository's id) */
	IMSG_GIT_UNCHANGED,	/* the head is the known commit */
	IMSG_GIT_ERROR,		/* the poll failed, and why */
	IMSG_GIT_SNAP_BEGIN,	/* a snapshot: commit, author, counts */
	IMSG_GIT_SNAP_FILE,	/* one file: kind, path, size, sha256 */
	IMSG_GIT_SNAP_DATA,	/* the next piece of the current file */
	IMSG_GIT_SNAP_NOTE,	/* an entry not taken (symlink, submodule) */
	IMSG_GIT_SNAP_END,	/* the snapshot is complete */

	IMSG_MAX
};

const char	*imsg_to_str(uint32_t);
const char	*proc_to_str(enum nops_proc);

/*
 * The largest message on each worker's channel, header included; both
 * ends of a channel use the same constant.
 */
#define GITWORKER_MSG_MAX	(4 * 1024 * 1024)
#define WEBWORKER_MSG_MAX	(8 * 1024 * 1024)	/* API answers */

/* Bounds of what the workers may send (decoders enforce them). */
#define WEB_METHOD_MAX		16
#define WEB_PATH_MAX		2048
#define WEB_HEADER_MAX		4096
#define WEB_BODY_MAX		(1024 * 1024)
#define WEB_NAME_MAX		256
#define WEB_HEADERS_MAX		16	/* headers forwarded either way */
#define WEB_HNAME_MAX		64
#define WEB_REMOTE_MAX		64	/* "address:port" */
#define WEB_TLS_PEM_MAX		(256 * 1024)	/* a certificate chain, a key */

/* IMSG_WEB_LISTEN kinds */
#define WEB_LISTEN_CONTROL	1	/* AF_UNIX control socket */
#define WEB_LISTEN_TCP		2

/*
 * Pushed reads.  The webworker answers GET requests for the API's read
 * documents (web_doc_route() below) from state the master pushes, and
 * GET /api/v1/session from the identities the master pushes; every
 * other request goes to the master as IMSG_WEB_REQUEST.
 *
 * Identities.  The master groups identities into access classes: two
 * identities of one class get the same answer to every read (same
 * policies, same kind).  The webworker knows each live session and API
 * token only by the SHA-256 of its secret (hex), with its class:
 *
 * IMSG_WEB_AUTH_BEGIN	u32 session idle timeout (s), str bootstrap
 *			token hash ("" if none), u32 class of the bootstrap
 *			token and of the control socket's peers (management),
 *			u32 anonymous class (0: no anonymous access).
 *			Starts a new table; the old one serves until COMMIT.
 * IMSG_WEB_AUTH_CLASS	u32 class, data: JSON {"management": bool,
 *			"capabilities": [cap, ...] (in some namespace),
 *			"namespaces": {ns: [cap, ...]}} as GET
 *			/api/v1/session shows them.  Class 0 is sent too: the
 *			view of a client with no identity.  Inside
 *			BEGIN..COMMIT it goes to the new table, else to the
 *			current one.
 * IMSG_WEB_AUTH_PRINCIPAL u32 kind (WEB_PRIN_*), str hash (64 hex), str
 *			name (user or token name), u32 class, i64 last seen
 *			or used (unix s), i64 expires (unix s; 0: never),
 *			data: groups, a JSON array of strings ("" for a
 *			token).  Adds or replaces, like CLASS.
 * IMSG_WEB_AUTH_FORGET	str hash: the session or token is gone (logout,
 *			revoked, expired).
 * IMSG_WEB_AUTH_COMMIT	(empty) the new table replaces the old; every
 *			pushed document is dropped (classes changed).  The
 *			master forgets every WANT when it sends BEGIN.
 *
 * Documents.  A document is the master's whole answer to "GET target"
 * for an identity of a class (class 0: no identity, for public routes):
 *
 * IMSG_WEB_WANT	u32 class, str target (path?query, as requested).
 *			The master answers with IMSG_WEB_DOC at once and
 *			again each time the answer changes, until UNWANT.
 * IMSG_WEB_UNWANT	u32 class, str target.
 * IMSG_WEB_DOC		u32 class, str target, u32 status, str content
 *			type, u32 n, n x (str header name, str value), data
 *			body.
 * IMSG_WEB_SEEN	u32 n, n x (u32 kind, str hash, i64 at): sessions
 *			and tokens used since the last report (the master
 *			keeps last_seen / last_used), and with at 0 sessions
 *			found expired (the master checks and deletes them);
 *			u32 m, m x (u32 HTTP
 *			status, u32 count): answers the webworker gave
 *			itself since the last report.
 */
#define WEB_PRIN_SESSION	1
#define WEB_PRIN_TOKEN		2
#define WEB_CLASS_NONE		0	/* public documents */
#define WEB_CLASSES_MAX		4096
#define WEB_PRINCIPALS_MAX	100000
#define WEB_CLASS_JSON_MAX	(256 * 1024)
#define WEB_GROUPS_JSON_MAX	(16 * 1024)
#define WEB_HASH_HEX		64
#define WEB_DOCS_MAX		512	/* documents wanted at once */
#define WEB_SEEN_MAX		4096	/* entries per IMSG_WEB_SEEN */
#define WEB_CODES_MAX		64	/* statuses per IMSG_WEB_SEEN */

/* What web_doc_route() says of a path (without the query). */
#define WEB_DOC_NO		0	/* not a document: ask the master */
#define WEB_DOC_READ		1	/* a document for the client's class */
#define WEB_DOC_PUBLIC		2	/* a document for class 0, for anyone */
int		 web_doc_route(const char *path);

/* Identity of an HTTP client, as the webworker saw it. */
#define WEB_PEER_LOCAL		1	/* control socket: SO_PEERCRED */
#define WEB_PEER_TCP		2

/*
 * IMSG_NOMAD_REQUEST operations: the master names what to do, the
 * nomadworker turns it into Nomad's wire format (master/nomad.c,
 * nomadworker/nomad_wire.c).
 */
enum nomad_op {
	NOMAD_OP_NONE = 0,
	NOMAD_OP_PARSE,			/* data1 HCL, data2 variables file */
	NOMAD_OP_PLAN,			/* id, data1 job JSON; with diff */
	NOMAD_OP_REGISTER,		/* id, data1 job JSON, index (CAS) */
	NOMAD_OP_JOB_READ,		/* id */
	NOMAD_OP_JOB_ALLOCATIONS,	/* id */
	NOMAD_OP_JOB_DEPLOYMENT,	/* id: its latest deployment */
	NOMAD_OP_DEPLOYMENT_READ,	/* id: a deployment */
	NOMAD_OP_DEPLOYMENT_PROMOTE,	/* id, data1 groups (JSON) or all */
	NOMAD_OP_DISPATCH,		/* id, data1 payload, data2 meta, token */
	NOMAD_OP_ALLOC_LOGS,		/* id: alloc, task, tail */
	NOMAD_OP_JOB_STOP,		/* id */
	NOMAD_OP_JOBS_LIST,		/* prefix */
	NOMAD_OP_MAX
};

/* IMSG_NOMAD_REQUEST flags */
#define NOMAD_F_ENFORCE_INDEX	0x01	/* register: check-and-set */
#define NOMAD_F_PRESERVE_COUNTS	0x02	/* register: keep live counts */
#define NOMAD_F_PURGE		0x04	/* stop: purge the job */
#define NOMAD_F_STDERR		0x08	/* logs: stderr, not stdout */
#define NOMAD_F_ALL		0x0f

/* Bounds of the nomadworker's channel (both ends enforce them). */
#define NOMAD_MSG_MAX		(4 * 1024 * 1024)	/* one message */
#define NOMAD_CHUNK_MAX		(1024 * 1024)	/* body bytes per message */
#define NOMAD_BODY_MAX		(16 * 1024 * 1024)	/* one answer */
#define NOMAD_ADDRESS_MAX	1024
#define NOMAD_TOKEN_MAX		4096
#define NOMAD_CA_MAX		(1024 * 1024)
#define NOMAD_NS_MAX		128	/* a namespace name */
#define NOMAD_NAMESPACES_MAX	256
#define NOMAD_ID_MAX		1024	/* job, deployment, alloc ids */
#define NOMAD_TASK_MAX		256
#define NOMAD_IDEM_MAX		256	/* idempotency token */
#define NOMAD_HCL_MAX		(1024 * 1024)
#define NOMAD_VARS_MAX		(256 * 1024)
#define NOMAD_JOB_MAX		(2 * 1024 * 1024)	/* job JSON */
#define NOMAD_PAYLOAD_MAX	16384	/* Nomad's dispatch payload limit */
#define NOMAD_META_MAX		(64 * 1024)
#define NOMAD_ERROR_MAX		1024	/* a transport error's text */
#define NOMAD_TIMEOUT_MAX_MS	(10 * 60 * 1000)
#define NOMAD_READ_ATTEMPTS	3	/* reads only; writes go once */

/*
 * IMSG_NOTIFY: the master builds the whole request, the nomadworker
 * sends it once (nomadworker/nomad_notify.c).  What a kind sends:
 */
#define NOTIFY_KIND_JSON	1	/* POST application/json */
#define NOTIFY_KIND_TEXT	2	/* POST text/plain, Title and Tags */
#define NOTIFY_URL_MAX		2048
#define NOTIFY_TITLE_MAX	256
#define NOTIFY_TAGS_MAX		256
#define NOTIFY_BODY_MAX		(64 * 1024)
#define NOTIFY_TOKEN_MAX	4096
#define NOTIFY_ERROR_MAX	1024
#define NOTIFY_TIMEOUT_MS	10000	/* one attempt, all of it */

/*
 * Bounds of the git messages.  The limits of a snapshot are sent with
 * each repository; GITW_LIMIT_* cap what may be asked for.
 */
#define GITW_NAME_MAX		64			/* a repository's name */
#define GITW_URL_MAX		2048
#define GITW_BRANCH_MAX		255
#define GITW_PATH_MAX		1024			/* a path in the repository */
#define GITW_COMMIT_HEXLEN	40			/* a SHA-1 commit id */
#define GITW_SHA256_HEXLEN	64			/* a file's content hash */
#define GITW_AUTHOR_MAX		512			/* "Name <email>" */
#define GITW_SUBJECT_MAX	1024			/* a commit's first line */
#define GITW_ERROR_MAX		1024
#define GITW_NOTE_MAX		256
#define GITW_NOTES_MAX		32			/* notes per snapshot */
#define GITW_KEY_MAX		(16 * 1024)		/* an ssh private key */
#define GITW_KNOWNHOSTS_MAX	(64 * 1024)
#define GITW_CHUNK_MAX		(128 * 1024)		/* per IMSG_GIT_SNAP_DATA */
#define GITW_LIMIT_FILE_SIZE	(16 * 1024 * 1024)
#define GITW_LIMIT_FILES	100000
#define GITW_LIMIT_SNAP_SIZE	(256ULL * 1024 * 1024)
#define GITW_PLAN_FILE		"nops.plan.json"

/* What a snapshot file is (IMSG_GIT_SNAP_FILE). */
#define GITW_FILE_JOB		1			/* *.nomad.hcl or *.nomad */
#define GITW_FILE_VARS		2			/* <name>.vars.hcl next to a job */
#define GITW_FILE_PLAN		3			/* nops.plan.json at the path's top */

/* IMSG_GIT_SNAP_END flags */
#define GITW_SNAP_FETCHED	0x01			/* objects came from the remote */
#define GITW_SNAP_REBUILT	0x02			/* the cache was wiped, cloned again */

#endif /* NOPS_NOPS_H */
