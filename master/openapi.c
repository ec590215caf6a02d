/*
 * GET /api/v1/openapi.json: the API described in OpenAPI 3.0.
 *
 * The document is built from two things: the schemas below (data, as
 * JSON text) and a table that describes each route in words and names
 * its schemas.  Paths and methods come from the route tables themselves
 * (api_route_foreach): a route nobody described still appears, marked
 * "x-nops-undescribed", and tests/unit/test_openapi.c fails on it, so
 * the document cannot fall out of step with what the master answers.
 * Test-only routes (/api/v1/debug/...) are left out.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "nops.h"
#include "conf.h"
#include "api.h"
#include "acl.h"
#include "metrics.h"
#include "openapi.h"
#include "jsonb.h"

/*
 * Alike on purpose (whole file): the rows of openapi_ops[], one a route
 * in the order of the route tables, and of openapi_errors[] and
 * openapi_params[]: each row holds its own words and schema names, so
 * rows of the same shape repeat by design; there is no logic among
 * them to fold.
 */

/* How one route is described. */
struct openapi_op {
	const char	*method;
	const char	*route;		/* as in its route table */
	const char	*path;		/* the same, {named} */
	const char	*tag;
	const char	*summary;
	const char	*access;	/* in words: capability, or public */
	const char	*request;	/* the JSON body's schema */
	int		 status;	/* of success */
	const char	*response;	/* its schema, or NULL: see ctype */
	const char	*errors;	/* other statuses, e.g. "400 404" */
	const char	*query;		/* e.g. "limit cursor" */
	int		 public;	/* no credential needed */
};

