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
 * The message table, in the manner of OpenSSH's monitor table: one row
 * per message type, and everything else is derived from it: the enum, the
 * names in the log (imsg_to_str()), the permit check (imsg_permitted():
 * who may send a type, and to whom), and each receiver's dispatch table
 * (IMSG_HANDLERS() below).  Payload layouts, with the one encoder and
 * decoder both ends and the fuzzers use, are in shared/wire*.h.
 *
 *	X(type, sender, receiver, payload, handler)
 *
 * sender and receiver: MASTER, GIT, NOMAD, WEB, or WORKER (any worker).
 * payload: its layout P, with struct wire_P, wire_put_P() and the decoder
 * wire_get_P() (shared/wire*.h).  Every receiver decodes a message once,
 * before its handler, with imsg_decode() (the master's
 * supervise_dispatch(), the workers' proc_worker_handle()): a payload
 * that does not decode is refused, never handled.
 * handler: the receiver's function for it, given the imsg (its peerid,
 * its fd) and the decoded payload: member P of union imsg_payload
 * (shared/msgtab.h).  In the master it is a master_handler
 * (master/master.h), in a worker a worker_handler (shared/proc.h); it
 * checks what the values mean (is this id outstanding), never the
 * layout again.  Adding a message is adding a row here and writing its
 * handler.
 */
