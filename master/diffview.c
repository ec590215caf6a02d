/*
 * The plan diff as the API shows it: Nomad's diff, redacted, with
 * durations written as durations ("15s", not "15000000000"), and, in
 * what a diff adds (a new job, group, task or block), the fields the job
 * file does not set marked "Default": true (an object of nothing else
 * too): Nomad filled them in.  Clients fold them, so the operator reads
 * what git says first.  Which fields the file sets is read from the file
 * itself (shared/hcl.c), so a value the file spells out is never folded,
 * even when it equals Nomad's default.  The stored diff is left as Nomad
 * gave it.
 */
#include "config.h"

#include <sys/types.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hcl.h"
#include "engine.h"

/* A part of the job the file does not have: all of it is Nomad's. */
static const struct hcl_node diffview_nothing = { .hn_block = 1 };

/* Fields whose values are nanoseconds (Nomad's time.Duration). */
static const char *const diffview_durations[] = {
	"KillTimeout", "ShutdownDelay", "MinHealthyTime", "HealthyDeadline",
	"ProgressDeadline", "Stagger", "Delay", "Interval", "MaxDelay",
	"MaxClientDisconnect", "StopAfterClientDisconnect", "Splay",
	"Timeout", "Grace", "MaxKillTimeout", "CheckInterval", NULL
};

/*
 * Diff names whose HCL name is not theirs in snake case (after the
 * normalisation of diffview_norm): the diff's -> the file's.
 */
static const struct {
	const char	*da_diff;
	const char	*da_hcl;
} diffview_aliases[] = {
	{ "logconfig", "logs" },
	{ "parameterizedjob", "parameterized" },
	{ "networks", "network" },
	{ "services", "service" },
	{ "constraints", "constraint" },
	{ "affinities", "affinity" },
	{ "spreads", "spread" },
	{ "templates", "template" },
	{ "volumemounts", "volumemount" },
	{ "embeddedtmpl", "data" },
	{ "destpath", "destination" },
	{ "sourcepath", "source" },
	{ "portlabel", "port" },
};

static int
diffview_is_duration(const char *name)
{
	size_t	 i;

	for (i = 0; diffview_durations[i] != NULL; i++)
		if (strcmp(diffview_durations[i], name) == 0)
			return 1;
	return 0;
}

/* "90000000000" -> "1m30s"; NULL when s is not a whole number of ns. */
static json_t *
diffview_duration(const char *s)
{
	char		 buf[64], *end;
	long long	 ns, h, m;
	double		 sec;
	size_t		 n = 0;

	if (s == NULL || *s == '\0')
		return NULL;
	errno = 0;
	ns = strtoll(s, &end, 10);
	if (*end != '\0' || errno != 0 || ns < 0)
		return NULL;
	if (ns == 0)
		return json_string("0s");
	h = ns / 3600000000000LL;
	ns -= h * 3600000000000LL;
	m = ns / 60000000000LL;
	ns -= m * 60000000000LL;
	sec = ns / 1e9;
	buf[0] = '\0';
	if (h > 0)
		n += snprintf(buf + n, sizeof(buf) - n, "%lldh", h);
	if (m > 0)
		n += snprintf(buf + n, sizeof(buf) - n, "%lldm", m);
	if (ns > 0 && ns % 1000000000LL == 0)
		snprintf(buf + n, sizeof(buf) - n, "%llds",
		    (long long)(ns / 1000000000LL));
	else if (ns > 0)
		snprintf(buf + n, sizeof(buf) - n, "%gs", sec);
	return json_string(buf);
}

/*
 * A name as both sides can be compared: lowercase letters and digits,
 * without "_", an index ("args[0]") or key ("Meta[x]": meta), a unit
 * suffix "mb" (MemoryMB: memory) or "policy" (RestartPolicy: restart).
 */
static void
diffview_norm(const char *s, char *out, size_t outlen)
{
	size_t	 n = 0, i;

	for (; *s != '\0' && *s != '[' && n + 1 < outlen; s++)
		if (isalnum((unsigned char)*s))
			out[n++] = (char)tolower((unsigned char)*s);
	out[n] = '\0';
	if (n > 2 && strcmp(out + n - 2, "mb") == 0)
		out[n - 2] = '\0';
	else if (n > 6 && strcmp(out + n - 6, "policy") == 0)
		out[n - 6] = '\0';
	for (i = 0; i < sizeof(diffview_aliases) /
	    sizeof(diffview_aliases[0]); i++)
		if (strcmp(out, diffview_aliases[i].da_diff) == 0) {
			strlcpy(out, diffview_aliases[i].da_hcl, outlen);
			break;
		}
}