static const struct openapi_op openapi_ops[] = {
	/* master/api.c */
	{ "GET", "/api/v1/status", "/api/v1/status", "daemon",
	    "The daemon: version, configuration, workers, database",
	    "read", NULL, 200, "Status", "401 403", NULL, 0 },
	{ "POST", "/api/v1/reload", "/api/v1/reload", "daemon",
	    "Read nops.conf again; an invalid one is refused and the "
	    "running one stays", "management", "Empty", 200, "Reloaded",
	    "401 403 415 422", NULL, 0 },
	{ "POST", "/api/v1/log", "/api/v1/log", "daemon",
	    "Set the log level", "management", "LogLevel", 200, "LogLevel",
	    "400 401 403 415", NULL, 0 },
	{ "GET", "/api/v1/repositories", "/api/v1/repositories",
	    "repositories", "Every repository, its commit and last poll",
	    "read", NULL, 200, "RepositoryList", "401 403", NULL, 0 },
	{ "GET", "/api/v1/repositories/*", "/api/v1/repositories/{repository}",
	    "repositories", "One repository and the files of its snapshot",
	    "read", NULL, 200, "RepositoryDetail", "401 403 404", NULL, 0 },
	{ "POST", "/api/v1/repositories/*/fetch",
	    "/api/v1/repositories/{repository}/fetch", "repositories",
	    "Poll the repository now (the answer does not wait for it)",
	    "fetch", "Empty", 202, "FetchQueued", "401 403 404 415", NULL,
	    0 },

	/* master/plans.c */
	{ "GET", "/api/v1/plans", "/api/v1/plans", "plans",
	    "Every repository's deploy plan: state, errors, phases",
	    "read", NULL, 200, "PlanList", "401 403", NULL, 0 },
	{ "GET", "/api/v1/plans/*", "/api/v1/plans/{repository}", "plans",
	    "A repository's deploy plan: phases with their hosts, hosts, "
	    "tests, every validation error", "read", NULL, 200, "Plan",
	    "401 403 404", NULL, 0 },
	{ "GET", "/api/v1/plans/*/infra", "/api/v1/plans/{repository}/infra",
	    "plans", "The infra document the plan exports, at its commit",
	    "read", NULL, 200, "PlanInfra", "401 403 404 409", NULL, 0 },

	/* master/hosts.c */
	{ "GET", "/api/v1/hosts", "/api/v1/hosts", "plans",
	    "Every host of every plan: phase, wanted and current system, "
	    "state, last step", "read", NULL, 200, "HostList", "401 403",
	    NULL, 0 },
	{ "GET", "/api/v1/deployments/*/steps",
	    "/api/v1/deployments/{id}/steps", "plans",
	    "A plan deployment's host steps, phase by phase", "read", NULL,
	    200, "PlanSteps", "400 401 403 404", NULL, 0 },
	/* master/hosts_each.c */
	{ "POST", "/api/v1/plans/*/operations/*",
	    "/api/v1/plans/{repository}/operations/{operation}", "plans",
	    "EachHost: run a declared operation on each host of the plan, at "
	    "most limit at once; answers when every started host is done",
	    "hosts (namespace \"\")", "EachHostRequest", 200, "EachHostResult",
	    "400 401 403 404 409 413 415 422 429", NULL, 0 },
	/* master/hosts_ops.c */
	{ "GET", "/api/v1/hosts/*/*", "/api/v1/hosts/{repository}/{host}",
	    "plans", "One host of a plan, as in the list, with its actions "
	    "(the operations of its plan as last deployed, scope instance)",
	    "read", NULL, 200, "HostDetail", "401 403 404", NULL, 0 },
	{ "POST", "/api/v1/hosts/*/*/actions/*",
	    "/api/v1/hosts/{repository}/{host}/actions/{host_action}", "plans",
	    "The generic action procedure of a host: an operation "
	    "<host>.<operation>; answers the run once it ended",
	    "operate and hosts (namespace \"\")", "JobAction", 200,
	    "HostRun", "400 401 403 404 409 413 415 422 429 500", NULL, 0 },
	{ "GET", "/api/v1/plans/*/operations/runs",
	    "/api/v1/plans/{repository}/operations/runs", "plans",
	    "The run log of operations on the plan's hosts (host actions and "
	    "EachHost), newest first; each host keeps its last 100; never an "
	    "input; a sensitive run's output is null", "read", NULL, 200,
	    "HostRunList", "400 401 403", "limit cursor host", 0 },
	{ "GET", "/api/v1/plans/*/operations/runs/*",
	    "/api/v1/plans/{repository}/operations/runs/{run}", "plans",
	    "One operation run on a host", "read", NULL, 200, "HostRun",
	    "401 403 404", NULL, 0 },

	/* master/api_engine.c */
	{ "GET", "/api/v1/engine", "/api/v1/engine", "engine",
	    "The detection and apply loops", "read", NULL, 200, "Engine",
	    "401 403", NULL, 0 },
	{ "GET", "/api/v1/jobs", "/api/v1/jobs", "jobs",
	    "Jobs in git as the last detection cycle saw them", "read", NULL,
	    200, "JobList", "400 401 403", "limit cursor", 0 },
	{ "GET", "/api/v1/jobs/*/*", "/api/v1/jobs/{namespace}/{job}", "jobs",
	    "One job: hooks, spec hash, redacted diff, pause", "read", NULL,
	    200, "JobDetail", "401 403 404", NULL, 0 },
	{ "POST", "/api/v1/jobs/*/*/actions/*",
	    "/api/v1/jobs/{namespace}/{job}/actions/{job_action}", "jobs",
	    "The generic action procedure of a job: deploy-now, pause, "
	    "resume, suspend, unsuspend, or an operation <job>.<operation>",
	    "the action's capability (deploy-now, pause, suspend, operate)",
	    "JobAction", 200, "JobActionDone",
	    "202 400 401 403 404 409 415 422 429 500", NULL, 0 },
	{ "GET", "/api/v1/jobs/*/*/operations/runs",
	    "/api/v1/jobs/{namespace}/{job}/operations/runs", "jobs",
	    "The run log of a job's operations, newest first (the last 100; "
	    "never an input; a sensitive run's output is null)", "read", NULL,
	    200, "OperationRunList", "400 401 403", "limit cursor", 0 },
	{ "GET", "/api/v1/jobs/*/*/operations/runs/*",
	    "/api/v1/jobs/{namespace}/{job}/operations/runs/{run}", "jobs",
	    "One operation run", "read", NULL, 200, "OperationRun",
	    "401 403 404", NULL, 0 },
	{ "GET", "/api/v1/deployments", "/api/v1/deployments", "deployments",
	    "Deployments, newest first", "read", NULL, 200,
	    "DeploymentList", "400 401 403", "limit cursor state namespace "
	    "job", 0 },
	{ "GET", "/api/v1/deployments/*", "/api/v1/deployments/{id}",
	    "deployments", "One deployment: diff, hooks and their runs, "
	    "actions, events", "read", NULL, 200, "DeploymentDetail",
	    "401 403 404", NULL, 0 },
	{ "POST", "/api/v1/deployments/*/actions/*",
	    "/api/v1/deployments/{id}/actions/{action}", "deployments",
	    "The generic action procedure of a deployment: approve, "
	    "reject, retry or promote", "the action's capability (approve, "
	    "retry, promote)", "Action", 200,
	    "Deployment", "202 400 401 403 404 409 415", NULL, 0 },
	/* master/leftbehind.c */
	{ "GET", "/api/v1/deployments/left-behind/*",
	    "/api/v1/deployments/left-behind/{deployment_id}", "deployments",
	    "The objects a deployment's cleanups left behind (no inputs)",
	    "read", NULL, 200, "LeftBehindList", "401 403 404", NULL, 0 },
	{ "POST", "/api/v1/deployments/left-behind/*",
	    "/api/v1/deployments/left-behind/{deployment_id}", "deployments",
	    "Retry the removals; answers the counts", "left-behind", "Empty",
	    200, "LeftBehindRetried", "401 403 404 409 415", NULL, 0 },
	{ "DELETE", "/api/v1/deployments/left-behind/*/*",
	    "/api/v1/deployments/left-behind/{entry_id}/{deployment_id}",
	    "deployments", "Forget one record; the object is not touched",
	    "left-behind", NULL, 200, "LeftBehindForgotten",
	    "401 403 404 409", NULL, 0 },
	{ "GET", "/api/v1/orphans", "/api/v1/orphans", "jobs",
	    "Jobs nops deployed that are gone from git but still run",
	    "read", NULL, 200, "OrphanList", "401 403", NULL, 0 },
	{ "GET", "/api/v1/files/errors", "/api/v1/files/errors", "jobs",
	    "Job files that did not parse", "read", NULL, 200,
	    "FileErrorList", "401 403", NULL, 0 },

	/* master/api_auth.c */
	{ "POST", "/api/v1/login", "/api/v1/login", "auth",
	    "Log in with a users-file account; sets the session cookie",
	    "public", "Login", 200, "LoggedIn", "400 401 415 429", NULL, 1 },
	{ "GET", "/api/v1/session", "/api/v1/session", "auth",
	    "Who the client is and what it may do (and the CSRF token of "
	    "a session)", "public", NULL, 200, "Session", NULL, NULL, 1 },
	{ "POST", "/api/v1/logout", "/api/v1/logout", "auth",
	    "End the session", "any identity", "Empty", 200, "LoggedOut",
	    "400 401 403 415", NULL, 0 },
	{ "GET", "/api/v1/tokens", "/api/v1/tokens", "auth",
	    "API tokens (never their secrets)", "management", NULL, 200,
	    "TokenList", "401 403", NULL, 0 },
	{ "POST", "/api/v1/tokens", "/api/v1/tokens", "auth",
	    "Create an API token; its secret is shown once, here",
	    "management", "TokenCreate", 201, "TokenCreated",
	    "200 400 401 403 409 415", NULL, 0 },
	{ "DELETE", "/api/v1/tokens/*", "/api/v1/tokens/{token}", "auth",
	    "Revoke an API token", "management", NULL, 200, "TokenRevoked",
	    "401 403 404", NULL, 0 },
	{ "POST", "/api/v1/tokens/*/revoke", "/api/v1/tokens/{token}/revoke",
	    "auth", "Revoke an API token (for clients without DELETE)",
	    "management", "Empty", 200, "TokenRevoked", "401 403 404 415",
	    NULL, 0 },

	/* master/api_dashboard.c */
	{ "GET", "/api/v1/overview", "/api/v1/overview", "dashboard",
	    "What the Overview page shows, in one answer", "read", NULL, 200,
	    "Overview", "401 403", NULL, 0 },
	{ "GET", "/api/v1/events", "/api/v1/events", "dashboard",
	    "The audit log, newest first", "read", NULL, 200, "EventList",
	    "400 401 403", "limit cursor target", 0 },

	/* master/openapi.c, webhook.c, metrics.c */
	{ "GET", "/api/v1/openapi.json", "/api/v1/openapi.json", "meta",
	    "This document", "public", NULL, 200, "OpenAPI", NULL, NULL, 1 },
	{ "POST", "/webhook/git/*", "/webhook/git/{repository}", "webhooks",
	    "A git host says the repository changed: fetch it now.  The "
	    "signature headers authenticate the delivery (GitHub "
	    "X-Hub-Signature-256, Gitea X-Gitea-Signature, GitLab "
	    "X-Gitlab-Token); every one present must match the repository's "
	    "webhook secret.  The payload is never read.  A delivery id seen "
	    "in the last 24 hours is answered 200 with duplicate true and "
	    "does nothing.", "public (signed)", "WebhookPayload", 202,
	    "WebhookAccepted", "200 400 401 403 404 413", NULL, 1 },
	{ "GET", "/metrics", "/metrics", "meta",
	    "Prometheus metrics (text format 0.0.4).  With a metrics token "
	    "in the config it needs Authorization: Bearer and that token; "
	    "otherwise read, and the per-job series show only the "
	    "namespaces the client may read.", "the metrics token, or read",
	    NULL, 200, NULL, "401 403", NULL, 1 },
};

/* Statuses other than success: their reference in #/components/responses. */
static const struct {
	int		 status;
	const char	*name;
} openapi_errors[] = {
	{ 400, "BadRequest" },
	{ 401, "Unauthorized" },
	{ 403, "Forbidden" },
	{ 404, "NotFound" },
	{ 405, "MethodNotAllowed" },
	{ 409, "Conflict" },
	{ 413, "TooLarge" },
	{ 415, "UnsupportedMediaType" },
	{ 422, "InvalidConfiguration" },
	{ 429, "QueueFull" },
	{ 500, "RuntimeError" },
};

