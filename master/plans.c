/*
 * The deploy plan of each repository (man/nops-plan.5): taken from each
 * new snapshot, evaluated when it is Nix (in a sandboxed child, never
 * here: nixrun.c), checked (shared/plan.c), and kept in memory with its
 * commit until the next snapshot.  A plan with any error is kept only
 * to be shown; nothing of it is deployed.
 *
 * A Nix plan that fails to evaluate is evaluated again part by part
 * (the host names, each host, the rest) so that every bad host is
 * reported at once, the way nix-eval-jobs reports each attribute.
 */
#include "config.h"

#include <sys/queue.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "xmalloc.h"
#include "master.h"
#include "nixrun.h"
#include "conf.h"
#include "plan.h"
#include "plans.h"
#include "repo.h"
#include "api.h"
#include "webpub.h"
#include "jsonb.h"
#include "hosts.h"

#define PLANS_NIX_ERROR_MAX	2048		/* of one error, shown */

/*
 * The wrapper each evaluation runs: it calls the plan's function with
 * the arguments it declares (namesToInclude, withTests), and picks the
 * part asked for.
 */
static const char plans_wrapper[] =
	"{ namesToInclude ? [ ], withTests ? true, part ? \"all\","
	" host ? \"\", withDrv ? false }:\n"
	"let\n"
	"  f = import ./src/PLANFILE;\n"
	"  args = { inherit namesToInclude withTests; };\n"
	"  plan = if builtins.isFunction f\n"
	"    then f (builtins.intersectAttrs (builtins.functionArgs f) args)\n"
	"    else f;\n"
	"  drv = h: if withDrv && builtins.isAttrs h && h ? system &&\n"
	"    builtins.isAttrs h.system && h.system ? drvPath\n"
	"    then h // { drv = h.system.drvPath; } else h;\n"
	"  test = t: if withDrv && builtins.isAttrs t && t ? build &&\n"
	"    builtins.isAttrs t.build && t.build ? drvPath\n"
	"    then t // { build = t.build.drvPath; } else t;\n"
	"  tests = if plan ? tests && builtins.isList plan.tests\n"
	"    then { tests = map test plan.tests; } else { };\n"
	"in\n"
	"  if part == \"names\" then builtins.attrNames plan.hosts\n"
	"  else if part == \"host\" then drv plan.hosts.${host}\n"
	"  else if part == \"rest\""
	    " then removeAttrs plan [ \"hosts\" ] // tests\n"
	"  else plan // tests //\n"
	"    { hosts = builtins.mapAttrs (n: drv) plan.hosts; }\n";

#define PLANS_STAGE_ALL		0	/* the whole plan */
#define PLANS_STAGE_NAMES	1	/* it failed: the host names */
#define PLANS_STAGE_PARTS	2	/* each host, then the rest */

struct plans_entry {
	TAILQ_ENTRY(plans_entry) pe_entry;
	char			*pe_repo;
	char			 pe_commit[GITW_COMMIT_HEXLEN + 1];
	char			*pe_file;	/* nops.plan.json or .nix */
	struct plan		*pe_plan;	/* NULL while evaluating */
	time_t			 pe_evaluated_at;
	double			 pe_eval_secs;
	/* while a Nix plan evaluates */
	const struct repo_snap	*pe_snap;	/* referenced */
	int			 pe_run;	/* nixrun id, 0: none */
	struct timespec		 pe_started;
	char			**pe_names;	/* part by part: host names */
	size_t			 pe_nnames;
	size_t			 pe_next;	/* next host; == n: the rest */
	int			 pe_stage;	/* PLANS_STAGE_* */
	struct plan		*pe_errs;	/* errors gathered so far */
};

static TAILQ_HEAD(, plans_entry) plans_list =
    TAILQ_HEAD_INITIALIZER(plans_list);

static void	 plans_eval(struct plans_entry *, const char *part,
		    const char *host);

/*
 * Alike on purpose: cfile_find (cfile.c), notifier_find (notify.c) and
 * repo_find (repo.c) search their own TAILQ by name the same way; the
 * element types differ, and one search for all would need a macro.
 */