/* The child of scope (attribute or block) the diff's name stands for. */
static const struct hcl_node *
diffview_in_file(const struct hcl_node *scope, const char *name)
{
	const struct hcl_node	*c;
	char			 want[128], have[128];

	if (scope == NULL || name == NULL)
		return NULL;
	diffview_norm(name, want, sizeof(want));
	for (c = scope->hn_child; c != NULL; c = c->hn_next) {
		diffview_norm(c->hn_name, have, sizeof(have));
		if (strcmp(want, have) == 0)
			return c;
	}
	return NULL;
}

/*
 * One level: its fields, then its objects (named), groups and tasks;
 * scope is the part of the job file that level comes from (NULL: the
 * file has none, so all of it is Nomad's).  In what is added, a field the
 * file does not set is marked Default.  Returns 1 when everything in o
 * is (and it is not empty).
 */
static int
diffview_walk(json_t *o, const struct hcl_node *scope, int added, int depth)
{
	static const char *const lists[] = { "TaskGroups", "Tasks" };
	static const char *const blocks[] = { "group", "task" };
	json_t		*f, *sub, *v;
	const char	*name, *type;
	size_t		 i, l;
	int		 all = 1, any = 0, sub_added;

	if (!json_is_object(o) || depth > 16)
		return 0;
	type = json_string_value(json_object_get(o, "Type"));
	added = added || (type != NULL && strcmp(type, "Added") == 0);
	json_array_foreach(json_object_get(o, "Fields"), i, f) {
		name = json_string_value(json_object_get(f, "Name"));
		if (name == NULL)
			continue;
		if (diffview_is_duration(name)) {
			if ((v = diffview_duration(json_string_value(
			    json_object_get(f, "Old")))) != NULL)
				json_object_set_new(f, "Old", v);
			if ((v = diffview_duration(json_string_value(
			    json_object_get(f, "New")))) != NULL)
				json_object_set_new(f, "New", v);
		}
		type = json_string_value(json_object_get(f, "Type"));
		any = 1;
		/* The job's ID and Name are its block's label. */
		if (added && type != NULL && strcmp(type, "Added") == 0 &&
		    scope != NULL && strcmp(name, "ID") != 0 &&
		    strcmp(name, "Name") != 0 &&
		    diffview_in_file(scope, name) == NULL)
			json_object_set_new(f, "Default", json_true());
		else
			all = 0;
	}
	json_array_foreach(json_object_get(o, "Objects"), i, sub) {
		name = json_string_value(json_object_get(sub, "Name"));
		any = 1;
		if (scope != NULL && diffview_walk(sub, diffview_in_file(scope,
		    name) != NULL ? diffview_in_file(scope, name) :
		    &diffview_nothing, added, depth + 1))
			json_object_set_new(sub, "Default", json_true());
		else {
			if (scope == NULL)
				(void)diffview_walk(sub, NULL, 0, depth + 1);
			all = 0;
		}
	}
	for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		json_array_foreach(json_object_get(o, lists[l]), i, sub) {
			name = json_string_value(json_object_get(sub, "Name"));
			type = json_string_value(json_object_get(sub, "Type"));
			sub_added = added || (type != NULL &&
			    strcmp(type, "Added") == 0);
			(void)diffview_walk(sub, scope == NULL ? NULL :
			    hcl_find(scope, blocks[l], name) != NULL ?
			    hcl_find(scope, blocks[l], name) :
			    &diffview_nothing, sub_added, depth + 1);
			all = 0;	/* a group or a task is never folded */
		}
	return any && all;
}

json_t *
diffview(const json_t *diff, const char *source)
{
	struct hcl_node	*file = NULL;
	const struct hcl_node *job = NULL;
	json_t		*d;
	char		 why[128];
	int		 line;

	if (!json_is_object(diff))
		return json_null();
	if ((d = json_deep_copy(diff)) == NULL)
		return json_null();
	/* Without the file (or one that does not read), nothing folds. */
	if (source != NULL && (file = hcl_parse(source, strlen(source), why,
	    sizeof(why), &line)) != NULL)
		job = hcl_find(file, "job", NULL);
	(void)diffview_walk(d, job, 0, 0);
	hcl_free(file);
	return d;
}