/* Parameters: path segments and query strings, by name. */
static const struct {
	const char	*name;
	const char	*in;
	const char	*schema;	/* JSON */
	const char	*description;
} openapi_params[] = {
	{ "repository", "path", "{\"type\":\"string\"}",
	    "A repository's name in nops.conf" },
	{ "namespace", "path", "{\"type\":\"string\"}", "A Nomad namespace" },
	{ "job", "path", "{\"type\":\"string\"}",
	    "A job ID (percent-encoded)" },
	{ "job_action", "path", "{\"type\":\"string\",\"enum\":[\"pause\","
	    "\"resume\",\"deploy-now\"]}", "The action" },
	{ "id", "path", "{\"type\":\"integer\",\"minimum\":1}",
	    "A deployment id" },
	{ "action", "path", "{\"type\":\"string\",\"enum\":[\"approve\","
	    "\"reject\",\"retry\",\"promote\"]}", "The action" },
	{ "token", "path", "{\"type\":\"string\"}", "A token's id or name" },
	{ "limit", "query", "{\"type\":\"integer\",\"minimum\":1,"
	    "\"maximum\":500,\"default\":50}", "Items per page" },
	{ "cursor", "query", "{\"type\":\"string\"}",
	    "The next of the previous page" },
	{ "state", "query",
	    "{\"$ref\":\"#/components/schemas/DeploymentState\"}",
	    "Only deployments in this state" },
	{ "namespace", "query", "{\"type\":\"string\"}",
	    "Only this namespace" },
	{ "job", "query", "{\"type\":\"string\"}", "Only this job" },
	{ "target", "query", "{\"type\":\"string\"}",
	    "Only events of this target, e.g. deployment/12" },
};

/*
 * The schemas.  Times are RFC 3339 UTC strings, or null when they have
 * not happened.
 */