static struct plans_entry *
plans_find(const char *repo)
{
	struct plans_entry	*pe;

	TAILQ_FOREACH(pe, &plans_list, pe_entry)
		if (strcmp(pe->pe_repo, repo) == 0)
			return pe;
	return NULL;
}

static void
plans_stop_eval(struct plans_entry *pe)
{
	size_t	 i;

	if (pe->pe_run != 0)
		nixrun_cancel(pe->pe_run);
	pe->pe_run = 0;
	if (pe->pe_snap != NULL)
		repo_snap_unref(pe->pe_snap);
	pe->pe_snap = NULL;
	for (i = 0; i < pe->pe_nnames; i++)
		free(pe->pe_names[i]);
	free(pe->pe_names);
	pe->pe_names = NULL;
	pe->pe_nnames = pe->pe_next = 0;
	plan_free(pe->pe_errs);
	pe->pe_errs = NULL;
	pe->pe_stage = PLANS_STAGE_ALL;
}

static void
plans_set(struct plans_entry *pe, struct plan *pl)
{
	struct timespec	 now;
	size_t		 i;

	plan_free(pe->pe_plan);
	pe->pe_plan = pl;
	pe->pe_evaluated_at = time(NULL);
	clock_gettime(CLOCK_MONOTONIC, &now);
	pe->pe_eval_secs = (now.tv_sec - pe->pe_started.tv_sec) +
	    (now.tv_nsec - pe->pe_started.tv_nsec) / 1e9;
	if (pl->pl_nerrors_all > 0)
		log_warnx("plan of %s at %.12s: %zu error%s, first: %s",
		    pe->pe_repo, pe->pe_commit, pl->pl_nerrors_all,
		    pl->pl_nerrors_all == 1 ? "" : "s", pl->pl_errors[0]);
	else
		log_info("plan of %s at %.12s: %zu hosts in %zu phases",
		    pe->pe_repo, pe->pe_commit, pl->pl_nhosts,
		    pl->pl_nphases);
	for (i = 0; i < pl->pl_nwarnings; i++)
		log_warnx("plan of %s: %s", pe->pe_repo, pl->pl_warnings[i]);
	webpub_changed();
	hosts_plan_changed(pe->pe_repo);
}

/* Nix's message without its warnings and trace hint, bounded. */
static char *
plans_nix_error(const char *err)
{
	char		*out, *o;
	const char	*line, *nl;
	size_t		 len;

	if ((out = calloc(1, PLANS_NIX_ERROR_MAX + 1)) == NULL)
		fatal("calloc");
	o = out;
	for (line = err; *line != '\0'; line = nl) {
		if ((nl = strchr(line, '\n')) == NULL)
			nl = line + strlen(line);
		len = nl - line;
		if (*nl == '\n')
			nl++;
		if (len == 0 || strncmp(line, "warning:", 8) == 0 ||
		    strncmp(line, "GC Warning:", 11) == 0 ||
		    strncmp(line, "(use '--show-trace'", 19) == 0)
			continue;
		if ((size_t)(o - out) + len + 1 > PLANS_NIX_ERROR_MAX)
			break;
		if (o != out)
			*o++ = ' ';
		while (len > 0 && (*line == ' ' || *line == '\t')) {
			line++;
			len--;
		}
		memcpy(o, line, len);
		o += len;
	}
	*o = '\0';
	for (o = out; *o != '\0'; o++)
		if ((unsigned char)*o < 0x20 || (unsigned char)*o == 0x7f)
			*o = ' ';
	if (out[0] == '\0')
		strlcpy(out, "failed without a message", PLANS_NIX_ERROR_MAX);
	/* Nix's allocator met RLIMIT_AS: say which limit it was. */
	if (strstr(out, "out of memory") != NULL) {
		char	 size[32];

		(void)config_fmt_size(hosts_conf() != NULL ?
		    hosts_conf()->hosts.eval_memory : NOPS_EVAL_MEMORY, size,
		    sizeof(size));
		len = strlen(out);
		snprintf(out + len, PLANS_NIX_ERROR_MAX + 1 - len, "%s(the "
		    "evaluation needs more than eval-memory %s of nops.conf)",
		    len > 0 ? " " : "", size);
	}
	return out;
}