#define NOPS_IMSGS(X)							\
	/* master -> any worker */					\
	X(IMSG_INIT, MASTER, WORKER, init,				\
	    proc_worker_reinit)						\
		/* start-up parameters, before sandboxing */		\
	X(IMSG_CTL_VERBOSE, MASTER, WORKER, verbose,			\
	    proc_worker_verbose)					\
		/* u32 log verbosity */					\
									\
	/* any worker -> master */					\
	X(IMSG_WORKER_READY, WORKER, MASTER, empty,			\
	    supervise_ready)						\
		/* sandboxed and serving */				\
									\
	/* master -> webworker */					\
	X(IMSG_WEB_LISTEN, MASTER, WEB, web_listen,			\
	    web_listen)							\
		/* fd: a listening socket: kind, name, tls, certificate	\
		   chain and key (PEM) */				\
	X(IMSG_WEB_RESPONSE, MASTER, WEB, web_answer,			\
	    web_response)						\
		/* the answer to an IMSG_WEB_REQUEST */			\
	/* the state reads are served from ("Pushed reads" below) */	\
	X(IMSG_WEB_AUTH_BEGIN, MASTER, WEB, auth_begin,			\
	    web_auth_begin)						\
		/* a new identity table follows */			\
	X(IMSG_WEB_AUTH_CLASS, MASTER, WEB, auth_class,			\
	    web_auth_class)						\
		/* an access class and what it may do */		\
	X(IMSG_WEB_AUTH_PRINCIPAL, MASTER, WEB, auth_principal,		\
	    web_auth_principal)						\
		/* a live session or API token, by hash */		\
	X(IMSG_WEB_AUTH_FORGET, MASTER, WEB, auth_forget,		\
	    web_auth_forget)						\
		/* a session or token is no longer good */		\
	X(IMSG_WEB_AUTH_COMMIT, MASTER, WEB, empty,			\
	    web_auth_commit)						\
		/* the new table replaces the old one */		\
	X(IMSG_WEB_DOC, MASTER, WEB, web_doc,				\
	    web_docs_dispatch)						\
		/* a read's answer, for one class */			\
	X(IMSG_WEB_STALE, MASTER, WEB, web_want,			\
	    web_docs_stale)						\
		/* drop a read's answer; WANT it again when read */	\
									\
	/* webworker -> master */					\
	X(IMSG_WEB_REQUEST, WEB, MASTER, web_request,			\
	    api_dispatch_web)						\
		/* an HTTP request for the master to answer */		\
	X(IMSG_WEB_WANT, WEB, MASTER, web_want,				\
	    webpub_want)						\
		/* push this read for this class, and keep pushing it	\
		   when it changes */					\
	X(IMSG_WEB_UNWANT, WEB, MASTER, web_want,			\
	    webpub_unwant)						\
		/* stop pushing it */					\
	X(IMSG_WEB_SEEN, WEB, MASTER, web_seen,				\
	    webpub_seen)						\
		/* sessions and tokens used; HTTP counts */		\
									\
	/* master -> nomadworker */					\
	X(IMSG_NOMAD_CONFIG, MASTER, NOMAD, nomad_config,		\
	    nomad_config)						\
		/* address, token, CA, namespaces */			\
	X(IMSG_NOMAD_REQUEST, MASTER, NOMAD, nomad_request,		\
	    nomad_request)						\
		/* peerid: request id; a NOMAD_OP_* */			\
	/* nomadworker -> master */					\
	X(IMSG_NOMAD_RESPONSE, NOMAD, MASTER, nomad_response,		\
	    nomad_response)						\
		/* peerid: request id; status, index, body */		\
	X(IMSG_NOMAD_BODY, NOMAD, MASTER, nomad_body,			\
	    nomad_body)							\
		/* peerid: request id; the next body chunk */		\
									\
	/* master -> nomadworker: one notification (peerid: its id) */	\
	X(IMSG_NOTIFY, MASTER, NOMAD, notify,				\
	    nomad_notify)						\
		/* kind, url, title, tags, body, token */		\
	/* nomadworker -> master */					\
	X(IMSG_NOTIFY_RESULT, NOMAD, MASTER, notify_result,		\
	    notify_result)						\
		/* peerid: its id; HTTP status, error */		\
									\
	/* master -> nomadworker: SSH to plan hosts (peerid: a run) */	\
	X(IMSG_SSH_KEY, MASTER, NOMAD, ssh_key,			\
	    nomad_ssh_key)						\
		/* data: the client's private key (PEM), or empty */	\
	X(IMSG_SSH_RUN, MASTER, NOMAD, ssh_run,			\
	    nomad_ssh_run)						\
		/* one command on one host; fd: its stdin, optional */	\
	/* nomadworker -> master */					\
	X(IMSG_SSH_RESULT, NOMAD, MASTER, ssh_result,			\
	    hosts_ssh_result)						\
		/* exit status, stage reached, error, output tail */	\
	/* master -> nomadworker: an HTTP check of a plan host */	\
	X(IMSG_HTTP_PROBE, MASTER, NOMAD, http_probe,			\
	    nomad_probe)						\
		/* peerid: its id; url, timeout */			\
	/* nomadworker -> master */					\
	X(IMSG_HTTP_PROBE_RESULT, NOMAD, MASTER, http_probe_result,	\
	    hosts_probe_result)						\
		/* peerid: its id; HTTP status, error, body head */	\
									\
	/* master -> gitworker (peerid: the repository's id) */	\
	X(IMSG_GIT_REPO, MASTER, GIT, git_repo,				\
	    git_recv_repo)						\
		/* a repository to watch, with its secrets */		\
	X(IMSG_GIT_REPO_END, MASTER, GIT, empty,			\
	    git_recv_end)						\
		/* end of the list: forget any other */			\
	X(IMSG_GIT_POLL, MASTER, GIT, git_poll,				\
	    git_recv_poll)						\
		/* u32 seq, known commit: check, snapshot */		\
									\
	/* gitworker -> master (peerid: the repository's id) */	\
	X(IMSG_GIT_UNCHANGED, GIT, MASTER, git_unchanged,		\
	    repo_git_msg)						\
		/* the head is the known commit */			\
	X(IMSG_GIT_ERROR, GIT, MASTER, git_error,			\
	    repo_git_msg)						\
		/* the poll failed, and why */				\
	X(IMSG_GIT_SNAP_BEGIN, GIT, MASTER, git_begin,			\
	    repo_git_msg)						\
		/* a snapshot: commit, author, counts */		\
	X(IMSG_GIT_SNAP_FILE, GIT, MASTER, git_file,			\
	    repo_git_msg)						\
		/* one file: kind, path, size, sha256 */		\
	X(IMSG_GIT_SNAP_DATA, GIT, MASTER, git_data,			\
	    repo_git_msg)						\
		/* the next piece of the current file */		\
	X(IMSG_GIT_SNAP_NOTE, GIT, MASTER, git_note,			\
	    repo_git_msg)						\
		/* an entry not taken (symlink, submodule) */		\
	X(IMSG_GIT_SNAP_END, GIT, MASTER, git_end,			\
	    repo_git_msg)						\
		/* the snapshot is complete */				\
	X(IMSG_GIT_SNAP_SAME, GIT, MASTER, git_same,			\
	    repo_git_msg)						\
		/* one file as in the known commit's snapshot */

#define IMSG_ENUM_ROW(type, from, to, payload, handler)	type,
enum imsg_type {
	IMSG_NONE = 0,
	NOPS_IMSGS(IMSG_ENUM_ROW)
	IMSG_MAX
};

/*
 * The processes as sets, for the sender and receiver columns: one bit per
 * process, WORKER is any worker.
 */
#define IMSG_P_MASTER		(1U << PROC_MASTER)
#define IMSG_P_GIT		(1U << PROC_GITWORKER)
#define IMSG_P_NOMAD		(1U << PROC_NOMADWORKER)
#define IMSG_P_WEB		(1U << PROC_WEBWORKER)
#define IMSG_P_WORKER		(IMSG_P_GIT | IMSG_P_NOMAD | IMSG_P_WEB)

