/*
 * The plan diff as the API shows it: Nomad's diff, redacted, with
 * durations written as durations ("15s", not "15000000000"), and, in a
 * new job's diff, the fields that only repeat Nomad's defaults marked
 * "Default": true (an object of nothing else too), so that clients fold
 * them and the operator reads what git says first.  The stored diff is
 * left as Nomad gave it.
 */
#include "config.h"

#include <sys/types.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine.h"

/* Fields whose values are nanoseconds (Nomad's time.Duration). */
static const char *const diffview_durations[] = {
	"KillTimeout", "ShutdownDelay", "MinHealthyTime", "HealthyDeadline",
	"ProgressDeadline", "Stagger", "Delay", "Interval", "MaxDelay",
	"MaxClientDisconnect", "StopAfterClientDisconnect", "Splay",
	"Timeout", "Grace", "MaxKillTimeout", "CheckInterval", NULL
};

/* Nomad's defaults: object ("" for the job, group or task), field, value. */
static const struct {
	const char	*dd_object;
	const char	*dd_field;
	const char	*dd_value;
} diffview_defaults[] = {
	{ "", "AllAtOnce", "false" }, { "", "Dispatched", "false" },
	{ "", "Priority", "50" }, { "", "Region", "global" },
	{ "", "Stop", "false" }, { "", "Type", "service" },
	{ "", "NodePool", "default" }, { "", "Namespace", "default" },
	{ "", "PreventRescheduleOnLost", "false" },
	{ "", "KillTimeout", "5s" }, { "", "Leader", "false" },
	{ "", "ShutdownDelay", "0s" },
	{ "RestartPolicy", "Attempts", "2" },
	{ "RestartPolicy", "Delay", "15s" },
	{ "RestartPolicy", "Interval", "30m" },
	{ "RestartPolicy", "Mode", "fail" },
	{ "RestartPolicy", "RenderTemplates", "false" },
	{ "Migrate", "HealthCheck", "checks" },
	{ "Migrate", "HealthyDeadline", "5m" },
	{ "Migrate", "MaxParallel", "1" },
	{ "Migrate", "MinHealthyTime", "10s" },
	{ "ReschedulePolicy", "Attempts", "0" },
	{ "ReschedulePolicy", "Delay", "30s" },
	{ "ReschedulePolicy", "DelayFunction", "exponential" },
	{ "ReschedulePolicy", "Interval", "0s" },
	{ "ReschedulePolicy", "MaxDelay", "1h" },
	{ "ReschedulePolicy", "Unlimited", "true" },
	{ "EphemeralDisk", "Migrate", "false" },
	{ "EphemeralDisk", "SizeMB", "300" },
	{ "EphemeralDisk", "Sticky", "false" },
	{ "Update", "AutoPromote", "false" },
	{ "Update", "AutoRevert", "false" },
	{ "Update", "Canary", "0" },
	{ "Update", "HealthCheck", "checks" },
	{ "Update", "HealthyDeadline", "5m" },
	{ "Update", "MaxParallel", "1" },
	{ "Update", "MinHealthyTime", "10s" },
	{ "Update", "ProgressDeadline", "10m" },
	{ "Update", "Stagger", "30s" },
	{ "Resources", "CPU", "100" }, { "Resources", "Cores", "0" },
	{ "Resources", "DiskMB", "0" }, { "Resources", "IOPS", "0" },
	{ "Resources", "MemoryMB", "300" },
	{ "Resources", "MemoryMaxMB", "0" },
	{ "Resources", "SecretsMB", "0" },
	{ "LogConfig", "Disabled", "false" },
	{ "LogConfig", "MaxFileSizeMB", "10" },
	{ "LogConfig", "MaxFiles", "10" },
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

static int
diffview_default(const char *object, const char *field, const char *value)
{
	size_t	 i;

	if (value == NULL)
		return 0;
	for (i = 0; i < sizeof(diffview_defaults) /
	    sizeof(diffview_defaults[0]); i++)
		if (strcmp(diffview_defaults[i].dd_object, object) == 0 &&
		    strcmp(diffview_defaults[i].dd_field, field) == 0)
			return strcmp(diffview_defaults[i].dd_value, value) ==
			    0;
	return 0;
}

/*
 * One level: its fields, then its objects (named), groups and tasks.
 * Returns 1 when everything in o repeats a default (and is not empty).
 */
static int
diffview_walk(json_t *o, const char *object, int added, int depth)
{
	static const char *const lists[] = { "TaskGroups", "Tasks" };
	json_t		*f, *sub, *v;
	const char	*name, *type;
	size_t		 i, l;
	int		 all = 1, any = 0;

	if (!json_is_object(o) || depth > 16)
		return 0;
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
		if (added && type != NULL && strcmp(type, "Added") == 0 &&
		    diffview_default(object, name, json_string_value(
		    json_object_get(f, "New"))))
			json_object_set_new(f, "Default", json_true());
		else
			all = 0;
	}
	json_array_foreach(json_object_get(o, "Objects"), i, sub) {
		name = json_string_value(json_object_get(sub, "Name"));
		any = 1;
		if (diffview_walk(sub, name != NULL ? name : "?", added,
		    depth + 1))
			json_object_set_new(sub, "Default", json_true());
		else
			all = 0;
	}
	for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		json_array_foreach(json_object_get(o, lists[l]), i, sub) {
			(void)diffview_walk(sub, "", added, depth + 1);
			all = 0;	/* a group or a task is never folded */
		}
	return any && all;
}

json_t *
diffview(const json_t *diff)
{
	json_t		*d;
	const char	*type;

	if (!json_is_object(diff))
		return json_null();
	if ((d = json_deep_copy(diff)) == NULL)
		return json_null();
	type = json_string_value(json_object_get(d, "Type"));
	(void)diffview_walk(d, "", type != NULL && strcmp(type, "Added") == 0,
	    0);
	return d;
}