static void
plans_eval_next(struct plans_entry *pe)
{
	if (pe->pe_next < pe->pe_nnames)
		plans_eval(pe, "host", pe->pe_names[pe->pe_next]);
	else if (pe->pe_next == pe->pe_nnames)
		plans_eval(pe, "rest", NULL);
	else {
		struct plan	*pl = pe->pe_errs;

		pe->pe_errs = NULL;
		if (pl->pl_nerrors_all == 0)
			plan_error(pl, "the plan failed to evaluate as a "
			    "whole, but each part evaluated");
		plans_stop_eval(pe);
		plans_set(pe, pl);
	}
}

static void
plans_eval_done(int status, const char *out, size_t outlen, const char *err,
    void *arg)
{
	struct plans_entry	*pe = arg;
	struct plan		*pl;
	json_t			*names, *v;
	json_error_t		 jerr;
	char			*msg;
	size_t			 i;

	pe->pe_run = 0;
	switch (pe->pe_stage) {
	case PLANS_STAGE_ALL:
		if (status == 0) {
			pl = plan_parse(out, outlen);
			plans_stop_eval(pe);
			plans_set(pe, pl);
			return;
		}
		if (status == -1) {
			/* Killed (time, memory): once is enough. */
			msg = plans_nix_error(err);
			plans_stop_eval(pe);
			plans_set(pe, plan_failed("evaluation: %s", msg));
			free(msg);
			return;
		}
		/* Again part by part, starting with the names. */
		if ((pe->pe_errs = calloc(1, sizeof(struct plan))) == NULL)
			fatal("calloc");
		pe->pe_stage = PLANS_STAGE_NAMES;
		plans_eval(pe, "names", NULL);
		return;
	case PLANS_STAGE_NAMES:
		names = status == 0 ? json_loadb(out, outlen, 0, &jerr) : NULL;
		if (!json_is_array(names)) {
			json_decref(names);
			msg = plans_nix_error(err);
			pl = pe->pe_errs;
			pe->pe_errs = NULL;
			plan_error(pl, "evaluation: %s", msg);
			free(msg);
			plans_stop_eval(pe);
			plans_set(pe, pl);
			return;
		}
		if ((pe->pe_names = calloc(json_array_size(names) + 1,
		    sizeof(char *))) == NULL)
			fatal("calloc");
		json_array_foreach(names, i, v) {
			if (!json_is_string(v) || strspn(json_string_value(v),
			    "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789._-") != json_string_length(v) ||
			    json_string_length(v) == 0 ||
			    json_string_length(v) > PLAN_NAME_MAX) {
				plan_error(pe->pe_errs, "hosts: \"%.64s\" is "
				    "not a host name", json_is_string(v) ?
				    json_string_value(v) : "?");
				continue;
			}
			pe->pe_names[pe->pe_nnames++] =
			    xstrdup(json_string_value(v));
		}
		json_decref(names);
		pe->pe_stage = PLANS_STAGE_PARTS;
		pe->pe_next = 0;
		plans_eval_next(pe);
		return;
	default:
		break;
	}
	if (status != 0) {
		msg = plans_nix_error(err);
		if (pe->pe_next < pe->pe_nnames)
			plan_error(pe->pe_errs, "host \"%s\": evaluation: %s",
			    pe->pe_names[pe->pe_next], msg);
		else
			plan_error(pe->pe_errs, "evaluation (meta, defaults, "
			    "phases, tests, infra): %s", msg);
		free(msg);
	}
	pe->pe_next++;
	plans_eval_next(pe);
}

/*
 * The files the evaluation sees: every .nix file of the snapshot, below
 * src/ (as the repository), and the wrapper eval.nix naming the plan.
 * Their count; free *filesp, *pathsp and *wrapperp.
 */