static const char openapi_components[] =
"{"
"\"securitySchemes\":{"
" \"bearer\":{\"type\":\"http\",\"scheme\":\"bearer\",\"description\":"
"  \"An API token (nopsctl token create), or the bootstrap token\"},"
" \"session\":{\"type\":\"apiKey\",\"in\":\"cookie\",\"name\":"
"  \"nops_session\",\"description\":\"A login session; writes also need "
"  the X-CSRF-Token header\"},"
" \"metricsToken\":{\"type\":\"http\",\"scheme\":\"bearer\","
"  \"description\":\"The metrics token file of nops.conf\"}"
"},"
"\"schemas\":{"
" \"Error\":{\"type\":\"object\",\"required\":[\"error\"],\"properties\":{"
"  \"error\":{\"type\":\"object\",\"required\":[\"code\",\"message\"],"
"  \"properties\":{\"code\":{\"type\":\"string\",\"enum\":[\"not_found\","
"  \"conflict\",\"queue_full\",\"invalid_configuration\",\"runtime_error\","
"  \"unauthorized\",\"forbidden\",\"bad_request\"]},"
"  \"message\":{\"type\":\"string\"}}}}},"
" \"Time\":{\"type\":\"string\",\"format\":\"date-time\",\"nullable\":true},"
" \"Next\":{\"type\":\"string\",\"nullable\":true,\"description\":"
"  \"Give it as cursor for the next page; null on the last page\"},"
" \"Empty\":{\"type\":\"object\",\"description\":\"{} (writes are JSON)\"},"
" \"LeftBehindList\":{\"type\":\"object\",\"properties\":{"
"  \"deployment\":{\"type\":\"integer\"},\"items\":{\"type\":\"array\","
"  \"items\":{\"type\":\"object\",\"properties\":{"
"  \"id\":{\"type\":\"integer\"},\"deployment\":{\"type\":\"integer\"},"
"  \"kind\":{\"type\":\"string\"},\"object\":{\"type\":\"string\"},"
"  \"environment\":{\"type\":\"string\"},"
"  \"error\":{\"type\":\"string\",\"nullable\":true},"
"  \"created_at\":{\"$ref\":\"#/components/schemas/Time\"}}}},"
"  \"next\":{\"$ref\":\"#/components/schemas/Next\"}}},"
" \"LeftBehindRetried\":{\"type\":\"object\",\"properties\":{"
"  \"deployment\":{\"type\":\"integer\"},\"removed\":{\"type\":"
"  \"integer\"},\"still_failing\":{\"type\":\"integer\"},"
"  \"refused\":{\"type\":\"integer\"}}},"
" \"LeftBehindForgotten\":{\"type\":\"object\",\"properties\":{"
"  \"id\":{\"type\":\"integer\"},\"deployment\":{\"type\":\"integer\"},"
"  \"forgotten\":{\"type\":\"boolean\"}}},"
" \"OperationRun\":{\"type\":\"object\",\"properties\":{"
"  \"id\":{\"type\":\"integer\"},\"namespace\":{\"type\":\"string\"},"
"  \"job\":{\"type\":\"string\"},\"operation\":{\"type\":\"string\"},"
"  \"action\":{\"type\":\"string\"},\"deployment\":{\"type\":"
"  \"integer\"},\"actor\":{\"type\":\"string\"},\"sensitive\":"
"  {\"type\":\"boolean\"},\"state\":{\"type\":\"string\",\"enum\":"
"  [\"running\",\"succeeded\",\"failed\",\"timed_out\",\"error\","
"  \"lost\"]},\"exit_code\":{\"type\":\"integer\",\"nullable\":true},"
"  \"output\":{\"type\":\"string\",\"nullable\":true},"
"  \"error\":{\"type\":\"string\",\"nullable\":true},"
"  \"started_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"ended_at\":{\"$ref\":\"#/components/schemas/Time\"}}},"
" \"OperationRunList\":{\"type\":\"object\",\"properties\":{"
"  \"items\":{\"type\":\"array\",\"items\":{\"$ref\":"
"  \"#/components/schemas/OperationRun\"}},"
"  \"next\":{\"$ref\":\"#/components/schemas/Next\"}}},"
" \"OpenAPI\":{\"type\":\"object\",\"description\":\"This document\"},"
" \"DeploymentState\":{\"type\":\"string\",\"enum\":[\"pending_approval\","
"  \"pre_hooks\",\"registering\",\"waiting_health\",\"awaiting_promotion\","
"  \"post_hooks\",\"completed\",\"failed\",\"rejected\",\"superseded\"]},"
" \"Worker\":{\"type\":\"object\",\"properties\":{"
"  \"name\":{\"type\":\"string\"},\"pid\":{\"type\":\"integer\"},"
"  \"state\":{\"type\":\"string\",\"enum\":[\"running\",\"starting\","
"  \"restarting\"]},\"restarts\":{\"type\":\"integer\"},"
"  \"started_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"last_exit\":{\"type\":\"string\",\"nullable\":true}}},"
" \"Status\":{\"type\":\"object\",\"properties\":{"
"  \"version\":{\"type\":\"string\"},\"pid\":{\"type\":\"integer\"},"
"  \"started_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"config\":{\"type\":\"string\"},"
"  \"config_loaded_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"reloads\":{\"type\":\"integer\"},"
"  \"reload_failures\":{\"type\":\"integer\"},"
"  \"verbose\":{\"type\":\"integer\"},"
"  \"workers\":{\"type\":\"array\",\"items\":"
"  {\"$ref\":\"#/components/schemas/Worker\"}},"
"  \"database\":{\"type\":\"object\",\"properties\":{"
"  \"path\":{\"type\":\"string\"},"
"  \"schema_version\":{\"type\":\"integer\"}}}}},"
" \"Reloaded\":{\"type\":\"object\",\"properties\":{"
"  \"reloaded\":{\"type\":\"boolean\"},"
"  \"config_loaded_at\":{\"$ref\":\"#/components/schemas/Time\"}}},"
" \"LogLevel\":{\"type\":\"object\",\"required\":[\"verbose\"],"
"  \"properties\":{\"verbose\":{\"type\":\"boolean\"}}},"
" \"Repository\":{\"type\":\"object\",\"properties\":{"
"  \"name\":{\"type\":\"string\"},\"url\":{\"type\":\"string\"},"
"  \"branch\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},"
"  \"poll_interval\":{\"type\":\"integer\",\"description\":\"seconds\"},"
"  \"state\":{\"type\":\"string\",\"enum\":[\"idle\",\"queued\","
"  \"polling\"]},"
"  \"commit\":{\"type\":\"string\",\"nullable\":true},"
"  \"author\":{\"type\":\"string\",\"nullable\":true},"
"  \"subject\":{\"type\":\"string\",\"nullable\":true},"
"  \"commit_time\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"commit_url\":{\"type\":\"string\",\"nullable\":true},"
"  \"fetched_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"checked_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"generation\":{\"type\":\"integer\"},"
"  \"file_count\":{\"type\":\"integer\"},"
"  \"job_count\":{\"type\":\"integer\"},\"bytes\":{\"type\":\"integer\"},"
"  \"last_error\":{\"type\":\"object\",\"nullable\":true,\"properties\":{"
"  \"message\":{\"type\":\"string\"},"
"  \"at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"failures\":{\"type\":\"integer\"}}},"
"  \"next_poll\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"polls\":{\"type\":\"integer\"},\"snapshots\":{\"type\":\"integer\"},"
"  \"errors\":{\"type\":\"integer\"},"
"  \"cache_rebuilds\":{\"type\":\"integer\"},"
"  \"last_poll_ms\":{\"type\":\"number\"},"
"  \"notes\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
"  \"properties\":{\"path\":{\"type\":\"string\"},"
"  \"text\":{\"type\":\"string\"}}}}}},"
" \"RepositoryDetail\":{\"allOf\":["
"  {\"$ref\":\"#/components/schemas/Repository\"},"
"  {\"type\":\"object\",\"properties\":{\"files\":{\"type\":\"array\","
"  \"items\":{\"type\":\"object\",\"properties\":{"
"  \"path\":{\"type\":\"string\"},\"kind\":{\"type\":\"string\","
"  \"enum\":[\"job\",\"vars\",\"plan\"]},\"size\":{\"type\":\"integer\"},"
"  \"sha256\":{\"type\":\"string\"},"
"  \"vars\":{\"type\":\"string\",\"nullable\":true}}}}}}]},"
" \"RepositoryList\":{\"type\":\"object\",\"required\":[\"items\","
"  \"next\"],\"properties\":{\"items\":{\"type\":\"array\",\"items\":"
"  {\"$ref\":\"#/components/schemas/Repository\"}},"
"  \"next\":{\"$ref\":\"#/components/schemas/Next\"}}},"
" \"FetchQueued\":{\"type\":\"object\",\"properties\":{"
"  \"name\":{\"type\":\"string\"},\"queued\":{\"type\":\"boolean\"}}},"
" \"Engine\":{\"type\":\"object\",\"properties\":{"
"  \"cycles\":{\"type\":\"integer\"},"
"  \"last_detection\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"last_apply\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"last_detection_ms\":{\"type\":\"number\"},"
"  \"last_detection_requests\":{\"type\":\"integer\"},"
"  \"last_detection_planned\":{\"type\":\"integer\"},"
"  \"last_detection_unchanged\":{\"type\":\"integer\"},"
"  \"last_detection_full\":{\"type\":\"boolean\"},"
"  \"last_detection_full_why\":{\"type\":\"string\","
"  \"nullable\":true},"
"  \"last_detection_focused\":{\"type\":\"boolean\"},"
"  \"last_detection_decided\":{\"type\":\"integer\"},"
"  \"detecting\":{\"type\":\"boolean\"}}},"
" \"Job\":{\"type\":\"object\",\"properties\":{"
"  \"namespace\":{\"type\":\"string\"},\"id\":{\"type\":\"string\"},"
"  \"repository\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},"
"  \"commit\":{\"type\":\"string\"},\"role\":{\"type\":\"string\"},"
"  \"policy\":{\"type\":\"string\",\"enum\":[\"auto\",\"approval\","
"  \"none\"]},\"drift\":{\"type\":\"boolean\"},"
"  \"state\":{\"type\":\"string\",\"nullable\":true,\"description\":"
"  \"in_sync, drift, pending_approval, deploying, paused, held, suspended, "
"  blocked, error\"},"
"  \"note\":{\"type\":\"string\",\"nullable\":true},"
"  \"deployment\":{\"type\":\"integer\",\"nullable\":true},"
"  \"error\":{\"type\":\"string\",\"nullable\":true},"
"  \"issues\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
"  \"properties\":{\"severity\":{\"type\":\"string\",\"enum\":"
"  [\"error\",\"warning\"]},\"key\":{\"type\":\"string\"},"
"  \"message\":{\"type\":\"string\"}}}}}},"
" \"JobDetail\":{\"allOf\":[{\"$ref\":\"#/components/schemas/Job\"},"
"  {\"type\":\"object\",\"properties\":{"
"  \"hooks\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
"  \"spec_hash\":{\"type\":\"string\",\"nullable\":true},"
"  \"diff\":{\"type\":\"object\",\"nullable\":true,\"description\":"
"  \"Nomad's plan diff, secrets redacted\"},"
"  \"paused\":{\"type\":\"object\",\"nullable\":true,\"properties\":{"
"  \"by\":{\"type\":\"string\"},\"reason\":{\"type\":\"string\"},"
"  \"since\":{\"$ref\":\"#/components/schemas/Time\"}}},"
"  \"suspended\":{\"type\":\"object\",\"nullable\":true,\"properties\":{"
"  \"by\":{\"type\":\"string\"},\"reason\":{\"type\":\"string\"},"
"  \"since\":{\"$ref\":\"#/components/schemas/Time\"}}},"
"  \"actions\":{\"type\":\"array\",\"items\":"
"  {\"$ref\":\"#/components/schemas/ActionItem\"}}}}]},"
" \"ActionItem\":{\"type\":\"object\",\"required\":[\"id\",\"title\","
"  \"description\",\"enabled\",\"scope\"],\"additionalProperties\":false,"
"  \"description\":\"An action as a job's or a deployment's detail serves "
"  it; group, sensitive and input_schema come with every operation\","
"  \"properties\":{"
"  \"id\":{\"type\":\"string\",\"description\":\"a built-in, or "
"  <job>.<operation>\"},\"title\":{\"type\":\"string\"},"
"  \"description\":{\"type\":\"string\"},"
"  \"enabled\":{\"type\":\"boolean\"},"
"  \"disabled_reason\":{\"type\":\"string\"},"
"  \"confirm\":{\"type\":\"string\",\"description\":\"a question to "
"  ask first\"},"
"  \"scope\":{\"type\":\"string\",\"enum\":[\"target\",\"instance\"]},"
"  \"kind\":{\"type\":\"string\",\"enum\":[\"toggle\",\"operation\"]},"
"  \"group\":{\"type\":\"string\",\"description\":\"an operation's: "
"  the first word of its name, to show operations in groups\"},"
"  \"sensitive\":{\"type\":\"boolean\",\"description\":\"an "
"  operation's output is shown once and never stored\"},"
"  \"input_schema\":{\"oneOf\":[{\"type\":\"object\"},"
"  {\"type\":\"boolean\"}],\"description\":\"JSON Schema (draft 7) of "
"  the input, an object or a boolean schema; {} for an operation whose "
"  schema cannot be used (it is disabled)\"}}},"
" \"JobList\":{\"type\":\"object\",\"required\":[\"items\",\"next\"],"
"  \"properties\":{\"items\":{\"type\":\"array\",\"items\":"
"  {\"$ref\":\"#/components/schemas/Job\"}},"
"  \"next\":{\"$ref\":\"#/components/schemas/Next\"}}},"
" \"JobAction\":{\"type\":\"object\",\"properties\":{"
"  \"input\":{\"type\":\"object\",\"description\":\"the input, as the "
"  action's input_schema says; without it the body is the input\"},"
"  \"reason\":{\"type\":\"string\",\"maxLength\":1024,\"description\":"
"  \"Required to pause\"}}},"
" \"JobActionDone\":{\"type\":\"object\",\"properties\":{"
"  \"namespace\":{\"type\":\"string\"},\"id\":{\"type\":\"string\"},"
"  \"action\":{\"type\":\"string\"},\"queued\":{\"type\":\"boolean\"}}},"
" \"Deployment\":{\"type\":\"object\",\"required\":[\"id\",\"namespace\","
"  \"job\",\"state\",\"commit\",\"spec_hash\",\"policy\",\"created_at\","
"  \"updated_at\",\"reason\"],\"properties\":{"
"  \"id\":{\"type\":\"integer\"},\"namespace\":{\"type\":\"string\"},"
"  \"job\":{\"type\":\"string\"},\"repository\":{\"type\":\"string\"},"
"  \"state\":{\"$ref\":\"#/components/schemas/DeploymentState\"},"
"  \"commit\":{\"type\":\"string\"},\"spec_hash\":{\"type\":\"string\"},"
"  \"policy\":{\"type\":\"string\"},"
"  \"created_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"updated_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"reason\":{\"type\":\"string\",\"nullable\":true},"
"  \"approved_by\":{\"type\":\"string\",\"nullable\":true},"
"  \"approved_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"retry_of\":{\"type\":\"integer\",\"nullable\":true},"
"  \"nomad_deployment\":{\"type\":\"string\",\"nullable\":true},"
"  \"job_version\":{\"type\":\"integer\",\"nullable\":true},"
"  \"timeout_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"ended_at\":{\"$ref\":\"#/components/schemas/Time\"}}},"
" \"DeploymentDetail\":{\"allOf\":["
"  {\"$ref\":\"#/components/schemas/Deployment\"},"
"  {\"type\":\"object\",\"properties\":{"
"  \"diff\":{\"type\":\"object\",\"nullable\":true},"
"  \"health\":{\"type\":\"object\",\"nullable\":true,"
"  \"description\":\"The last health progress seen (kept)\"},"
"  \"git\":{\"type\":\"object\",\"properties\":{"
"  \"commit\":{\"type\":\"string\"},"
"  \"subject\":{\"type\":\"string\",\"nullable\":true},"
"  \"author\":{\"type\":\"string\",\"nullable\":true},"
"  \"time\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"url\":{\"type\":\"string\",\"nullable\":true,"
"  \"description\":\"The commit on the repository's web UI\"},"
"  \"path\":{\"type\":\"string\",\"nullable\":true},"
"  \"base_commit\":{\"type\":\"string\",\"nullable\":true,"
"  \"description\":\"The job's last completed deployment's commit\"},"
"  \"changed\":{\"type\":\"boolean\",\"nullable\":true,"
"  \"description\":\"The job file changed in git since base_commit; "
"  null: nothing to compare\"},"
"  \"change\":{\"type\":\"string\",\"nullable\":true,"
"  \"description\":\"A unified diff of the job file, redacted\"},"
"  \"summary\":{\"type\":\"string\"}}},"
"  \"hooks\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
"  \"actions\":{\"type\":\"array\",\"items\":"
"  {\"$ref\":\"#/components/schemas/ActionItem\"},"
"  \"description\":\"What a client can do to it, in display order\"},"
"  \"events\":{\"type\":\"array\",\"items\":"
"  {\"$ref\":\"#/components/schemas/Event\"}}}}]},"
" \"DeploymentList\":{\"type\":\"object\",\"required\":[\"items\","
"  \"next\"],\"properties\":{\"items\":{\"type\":\"array\",\"items\":"
"  {\"$ref\":\"#/components/schemas/Deployment\"}},"
"  \"next\":{\"$ref\":\"#/components/schemas/Next\"}}},"
" \"Action\":{\"type\":\"object\",\"properties\":{"
"  \"reason\":{\"type\":\"string\",\"maxLength\":1024},"
"  \"spec_hash\":{\"type\":\"string\",\"description\":\"approve: refuse "
"  (409) unless the deployment still has this spec hash\"}}},"
" \"OrphanList\":{\"type\":\"object\",\"required\":[\"items\",\"next\"],"
"  \"properties\":{\"items\":{\"type\":\"array\",\"items\":{"
"  \"type\":\"object\",\"properties\":{"
"  \"namespace\":{\"type\":\"string\"},\"id\":{\"type\":\"string\"},"
"  \"last_deployment\":{\"type\":\"integer\"}}}},"
"  \"next\":{\"$ref\":\"#/components/schemas/Next\"},"
"  \"complete\":{\"type\":\"boolean\",\"description\":\"false while "
"  files fail to parse\"}}},"
" \"FileErrorList\":{\"type\":\"object\",\"required\":[\"items\","
"  \"next\"],\"properties\":{\"items\":{\"type\":\"array\",\"items\":{"
"  \"type\":\"object\",\"properties\":{"
"  \"repository\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},"
"  \"error\":{\"type\":\"string\"}}}},"
"  \"next\":{\"$ref\":\"#/components/schemas/Next\"}}},"
" \"Login\":{\"type\":\"object\",\"required\":[\"username\",\"password\"],"
"  \"properties\":{\"username\":{\"type\":\"string\"},"
"  \"password\":{\"type\":\"string\",\"format\":\"password\"}}},"
" \"LoggedIn\":{\"type\":\"object\",\"properties\":{"
"  \"user\":{\"type\":\"string\"},"
"  \"csrf_token\":{\"type\":\"string\"}}},"
" \"LoggedOut\":{\"type\":\"object\",\"properties\":{"
"  \"logged_out\":{\"type\":\"boolean\"}}},"
" \"Session\":{\"type\":\"object\",\"properties\":{"
"  \"authenticated\":{\"type\":\"boolean\"},"
"  \"kind\":{\"type\":\"string\"},\"actor\":{\"type\":\"string\"},"
"  \"user\":{\"type\":\"string\",\"nullable\":true},"
"  \"groups\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
"  \"management\":{\"type\":\"boolean\"},"
"  \"capabilities\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
"  \"csrf_token\":{\"type\":\"string\",\"nullable\":true},"
"  \"namespaces\":{\"type\":\"object\",\"additionalProperties\":"
"  {\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}},"
" \"Token\":{\"type\":\"object\",\"properties\":{"
"  \"id\":{\"type\":\"integer\"},\"name\":{\"type\":\"string\"},"
"  \"policy\":{\"type\":\"string\"},\"created_by\":{\"type\":\"string\"},"
"  \"created_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"expires_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"last_used\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"revoked_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"state\":{\"type\":\"string\",\"enum\":[\"active\",\"expired\","
"  \"revoked\"]}}},"
" \"TokenList\":{\"type\":\"object\",\"required\":[\"items\",\"next\"],"
"  \"properties\":{\"items\":{\"type\":\"array\",\"items\":"
"  {\"$ref\":\"#/components/schemas/Token\"}},"
"  \"next\":{\"$ref\":\"#/components/schemas/Next\"}}},"
" \"TokenCreate\":{\"type\":\"object\",\"required\":[\"name\",\"policy\"],"
"  \"properties\":{\"name\":{\"type\":\"string\"},"
"  \"policy\":{\"type\":\"string\"},"
"  \"expires\":{\"type\":\"string\",\"description\":\"A duration, "
"  e.g. 90d\"}}},"
" \"TokenCreated\":{\"type\":\"object\",\"properties\":{"
"  \"id\":{\"type\":\"integer\"},\"name\":{\"type\":\"string\"},"
"  \"policy\":{\"type\":\"string\"},"
"  \"token\":{\"type\":\"string\",\"description\":\"The secret: shown "
"  this once\"},"
"  \"created_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"expires_at\":{\"$ref\":\"#/components/schemas/Time\"}}},"
" \"TokenRevoked\":{\"type\":\"object\",\"properties\":{"
"  \"id\":{\"type\":\"integer\"},\"name\":{\"type\":\"string\"},"
"  \"revoked\":{\"type\":\"boolean\"}}},"
" \"Plan\":{\"type\":\"object\",\"description\":\"man "
"  nops-plan.5\",\"properties\":{"
"  \"repository\":{\"type\":\"string\"},\"commit\":{\"type\":\"string\"},"
"  \"file\":{\"type\":\"string\"},"
"  \"state\":{\"type\":\"string\",\"enum\":[\"evaluating\",\"valid\","
"  \"invalid\"]},\"valid\":{\"type\":\"boolean\"},"
"  \"errors\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
"  \"warnings\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
"  \"phases\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
"  \"properties\":{\"name\":{\"type\":\"string\"},"
"  \"include\":{\"type\":\"object\",\"nullable\":true},"
"  \"hosts\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}},"
"  \"hosts\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
"  \"tests\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
"  \"has_infra\":{\"type\":\"boolean\"},"
"  \"evaluated_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"evaluation_seconds\":{\"type\":\"number\"}}},"
" \"PlanList\":{\"type\":\"object\",\"required\":[\"items\",\"next\"],"
"  \"properties\":{\"items\":{\"type\":\"array\",\"items\":"
"  {\"$ref\":\"#/components/schemas/Plan\"}},"
"  \"next\":{\"$ref\":\"#/components/schemas/Next\"}}},"
" \"HostList\":{\"type\":\"object\",\"required\":[\"items\",\"next\"],"
"  \"properties\":{\"items\":{\"type\":\"array\",\"items\":{"
"  \"type\":\"object\",\"properties\":{"
"  \"name\":{\"type\":\"string\"},\"repository\":{\"type\":\"string\"},"
"  \"phase\":{\"type\":\"string\",\"nullable\":true},"
"  \"wanted\":{\"type\":\"string\"},"
"  \"current\":{\"type\":\"string\",\"nullable\":true},"
"  \"booted\":{\"type\":\"string\",\"nullable\":true},"
"  \"state\":{\"type\":\"string\",\"enum\":[\"in_sync\",\"drifted\","
"  \"unreachable\",\"unknown\",\"in_no_phase\",\"invalid_plan\"]},"
"  \"last_step\":{\"type\":\"string\",\"nullable\":true},"
"  \"error\":{\"type\":\"string\",\"nullable\":true}}}},"
"  \"next\":{\"$ref\":\"#/components/schemas/Next\"}}},"
" \"HostDetail\":{\"type\":\"object\",\"description\":\"An item of "
"  HostList, with actions\",\"properties\":{\"name\":{\"type\":"
"  \"string\"},\"repository\":{\"type\":\"string\"},\"actions\":{"
"  \"type\":\"array\",\"items\":{\"type\":\"object\"}}}},"
" \"HostRun\":{\"type\":\"object\",\"properties\":{"
"  \"id\":{\"type\":\"integer\"},\"repository\":{\"type\":\"string\"},"
"  \"host\":{\"type\":\"string\"},\"operation\":{\"type\":\"string\"},"
"  \"action\":{\"type\":\"string\"},\"deployment\":{\"type\":"
"  \"integer\"},\"actor\":{\"type\":\"string\"},\"sensitive\":"
"  {\"type\":\"boolean\"},\"state\":{\"type\":\"string\",\"enum\":"
"  [\"running\",\"succeeded\",\"failed\",\"error\",\"lost\"]},"
"  \"exit_code\":{\"type\":\"integer\",\"nullable\":true},"
"  \"output\":{\"type\":\"string\",\"nullable\":true},"
"  \"error\":{\"type\":\"string\",\"nullable\":true},"
"  \"started_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"ended_at\":{\"$ref\":\"#/components/schemas/Time\"}}},"
" \"HostRunList\":{\"type\":\"object\",\"properties\":{"
"  \"items\":{\"type\":\"array\",\"items\":{\"$ref\":"
"  \"#/components/schemas/HostRun\"}},"
"  \"next\":{\"$ref\":\"#/components/schemas/Next\"}}},"
" \"EachHostRequest\":{\"type\":\"object\",\"properties\":{"
"  \"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":64},"
"  \"hosts\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
"  \"input\":{}}},"
" \"EachHostResult\":{\"type\":\"object\",\"properties\":{"
"  \"repository\":{\"type\":\"string\"},\"commit\":{\"type\":\"string\"},"
"  \"operation\":{\"type\":\"string\"},\"limit\":{\"type\":\"integer\"},"
"  \"sensitive\":{\"type\":\"boolean\"},"
"  \"hosts\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
"  \"properties\":{\"name\":{\"type\":\"string\"},"
"  \"state\":{\"type\":\"string\",\"enum\":[\"succeeded\",\"failed\","
"  \"not_started\"]},"
"  \"exit_code\":{\"type\":\"integer\",\"nullable\":true},"
"  \"output\":{\"type\":\"string\",\"nullable\":true},"
"  \"error\":{\"type\":\"string\",\"nullable\":true}}}},"
"  \"succeeded\":{\"type\":\"integer\"},\"failed\":{\"type\":\"integer\"},"
"  \"not_started\":{\"type\":\"integer\"},"
"  \"error\":{\"type\":\"string\",\"nullable\":true}}},"
" \"PlanSteps\":{\"type\":\"object\",\"properties\":{"
"  \"id\":{\"type\":\"integer\"},\"plan\":{\"type\":\"string\"},"
"  \"state\":{\"type\":\"string\"},\"spec_hash\":{\"type\":\"string\"},"
"  \"steps\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
"  \"properties\":{\"phase\":{\"type\":\"string\"},"
"  \"host\":{\"type\":\"string\"},\"step\":{\"type\":\"string\","
"  \"enum\":[\"preflight\",\"copy\",\"activate\",\"check\",\"record\"]},"
"  \"goal\":{\"type\":\"string\",\"nullable\":true},"
"  \"state\":{\"type\":\"string\",\"enum\":[\"pending\",\"running\","
"  \"succeeded\",\"failed\",\"skipped\"]},"
"  \"error\":{\"type\":\"string\",\"nullable\":true}}}}}},"
" \"PlanInfra\":{\"type\":\"object\",\"properties\":{"
"  \"repository\":{\"type\":\"string\"},\"commit\":{\"type\":\"string\"},"
"  \"infra\":{\"description\":\"free-form, as the plan exports it\"}}},"
" \"Overview\":{\"type\":\"object\",\"description\":\"Lists of "
"  {count, items} (items bounded, count exact)\",\"properties\":{"
"  \"generated_at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"attention\":{\"type\":\"object\"},"
"  \"attention_total\":{\"type\":\"integer\"},"
"  \"in_progress\":{\"type\":\"object\"},"
"  \"repositories\":{\"type\":\"object\"},"
"  \"orphans\":{\"type\":\"object\"},"
"  \"jobs\":{\"type\":\"object\"},\"engine\":{\"type\":\"object\"}}},"
" \"Event\":{\"type\":\"object\",\"properties\":{"
"  \"id\":{\"type\":\"integer\"},"
"  \"at\":{\"$ref\":\"#/components/schemas/Time\"},"
"  \"actor\":{\"type\":\"string\"},\"action\":{\"type\":\"string\"},"
"  \"target\":{\"type\":\"string\",\"nullable\":true},"
"  \"detail\":{\"type\":\"string\",\"nullable\":true}}},"
" \"EventList\":{\"type\":\"object\",\"required\":[\"items\",\"next\"],"
"  \"properties\":{\"items\":{\"type\":\"array\",\"items\":"
"  {\"$ref\":\"#/components/schemas/Event\"}},"
"  \"next\":{\"$ref\":\"#/components/schemas/Next\"}}},"
" \"WebhookPayload\":{\"description\":\"The git host's payload, at most "
"  1 MiB; only its signature is checked\"},"
" \"WebhookAccepted\":{\"type\":\"object\",\"properties\":{"
"  \"repository\":{\"type\":\"string\"},"
"  \"delivery\":{\"type\":\"string\",\"nullable\":true},"
"  \"duplicate\":{\"type\":\"boolean\"},"
"  \"queued\":{\"type\":\"boolean\"}}}"
"}"
"}";