/*
 * A receiver's dispatch table: an array indexed by type, holding the
 * handler of each row addressed to the receiver and NULL elsewhere.  The
 * receiver (MASTER, GIT, NOMAD or WEB) defines IMSG_TO_<name>(h) as h for
 * itself and for WORKER if it is one, as NULL for the others, then
 *
 *	static const handler_type table[IMSG_MAX] = {
 *		NOPS_IMSGS(IMSG_HANDLER_ROW)
 *	};
 *
 * Only its own handlers are named, so only they need to exist.
 */
#define IMSG_HANDLER_ROW(type, from, to, payload, handler)		\
	[type] = IMSG_TO_##to(handler),

/* Is a message of this type from this process to that one in the table? */
int		 imsg_permitted(uint32_t type, enum nops_proc from,
		    enum nops_proc to);
const char	*imsg_to_str(uint32_t);
/*
 * Decode a payload of this type with its row's decoder into member P of
 * *u (shared/msgtab.h): 0, or -1 with *what naming the first failure (an
 * unknown type fails too).  Strings and blobs point into the payload.
 */
union imsg_payload;
int		 imsg_decode(uint32_t type, const void *, size_t,
		    union imsg_payload *u, const char **what);

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
#define WEB_BODY_MAX		(4 * 1024 * 1024)	/* max-body-size
							   at most */
#define WEB_BODY_DEFAULT	(1024 * 1024)
#define WEB_BODY_MIN		(16 * 1024)
#define WEB_HOSTS_MAX		32	/* hostnames of one listen */
#define WEB_CONN_SOURCE_DEFAULT	32	/* TCP connections from one address */
#define WEB_CONN_SOURCE_MAX	256
#define WEB_NAME_MAX		256
#define WEB_HEADERS_MAX		16	/* headers forwarded either way */
#define WEB_HNAME_MAX		64
#define WEB_CTYPE_MAX		128	/* an answer's content type */
#define WEB_REMOTE_MAX		64	/* "address:port" */
#define WEB_TLS_PEM_MAX		(256 * 1024)	/* a certificate chain, a key */

/*
 * IMSG_WEB_LISTEN: fd, u32 kind, str name, u32 tls, data certificate,
 * data key, u32 body limit, u32 host flags (WEB_HOSTS_*), u32 n, n x str
 * a Host name the listener answers for (lower case, IPv6 without
 * brackets), u32 connections per address.
 */
#define WEB_LISTEN_CONTROL	1	/* AF_UNIX control socket */
#define WEB_LISTEN_TCP		2
#define WEB_HOSTS_IPLITERAL	0x01	/* also any IP address literal */

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
 * IMSG_WEB_STALE	u32 class, str target: the document changed and
 *			the master did not render it (the audit log after a
 *			login).  The webworker drops its answer, keeps it
 *			wanted, and sends WANT again at its next read, which
 *			waits for the IMSG_WEB_DOC that answers it.
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
#define WEB_PRIN_NAME_MAX	63	/* a user or token name */
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
/*
 * The one rule of a path against a route's pattern, for these documents
 * and the master's API routes (shared/webdoc.c).
 */
int		 web_path_match(const char *pattern, const char *path,
		    int (*star)(void *, const char *, size_t), void *arg);
/* A document's key (class, then target) in order, for both ends' trees. */
int		 web_doc_key_cmp(uint32_t, const char *, uint32_t,
		    const char *);

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
	NOMAD_OP_DISPATCH,		/* id, data1 payload, data2 meta,
					   token */
	NOMAD_OP_ALLOC_LOGS,		/* id: alloc, task, tail */
	NOMAD_OP_JOB_STOP,		/* id */
	NOMAD_OP_JOBS_LIST,		/* prefix; index with NOMAD_F_BLOCK */
	NOMAD_OP_DEPLOYMENTS_LIST,	/* index with NOMAD_F_BLOCK */
	NOMAD_OP_STATUS_LEADER,		/* the leader's address */
	NOMAD_OP_AGENT_SELF,		/* the agent: Nomad's version */
	NOMAD_OP_MAX
};
/* An operation's name, for the log and the test route ("unknown"). */
const char	*nomad_op_name(uint32_t);

/* IMSG_NOMAD_REQUEST flags */
#define NOMAD_F_ENFORCE_INDEX	0x01	/* register: check-and-set */
#define NOMAD_F_PRESERVE_COUNTS	0x02	/* register: keep live counts */
#define NOMAD_F_PURGE		0x04	/* stop: purge the job */
#define NOMAD_F_STDERR		0x08	/* logs: stderr, not stdout */
/*
 * lists: a blocking query (index = the last X-Nomad-Index seen, wait =
 * NOMAD_BLOCK_WAIT_S); the nomadworker keeps these on connections of
 * their own, so a waiting query never holds up another request.
 */