static size_t
plans_eval_files(const struct repo_snap *s, struct nixrun_file **filesp,
    char **pathsp, char **wrapperp)
{
	struct nixrun_file	*files;
	char			*wrapper, *p, *paths;
	size_t			 i, n = 0, plen, off = 0;

	if ((files = calloc(s->rs_nfiles + 1, sizeof(*files))) == NULL)
		fatal("calloc");
	for (i = 0; i < s->rs_nfiles; i++)
		if (s->rs_files[i].rf_kind == GITW_FILE_NIX ||
		    s->rs_files[i].rf_kind == GITW_FILE_PLAN_NIX)
			off += strlen(s->rs_files[i].rf_path) + 5;
	if ((paths = malloc(off + 1)) == NULL)
		fatal("malloc");
	off = 0;
	for (i = 0; i < s->rs_nfiles; i++) {
		if (s->rs_files[i].rf_kind != GITW_FILE_NIX &&
		    s->rs_files[i].rf_kind != GITW_FILE_PLAN_NIX)
			continue;
		plen = strlen(s->rs_files[i].rf_path) + 5;
		snprintf(paths + off, plen, "src/%s", s->rs_files[i].rf_path);
		files[n].nf_path = paths + off;
		files[n].nf_data = s->rs_files[i].rf_data;
		files[n].nf_size = s->rs_files[i].rf_size;
		n++;
		off += plen;
	}
	/* The wrapper, with the plan's path in it. */
	if ((p = strstr(plans_wrapper, "PLANFILE")) == NULL)
		fatalx("plans_wrapper");
	wrapper = xasprintf("%.*s%s%s", (int)(p - plans_wrapper),
	    plans_wrapper, s->rs_plan_nix->rf_path, p + 8);
	files[n].nf_path = "eval.nix";
	files[n].nf_data = wrapper;
	files[n].nf_size = strlen(wrapper);
	n++;
	*filesp = files;
	*pathsp = paths;
	*wrapperp = wrapper;
	return n;
}

static void
plans_eval(struct plans_entry *pe, const char *part, const char *host)
{
	const struct repo_snap	*s = pe->pe_snap;
	struct nixrun_spec	 ns;
	struct nixrun_file	*files;
	const char		*argv[NIXRUN_ARGS_MAX];
	char			*wrapper, *paths, what[256], err[256];
	char			 bin[PATH_MAX];
	const char		*store;
	size_t			 n;
	int			 a = 0;

	n = plans_eval_files(s, &files, &paths, &wrapper);
	memset(&ns, 0, sizeof(ns));
	snprintf(what, sizeof(what), "evaluate the plan of %s (%s%s%s)",
	    pe->pe_repo, part, host != NULL ? " " : "",
	    host != NULL ? host : "");
	ns.ns_what = what;
	strlcpy(bin, nixrun_bin("nix-instantiate"), sizeof(bin));
	argv[a++] = bin;
	argv[a++] = "--eval";
	argv[a++] = "--strict";
	argv[a++] = "--json";
	/*
	 * With a Nix store to build in, evaluation writes the .drv files
	 * there (through its daemon) so that a deployment can realise
	 * them; else it writes nothing.
	 */
	store = hosts_conf() != NULL ? hosts_conf()->hosts.nix_store : NULL;
	argv[a++] = store != NULL ? "--read-write-mode" :
	    "--readonly-mode";
	ns.ns_store = store;
	argv[a++] = "--option";
	argv[a++] = "restrict-eval";
	argv[a++] = "true";
	argv[a++] = "--option";
	argv[a++] = "allow-import-from-derivation";
	argv[a++] = "false";
	argv[a++] = "-I";
	argv[a++] = "nops=.";
	argv[a++] = "--arg";
	argv[a++] = "namesToInclude";
	argv[a++] = "[ ]";
	argv[a++] = "--arg";
	argv[a++] = "withTests";
	argv[a++] = "true";
	argv[a++] = "--arg";
	argv[a++] = "withDrv";
	argv[a++] = store != NULL ? "true" : "false";
	argv[a++] = "--argstr";
	argv[a++] = "part";
	argv[a++] = part;
	if (host != NULL) {
		argv[a++] = "--argstr";
		argv[a++] = "host";
		argv[a++] = host;
	}
	argv[a++] = "./eval.nix";
	argv[a] = NULL;
	ns.ns_argv = argv;
	ns.ns_files = files;
	ns.ns_nfiles = n;
	/* The limits of nops.conf's hosts block (defaults without one). */
	ns.ns_timeout = hosts_conf() != NULL ?
	    hosts_conf()->hosts.eval_timeout : NOPS_EVAL_TIMEOUT;
	ns.ns_memory = hosts_conf() != NULL ?
	    hosts_conf()->hosts.eval_memory : NOPS_EVAL_MEMORY;
	ns.ns_stdout_fd = -1;
	if ((pe->pe_run = nixrun_start(&ns, plans_eval_done, pe, err,
	    sizeof(err))) == -1) {
		pe->pe_run = 0;
		plans_stop_eval(pe);
		plans_set(pe, plan_failed("evaluation could not start: %s",
		    err));
	}
	free(wrapper);
	free(paths);
	free(files);
}