/* What each error status means here, for #/components/responses. */
static const char *
openapi_error_words(int status)
{
	switch (status) {
	case 400:
		return "bad_request: a malformed request";
	case 401:
		return "unauthorized: no identity, or a bad credential (or "
		    "signature)";
	case 403:
		return "forbidden: the identity lacks the capability, a write "
		    "lacks the CSRF token, or a signature does not match";
	case 404:
		return "not_found";
	case 405:
		return "bad_request: the path exists, the method does not";
	case 409:
		return "conflict: the state moved; read it again";
	case 413:
		return "bad_request: the body is over 1 MiB";
	case 415:
		return "bad_request: writes need Content-Type: "
		    "application/json";
	case 422:
		return "invalid_configuration: nops.conf has errors; the "
		    "running one stays";
	case 429:
		return "queue_full: too many requests (or failed logins); "
		    "see Retry-After";
	default:
		return "runtime_error";
	}
}

static json_t *
openapi_responses_component(void)
{
	json_t	*o = json_object();
	size_t	 i;

	for (i = 0; i < sizeof(openapi_errors) / sizeof(openapi_errors[0]);
	    i++)
		json_object_set_new(o, openapi_errors[i].name, jsonb_pack(
		    "{s:s,s:{s:{s:{s:s}}}}",
		    "description",
		    openapi_error_words(openapi_errors[i].status),
		    "content", "application/json", "schema", "$ref",
		    "#/components/schemas/Error"));
	return o;
}