#define NOMAD_F_BLOCK		0x10
#define NOMAD_F_ALL		0x1f
#define NOMAD_BLOCK_WAIT_S	60	/* Nomad's wait= of a blocking query */

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
 * SSH to the hosts of deploy plans (nomadworker/nomad_ssh.c).
 *
 * IMSG_SSH_KEY	data key: the private key (OpenSSH or PEM), empty for
 *		none.  Kept in memory only; a secret.
 * IMSG_SSH_RUN	str address, u32 port, str user, data known_hosts text
 *		(the lines that may match this host), str command, u32
 *		timeout (s, the whole run), u32 flags, data stdin.
 *		With SSH_F_STDIN_FD the message carries a descriptor whose
 *		contents are written to the command's stdin after the
 *		inline data.  Every run is a new connection.
 * IMSG_SSH_RESULT i32 exit status (-1: none), u32 stage reached,
 *		str error, data output (stdout and stderr merged, the last
 *		SSH_OUTPUT_MAX bytes).
 */
/*
 * HTTP checks of plan hosts (nomadworker/nomad_probe.c).
 *
 * IMSG_HTTP_PROBE	str url (http or https), u32 timeout (ms, the
 *			whole request).  One GET, no redirect, no proxy.
 * IMSG_HTTP_PROBE_RESULT u32 HTTP status (0: no answer), str error,
 *			data the first PROBE_BODY_MAX bytes of the body.
 */
#define PROBE_URL_MAX		2048
#define PROBE_TIMEOUT_MAX_MS	(60 * 1000)
#define PROBE_BODY_MAX		512
#define PROBE_ERROR_MAX		1024

#define SSH_F_STDIN_FD		0x01
#define SSH_F_ALL		0x01
#define SSH_STAGE_CONNECT	1	/* TCP and the SSH handshake */
#define SSH_STAGE_HOSTKEY	2	/* refused: nothing ran */
#define SSH_STAGE_AUTH		3	/* refused: nothing ran */
#define SSH_STAGE_EXEC		4	/* the command started */
#define SSH_STAGE_DONE		5	/* it exited: the exit status holds */
#define SSH_ADDRESS_MAX		253
#define SSH_USER_MAX		32
#define SSH_KNOWN_MAX		(64 * 1024)
#define SSH_KEY_MAX		(16 * 1024)
#define SSH_COMMAND_MAX		(64 * 1024)
#define SSH_STDIN_MAX		(1024 * 1024)	/* inline stdin */
#define SSH_OUTPUT_MAX		(64 * 1024)
#define SSH_ERROR_MAX		1024
#define SSH_TIMEOUT_MAX		86400
#define SSH_THREADS		4	/* runs at once */

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
#define GITW_NAME_MAX		64		/* a repository's name */
#define GITW_URL_MAX		2048
#define GITW_BRANCH_MAX		255
#define GITW_PATH_MAX		1024		/* a path in the repository */
#define GITW_COMMIT_HEXLEN	40		/* a SHA-1 commit id */
#define GITW_SHA256_HEXLEN	64		/* a file's content hash */
#define GITW_AUTHOR_MAX		512		/* "Name <email>" */
#define GITW_SUBJECT_MAX	1024		/* a commit's first line */
#define GITW_ERROR_MAX		1024
#define GITW_NOTE_MAX		256
#define GITW_NOTES_MAX		32		/* notes per snapshot */
#define GITW_KEY_MAX		(16 * 1024)	/* an ssh private key */
#define GITW_KNOWNHOSTS_MAX	(64 * 1024)
#define GITW_CHUNK_MAX		(128 * 1024)	/* per IMSG_GIT_SNAP_DATA */
#define GITW_LIMIT_FILE_SIZE	(16 * 1024 * 1024)
#define GITW_LIMIT_FILES	100000
#define GITW_LIMIT_SNAP_SIZE	(256ULL * 1024 * 1024)
#define GITW_PLAN_FILE		"nops.plan.json"
#define GITW_PLAN_NIX_FILE	"nops.plan.nix"

/* What a snapshot file is (IMSG_GIT_SNAP_FILE). */
#define GITW_FILE_JOB		1	/* *.nomad.hcl or *.nomad */
#define GITW_FILE_VARS		2	/* <name>.vars.hcl next to a job */
#define GITW_FILE_PLAN		3	/* nops.plan.json at the path's top */
#define GITW_FILE_PLAN_NIX	4	/* nops.plan.nix at the path's top */
#define GITW_FILE_NIX		5	/* another *.nix below the path */
#define GITW_FILE_SCHEMA	6	/* *.schema.json: an operation's
					   input */

/* IMSG_GIT_SNAP_END flags */
#define GITW_SNAP_FETCHED	0x01	/* objects came from the remote */
#define GITW_SNAP_REBUILT	0x02	/* the cache was wiped, cloned again */

#endif /* NOPS_NOPS_H */