void
plans_snapshot(const char *repo, const struct repo_snap *s)
{
	struct plans_entry	*pe;

	pe = plans_find(repo);
	if (s->rs_plan == NULL && s->rs_plan_nix == NULL) {
		if (pe != NULL) {
			plans_stop_eval(pe);
			TAILQ_REMOVE(&plans_list, pe, pe_entry);
			plan_free(pe->pe_plan);
			free(pe->pe_repo);
			free(pe->pe_file);
			free(pe);
			webpub_changed();
			hosts_plan_changed(repo);
		}
		return;
	}
	if (pe == NULL) {
		if ((pe = calloc(1, sizeof(*pe))) == NULL)
			fatal("calloc");
		pe->pe_repo = xstrdup(repo);
		TAILQ_INSERT_TAIL(&plans_list, pe, pe_entry);
	} else if (strcmp(pe->pe_commit, s->rs_commit) == 0 &&
	    (pe->pe_plan != NULL || pe->pe_snap != NULL))
		return;		/* the same commit: nothing new */
	plans_stop_eval(pe);
	strlcpy(pe->pe_commit, s->rs_commit, sizeof(pe->pe_commit));
	free(pe->pe_file);
	pe->pe_file = xstrdup(s->rs_plan != NULL ? s->rs_plan->rf_path :
	    s->rs_plan_nix->rf_path);
	clock_gettime(CLOCK_MONOTONIC, &pe->pe_started);
	if (s->rs_plan != NULL && s->rs_plan_nix != NULL) {
		plans_set(pe, plan_failed("both %s and %s: keep one",
		    GITW_PLAN_FILE, GITW_PLAN_NIX_FILE));
		return;
	}
	if (s->rs_plan != NULL) {
		plans_set(pe, plan_parse((const char *)s->rs_plan->rf_data,
		    s->rs_plan->rf_size));
		return;
	}
	/* Nix: the old plan (another commit) is shown until this one is. */
	repo_snap_ref(s);
	pe->pe_snap = s;
	plans_eval(pe, "all", NULL);
}

const struct plan *
plans_get(const char *repo, const char **commit)
{
	struct plans_entry	*pe;

	if ((pe = plans_find(repo)) == NULL || pe->pe_plan == NULL)
		return NULL;
	if (pe->pe_snap != NULL)
		return NULL;	/* a newer commit is being evaluated */
	if (commit != NULL)
		*commit = pe->pe_commit;
	return pe->pe_plan;
}

const char *
plans_first(void)
{
	return TAILQ_EMPTY(&plans_list) ? NULL :
	    TAILQ_FIRST(&plans_list)->pe_repo;
}