static const char *
openapi_error_name(int status)
{
	size_t	 i;

	for (i = 0; i < sizeof(openapi_errors) / sizeof(openapi_errors[0]);
	    i++)
		if (openapi_errors[i].status == status)
			return openapi_errors[i].name;
	return NULL;
}

static json_t *
openapi_schema_ref(const char *name)
{
	char	 ref[128];

	snprintf(ref, sizeof(ref), "#/components/schemas/%s", name);
	return jsonb_pack("{s:s}", "$ref", ref);
}

static json_t *
openapi_param(const char *name, const char *in)
{
	json_t	*schema;
	size_t	 i;

	for (i = 0; i < sizeof(openapi_params) / sizeof(openapi_params[0]);
	    i++) {
		if (strcmp(openapi_params[i].name, name) != 0 ||
		    strcmp(openapi_params[i].in, in) != 0)
			continue;
		if ((schema = json_loads(openapi_params[i].schema, 0, NULL)) ==
		    NULL)
			fatalx("openapi: parameter %s", name);
		return jsonb_pack("{s:s,s:s,s:b,s:s,s:o}", "name", name,
		    "in", in, "required", strcmp(in, "path") == 0,
		    "description", openapi_params[i].description,
		    "schema", schema);
	}
	/* Undescribed: still a valid parameter. */
	return jsonb_pack("{s:s,s:s,s:b,s:{s:s}}", "name", name, "in", in,
	    "required", strcmp(in, "path") == 0, "schema", "type", "string");
}

/* The route's path with each "*" replaced by {name} of path. */
static int
openapi_same_route(const char *route, const char *path)
{
	while (*route != '\0' && *path != '\0') {
		if (*route == '*' && *path == '{') {
			route++;
			if ((path = strchr(path, '}')) == NULL)
				return 0;
			path++;
			continue;
		}
		if (*route++ != *path++)
			return 0;
	}
	return *route == '\0' && *path == '\0';
}

static const struct openapi_op *
openapi_op_find(const char *method, const char *route)
{
	size_t	 i;

	for (i = 0; i < sizeof(openapi_ops) / sizeof(openapi_ops[0]); i++)
		if (strcmp(openapi_ops[i].method, method) == 0 &&
		    strcmp(openapi_ops[i].route, route) == 0 &&
		    openapi_same_route(route, openapi_ops[i].path))
			return &openapi_ops[i];
	return NULL;
}

static void
openapi_add_status(json_t *responses, int status)
{
	char	 code[8];
	const char *name;
	char	 ref[128];

	if ((name = openapi_error_name(status)) == NULL)
		return;
	snprintf(code, sizeof(code), "%d", status);
	snprintf(ref, sizeof(ref), "#/components/responses/%s", name);
	json_object_set_new(responses, code, jsonb_pack("{s:s}", "$ref", ref));
}

/* The parameters of path and of op (NULL: undescribed). */
static json_t *
openapi_op_params(const struct openapi_op *op, const char *path)
{
	json_t		*params;
	const char	*p, *q, *end;
	char		 name[64];
	size_t		 n;

	params = json_array();
	/* Path parameters, in order. */
	for (p = path; (p = strchr(p, '{')) != NULL; p = end + 1) {
		if ((end = strchr(p, '}')) == NULL)
			break;
		n = (size_t)(end - p - 1);
		if (n >= sizeof(name))
			n = sizeof(name) - 1;
		memcpy(name, p + 1, n);
		name[n] = '\0';
		json_array_append_new(params, openapi_param(name, "path"));
	}
	for (q = op != NULL && op->query != NULL ? op->query : ""; *q != '\0';
	    q += n) {
		q += strspn(q, " ");
		n = strcspn(q, " ");
		if (n == 0 || n >= sizeof(name))
			break;
		memcpy(name, q, n);
		name[n] = '\0';
		json_array_append_new(params, openapi_param(name, "query"));
	}
	if (op != NULL && strcmp(op->route, "/webhook/git/*") == 0) {
		static const char *const hs[] = { "X-Hub-Signature-256",
		    "X-Gitea-Signature", "X-Gitlab-Token", "X-GitHub-Delivery",
		    "X-Gitea-Delivery", "X-Gitlab-Event-UUID" };

		for (n = 0; n < sizeof(hs) / sizeof(hs[0]); n++)
			json_array_append_new(params, jsonb_pack(
			    "{s:s,s:s,s:b,s:{s:s}}", "name", hs[n], "in",
			    "header", "required", 0, "schema", "type",
			    "string"));
	}

	return params;
}