const char *
plans_next(const char *repo)
{
	struct plans_entry	*pe;

	if ((pe = plans_find(repo)) == NULL ||
	    (pe = TAILQ_NEXT(pe, pe_entry)) == NULL)
		return NULL;
	return pe->pe_repo;
}

json_t *
plans_json(const char *repo)
{
	struct plans_entry	*pe;
	json_t			*o;
	const char		*state;

	if ((pe = plans_find(repo)) == NULL)
		return NULL;
	if (pe->pe_plan != NULL)
		o = plan_json(pe->pe_plan);
	else if ((o = json_object()) == NULL)
		fatal("json_object");
	if (pe->pe_snap != NULL)
		state = "evaluating";
	else if (pe->pe_plan == NULL)
		state = "evaluating";
	else
		state = pe->pe_plan->pl_nerrors_all == 0 ? "valid" : "invalid";
	json_object_set_new(o, "repository", jsonb_str(pe->pe_repo));
	json_object_set_new(o, "commit", jsonb_str(pe->pe_commit));
	json_object_set_new(o, "file", jsonb_str(pe->pe_file));
	json_object_set_new(o, "state", jsonb_str(state));
	json_object_set_new(o, "evaluated_at",
	    api_time_json(pe->pe_evaluated_at));
	json_object_set_new(o, "evaluation_seconds",
	    json_real(pe->pe_eval_secs));
	return o;
}

static void
plans_api_list(struct api_req *req, struct api_resp *resp)
{
	struct plans_entry	*pe;
	json_t			*items, *o;

	if ((items = json_array()) == NULL)
		fatal("json_array");
	TAILQ_FOREACH(pe, &plans_list, pe_entry) {
		o = plans_json(pe->pe_repo);
		json_object_del(o, "hosts");
		json_object_set_new(o, "actions", hosts_each_actions_json(req,
		    pe->pe_repo));
		json_array_append_new(items, o);
	}
	resp->body = jsonb_pack("{s:o, s:n}", "items", items, "next");
	resp->status = 200;
}

static void
plans_api_one(struct api_req *req, struct api_resp *resp)
{
	if ((resp->body = plans_json(req->ar_args[0])) == NULL) {
		api_error(resp, 404, "not_found", "no plan in repository %s",
		    req->ar_args[0]);
		return;
	}
	json_object_set_new(resp->body, "actions", hosts_each_actions_json(req,
	    req->ar_args[0]));
	resp->status = 200;
}

static void
plans_api_infra(struct api_req *req, struct api_resp *resp)
{
	struct plans_entry	*pe;

	if ((pe = plans_find(req->ar_args[0])) == NULL ||
	    pe->pe_plan == NULL) {
		api_error(resp, 404, "not_found", "no plan in repository %s",
		    req->ar_args[0]);
		return;
	}
	if (pe->pe_plan->pl_nerrors_all > 0) {
		api_error(resp, 409, "conflict", "the plan of %s at %.12s has "
		    "errors", pe->pe_repo, pe->pe_commit);
		return;
	}
	if (pe->pe_plan->pl_infra == NULL) {
		api_error(resp, 404, "not_found", "the plan of %s exports no "
		    "infra document", pe->pe_repo);
		return;
	}
	resp->body = jsonb_pack("{s:s, s:s, s:O}", "repository", pe->pe_repo,
	    "commit", pe->pe_commit, "infra", pe->pe_plan->pl_infra);
	resp->status = 200;
}

/*
 * Alike on purpose: a route table like hosts_api.c's and api_engine.c's;
 * the rows are data api.c reads, only their layout repeats.
 */
const struct api_route plans_routes[] = {
	{ "GET",  "/api/v1/plans",		1, plans_api_list, CAP_READ,
	    API_NS_NONE },
	{ "GET",  "/api/v1/plans/*",		1, plans_api_one, CAP_READ,
	    API_NS_NONE },
	{ "GET",  "/api/v1/plans/*/infra",	1, plans_api_infra, CAP_READ,
	    API_NS_NONE },
};
const size_t plans_nroutes = sizeof(plans_routes) / sizeof(plans_routes[0]);