/* op's answers: its success, its errors, and 500. */
static void
openapi_op_responses(const struct openapi_op *op, json_t *responses)
{
	json_t		*content;
	const char	*p;
	char		 code[8];
	size_t		 n;
	int		 status;

	status = op->status;
	snprintf(code, sizeof(code), "%d", status);
	if (op->response != NULL)
		content = jsonb_pack("{s:{s:o}}", "application/json", "schema",
		    openapi_schema_ref(op->response));
	else
		content = jsonb_pack("{s:{s:{s:s}}}", METRICS_CTYPE,
		    "schema", "type", "string");
	json_object_set_new(responses, code, jsonb_pack("{s:s,s:o}",
	    "description", "Success", "content", content));
	for (p = op->errors != NULL ? op->errors : ""; *p != '\0'; p += n) {
		p += strspn(p, " ");
		n = strcspn(p, " ");
		if (n == 0)
			break;
		status = atoi(p);
		if (status >= 200 && status < 300) {
			/* Another success (e.g. 202 queued): same body kind. */
			snprintf(code, sizeof(code), "%d", status);
			json_object_set_new(responses, code, jsonb_pack(
			    "{s:s,s:{s:{s:o}}}", "description", "Success",
			    "content", "application/json", "schema",
			    openapi_schema_ref(op->response != NULL ?
			    op->response : "Empty")));
		} else
			openapi_add_status(responses, status);
	}
	openapi_add_status(responses, 500);
}

static json_t *
openapi_operation(const struct openapi_op *op, const char *path)
{
	json_t		*o, *params, *responses;

	params = openapi_op_params(op, path);

	responses = json_object();
	if (op == NULL) {
		json_object_set_new(responses, "default", jsonb_pack("{s:s}",
		    "description", "Not described yet"));
		o = jsonb_pack("{s:s,s:s,s:o,s:b}", "operationId", path,
		    "summary", "Not described yet", "responses", responses,
		    "x-nops-undescribed", 1);
		json_object_set_new(o, "parameters", params);
		return o;
	}
	openapi_op_responses(op, responses);

	o = jsonb_pack("{s:[s],s:s,s:s,s:o}", "tags", op->tag, "summary",
	    op->summary, "description", "", "responses", responses);
	json_object_set_new(o, "description", jsonb_printf("Access: %s.",
	    op->access));
	json_object_set_new(o, "x-nops-access", jsonb_str(op->access));
	if (json_array_size(params) > 0)
		json_object_set_new(o, "parameters", params);
	else
		json_decref(params);
	if (op->request != NULL)
		json_object_set_new(o, "requestBody", jsonb_pack(
		    "{s:b,s:{s:{s:o}}}", "required",
		    strcmp(op->request, "Empty") != 0, "content",
		    strcmp(op->route, "/webhook/git/*") == 0 ? "*/*" :
		    "application/json", "schema",
		    openapi_schema_ref(op->request)));
	if (op->public)
		json_object_set_new(o, "security",
		    strcmp(op->route, "/metrics") == 0 ?
		    jsonb_pack("[{s:[]},{s:[]},{s:[]}]", "metricsToken",
		    "bearer", "session") : json_array());
	return o;
}

struct openapi_build {
	json_t	*paths;
};

static void
openapi_add_route(const struct api_route *r, void *arg)
{
	struct openapi_build	*b = arg;
	const struct openapi_op	*op;
	json_t			*item;
	char			 path[512], lower[16];
	const char		*s;
	size_t			 o, i, nargs = 0;

	/* Test builds' debugging routes are no part of the API. */
	if (strncmp(r->path, "/api/v1/debug/", 14) == 0)
		return;
	op = openapi_op_find(r->method, r->path);
	if (op != NULL)
		strlcpy(path, op->path, sizeof(path));
	else {
		/* {arg1}, {arg2}, ... for an undescribed route's segments. */
		for (s = r->path, o = 0; *s != '\0' && o + 8 < sizeof(path);
		    s++) {
			if (*s == '*')
				o += (size_t)snprintf(path + o,
				    sizeof(path) - o,
				    "{arg%zu}", ++nargs);
			else
				path[o++] = *s;
		}
		path[o] = '\0';
	}
	for (i = 0; i < sizeof(lower) - 1 && r->method[i] != '\0'; i++)
		lower[i] = (char)(r->method[i] >= 'A' && r->method[i] <= 'Z' ?
		    r->method[i] - 'A' + 'a' : r->method[i]);
	lower[i] = '\0';
	if ((item = json_object_get(b->paths, path)) == NULL) {
		item = json_object();
		json_object_set_new(b->paths, path, item);
	}
	json_object_set_new(item, lower, openapi_operation(op, path));
}

json_t *
openapi_document(void)
{
	struct openapi_build	 b;
	json_error_t		 jerr;
	json_t			*doc, *components;

	if ((components = json_loads(openapi_components, 0, &jerr)) == NULL) {
		log_warnx("openapi: components, line %d: %s", jerr.line,
		    jerr.text);
		return NULL;
	}
	json_object_set_new(components, "responses",
	    openapi_responses_component());
	b.paths = json_object();
	api_route_foreach(openapi_add_route, &b);
	doc = jsonb_pack("{s:s,s:{s:s,s:s,s:s},s:[{s:s}],s:[{s:[]},{s:[]}],"
	    "s:o,s:o}",
	    "openapi", "3.0.3",
	    "info", "title", "nops", "version", NOPS_VERSION,
	    "description", "The HTTP API of nopsd, the GitOps deployer for "
	    "Nomad jobs and hosts.  Lists answer {\"items\": [...], \"next\": "
	    "cursor or null} and take ?limit= and ?cursor=.  Writes are POST "
	    "with Content-Type: application/json.  Errors answer "
	    "{\"error\": {\"code\", \"message\"}}.",
	    "servers", "url", "/",
	    "security", "bearer", "session",
	    "paths", b.paths,
	    "components", components);
	return doc;
}

static void
openapi_get(struct api_req *req, struct api_resp *resp)
{
	json_t	*doc;

	if ((doc = openapi_document()) == NULL) {
		api_error(resp, 500, "runtime_error", "cannot build the "
		    "document");
		return;
	}
	resp->status = 200;
	resp->body = doc;
}

/* Public: the API's description holds nothing of its state. */
const struct api_route openapi_routes[] = {
	{ "GET", "/api/v1/openapi.json", 0, openapi_get, ACL_ROUTE_PUBLIC,
	    API_NS_NONE },
};
const size_t openapi_nroutes = sizeof(openapi_routes) /
    sizeof(openapi_routes[0]);
