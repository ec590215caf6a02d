/* The nops_* meta rules, Go durations and sync-window cron expressions. */
#include "config.h"

#include <string.h>
#include <time.h>

#include <jansson.h>

#include "test.h"
#include "meta.h"

static void
read_meta(const char *json, struct job_meta *jm)
{
	json_t	*j = json_loads(json, 0, NULL);

	meta_read(j, jm);
	json_decref(j);
}

static int
has_issue(const struct job_meta *jm, int sev, const char *key)
{
	size_t	 i;

	for (i = 0; i < jm->jm_nissues; i++)
		if (jm->jm_issues[i].mi_severity == sev &&
		    strcmp(jm->jm_issues[i].mi_key, key) == 0)
			return 1;
	return 0;
}

/* 2026-11-30 (a Monday) at hh:mm UTC */
static time_t
monday(int hh, int mm)
{
	return 1795996800 + hh * 3600 + mm * 60;
}

int
main(void)
{
	struct job_meta	 jm;
	struct cron	 cr;
	char		 err[128];

	TEST_BEGIN("meta: no meta means ignored, policy none");
	meta_read(NULL, &jm);
	CHECK(jm.jm_role == META_IGNORED);
	CHECK(jm.jm_policy == POLICY_NONE);
	CHECK(jm.jm_nissues == 0);
	TEST_END();

	TEST_BEGIN("meta: managed with approval and hooks in order");
	read_meta("{\"nops_managed\":\"true\",\"nops_policy\":\"approval\","
	    "\"nops_pre_hook\":\" backup , migrate\",\"nops_post_hook\":"
	    "\"smoke\",\"nops_pre_hook_timeout\":\"10m\"}", &jm);
	CHECK(jm.jm_role == META_MANAGED);
	CHECK(jm.jm_policy == POLICY_APPROVAL);
	CHECK(jm.jm_npre == 2);
	CHECK_STR(jm.jm_pre[0], "backup");
	CHECK_STR(jm.jm_pre[1], "migrate");
	CHECK(jm.jm_npost == 1);
	CHECK(jm.jm_pre_timeout == 600);
	CHECK(jm.jm_post_timeout == META_HOOK_TIMEOUT);
	CHECK(jm.jm_nissues == 0);
	meta_free(&jm);
	TEST_END();

	TEST_BEGIN("meta: hook role");
	read_meta("{\"nops_role\":\"hook\"}", &jm);
	CHECK(jm.jm_role == META_HOOK);
	CHECK(jm.jm_errors == 0);
	TEST_END();

	TEST_BEGIN("meta: a managed job lists its operations");
	read_meta("{\"nops_managed\":\"true\",\"nops_operations\":"
	    "\" db-backup-now, db-restore\"}", &jm);
	CHECK(jm.jm_nops == 2);
	CHECK(jm.jm_nops == 2 && strcmp(jm.jm_ops[1], "db-restore") == 0);
	CHECK(jm.jm_errors == 0);
	meta_free(&jm);
	TEST_END();

	TEST_BEGIN("meta: an operation names its job; sensitive is a boolean");
	read_meta("{\"nops_role\":\"operation\",\"nops_operation_of\":"
	    "\"db\",\"nops_sensitive\":\"true\",\"nops_input_schema\":"
	    "\"{\\\"type\\\":\\\"object\\\"}\"}", &jm);
	CHECK(jm.jm_role == META_OPERATION);
	CHECK(jm.jm_sensitive == 1);
	CHECK(jm.jm_errors == 0);
	TEST_END();

	TEST_BEGIN("meta: an operation without its job, with a bad schema");
	read_meta("{\"nops_role\":\"operation\",\"nops_sensitive\":"
	    "\"yes\",\"nops_input_schema\":\"[1\"}", &jm);
	CHECK(has_issue(&jm, META_ERROR, "nops_operation_of"));
	CHECK(has_issue(&jm, META_ERROR, "nops_sensitive"));
	CHECK(has_issue(&jm, META_ERROR, "nops_input_schema"));
	TEST_END();

	TEST_BEGIN("meta: an operation's schema in a file next to it");
	read_meta("{\"nops_role\":\"operation\",\"nops_operation_of\":"
	    "\"db\",\"nops_input_schema_file\":\"s/in.schema.json\"}", &jm);
	CHECK(jm.jm_errors == 0);
	CHECK(jm.jm_input_schema_file != NULL &&
	    strcmp(jm.jm_input_schema_file, "s/in.schema.json") == 0);
	meta_free(&jm);
	TEST_END();

	TEST_BEGIN("meta: a schema file outside, misnamed, or with the inline "
	    "one is refused");
	{
		const char *bad[] = { "/etc/x.schema.json", "../x.schema.json",
		    "a/../x.schema.json", "./x.schema.json", "a//x.schema.json",
		    "x.json", ".schema.json", "a/", "" };
		size_t	 i;
		char	 buf[256];

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(buf, sizeof(buf), "{\"nops_role\":"
			    "\"operation\",\"nops_operation_of\":\"db\","
			    "\"nops_input_schema_file\":\"%s\"}", bad[i]);
			read_meta(buf, &jm);
			CHECK(has_issue(&jm, META_ERROR,
			    "nops_input_schema_file"));
			CHECK(jm.jm_input_schema_file == NULL);
			meta_free(&jm);
		}
		read_meta("{\"nops_role\":\"operation\",\"nops_operation_of\":"
		    "\"db\",\"nops_input_schema\":\"{}\","
		    "\"nops_input_schema_file\":\"x.schema.json\"}", &jm);
		CHECK(has_issue(&jm, META_ERROR, "nops_input_schema_file"));
		meta_free(&jm);
	}
	TEST_END();

	TEST_BEGIN("meta: operation keys on another job are ignored, warned");
	read_meta("{\"nops_managed\":\"true\",\"nops_sensitive\":"
	    "\"true\",\"nops_operations\":\"a,a\"}", &jm);
	CHECK(has_issue(&jm, META_WARN, "nops_sensitive"));
	CHECK(has_issue(&jm, META_ERROR, "nops_operations"));
	CHECK(jm.jm_sensitive == 0);
	meta_free(&jm);
	TEST_END();

	TEST_BEGIN("meta: unknown nops_ key warns and changes nothing");
	read_meta("{\"nops_managed\":\"true\",\"nops_polcy\":\"auto\"}", &jm);
	CHECK(has_issue(&jm, META_WARN, "nops_polcy"));
	CHECK(jm.jm_errors == 0);
	CHECK(jm.jm_policy == POLICY_NONE);
	TEST_END();

	TEST_BEGIN("meta: invalid policy is an error and policy none");
	read_meta("{\"nops_managed\":\"true\",\"nops_policy\":\"Auto\"}", &jm);
	CHECK(has_issue(&jm, META_ERROR, "nops_policy"));
	CHECK(jm.jm_policy == POLICY_NONE);
	TEST_END();

	TEST_BEGIN("meta: any error forces policy none");
	read_meta("{\"nops_managed\":\"true\",\"nops_policy\":\"auto\","
	    "\"nops_pre_hook\":\"a\",\"nops_pre_hook_timeout\":\"-5s\"}", &jm);
	CHECK(has_issue(&jm, META_ERROR, "nops_pre_hook_timeout"));
	CHECK(jm.jm_policy == POLICY_NONE);
	meta_free(&jm);
	TEST_END();

	TEST_BEGIN("meta: nops_managed is case-sensitive");
	read_meta("{\"nops_managed\":\"True\",\"nops_policy\":\"auto\"}", &jm);
	CHECK(has_issue(&jm, META_ERROR, "nops_managed"));
	CHECK(jm.jm_policy == POLICY_NONE);
	TEST_END();

	TEST_BEGIN("meta: policy without managed warns");
	read_meta("{\"nops_policy\":\"auto\"}", &jm);
	CHECK(jm.jm_role == META_IGNORED);
	CHECK(has_issue(&jm, META_WARN, "nops_policy"));
	TEST_END();

	TEST_BEGIN("meta: managed and hook at once is an error");
	read_meta("{\"nops_managed\":\"true\",\"nops_role\":\"hook\"}", &jm);
	CHECK(has_issue(&jm, META_ERROR, "nops_role"));
	TEST_END();

	TEST_BEGIN("meta: bad hook lists");
	read_meta("{\"nops_managed\":\"true\",\"nops_pre_hook\":\"a,,a,b c\"}",
	    &jm);
	CHECK(jm.jm_errors == 3);
	CHECK(jm.jm_npre == 1);
	meta_free(&jm);
	TEST_END();

	TEST_BEGIN("meta: timeout without hook warns");
	read_meta("{\"nops_managed\":\"true\",\"nops_post_hook_timeout\":"
	    "\"1m\"}", &jm);
	CHECK(has_issue(&jm, META_WARN, "nops_post_hook_timeout"));
	CHECK(jm.jm_errors == 0);
	TEST_END();

	TEST_BEGIN("meta: sync window needs both keys");
	read_meta("{\"nops_managed\":\"true\",\"nops_policy\":\"auto\","
	    "\"nops_sync_window\":\"0 9 * * 1-5\"}", &jm);
	CHECK(has_issue(&jm, META_ERROR, "nops_sync_window"));
	read_meta("{\"nops_managed\":\"true\",\"nops_policy\":\"auto\","
	    "\"nops_sync_window_duration\":\"9h\"}", &jm);
	CHECK(has_issue(&jm, META_ERROR, "nops_sync_window_duration"));
	read_meta("{\"nops_managed\":\"true\",\"nops_policy\":\"auto\","
	    "\"nops_sync_window\":\"whenever\",\"nops_sync_window_duration\":"
	    "\"9h\"}", &jm);
	CHECK(has_issue(&jm, META_ERROR, "nops_sync_window"));
	CHECK(jm.jm_policy == POLICY_NONE);
	TEST_END();

	TEST_BEGIN("meta: sync window opens weekdays 09:00 for 9h");
	read_meta("{\"nops_managed\":\"true\",\"nops_policy\":\"auto\","
	    "\"nops_sync_window\":\"0 9 * * MON-FRI\","
	    "\"nops_sync_window_duration\":\"9h\"}", &jm);
	CHECK(jm.jm_has_window);
	CHECK(jm.jm_errors == 0);
	CHECK(!meta_window_open(&jm, monday(8, 59)));
	CHECK(meta_window_open(&jm, monday(9, 0)));
	CHECK(meta_window_open(&jm, monday(17, 59)));
	CHECK(!meta_window_open(&jm, monday(18, 0)));
	/* Sunday 2026-11-29 at noon: closed. */
	CHECK(!meta_window_open(&jm, monday(12, 0) - 86400));
	TEST_END();

	TEST_BEGIN("meta: a window that spans midnight and days");
	read_meta("{\"nops_managed\":\"true\",\"nops_policy\":\"auto\","
	    "\"nops_sync_window\":\"30 22 * * 0\","
	    "\"nops_sync_window_duration\":\"26h\"}", &jm);
	/* opens Sunday 22:30, closes Tuesday 00:30 */
	CHECK(meta_window_open(&jm, monday(0, 0)));
	CHECK(meta_window_open(&jm, monday(23, 0)));
	CHECK(!meta_window_open(&jm, monday(24, 31)));
	CHECK(!meta_window_open(&jm, monday(-2, 0)));
	TEST_END();

	TEST_BEGIN("meta: window under approval is ignored with a warning");
	read_meta("{\"nops_managed\":\"true\",\"nops_policy\":\"approval\","
	    "\"nops_sync_window\":\"@daily\",\"nops_sync_window_duration\":"
	    "\"1h\"}", &jm);
	CHECK(!jm.jm_has_window);
	CHECK(has_issue(&jm, META_WARN, "nops_sync_window"));
	CHECK(meta_window_open(&jm, monday(5, 0)));
	TEST_END();

	TEST_BEGIN("duration: Go syntax");
	CHECK(go_duration_ns("90s") == 90000000000LL);
	CHECK(go_duration_ns("1h30m") == 5400000000000LL);
	CHECK(go_duration_ns("1.5h") == 5400000000000LL);
	CHECK(go_duration_ns("250ms") == 250000000LL);
	CHECK(go_duration_ns("0") == 0);
	CHECK(go_duration_ns("") == -1);
	CHECK(go_duration_ns("10") == -1);
	CHECK(go_duration_ns("5 m") == -1);
	CHECK(go_duration_ns("-5s") == -1);
	CHECK(go_duration_ns("1d") == -1);
	CHECK(go_duration_ns("99999999999h") == -1);
	TEST_END();

	TEST_BEGIN("cron: fields, lists, ranges, steps, names");
	CHECK(cron_parse("*/15 9-17 * JAN,jul 1-5", &cr, err,
	    sizeof(err)) == 0);
	CHECK(cr.cr_min == ((1ULL << 0) | (1ULL << 15) | (1ULL << 30) |
	    (1ULL << 45)));
	CHECK(cr.cr_hour == 0x3fe00);
	CHECK(cr.cr_mon == ((1 << 1) | (1 << 7)));
	CHECK(cr.cr_dow == 0x3e);
	CHECK(cron_parse("5/20 * * * 7", &cr, err, sizeof(err)) == 0);
	CHECK(cr.cr_min == ((1ULL << 5) | (1ULL << 25) | (1ULL << 45)));
	CHECK(cr.cr_dow == 1);
	CHECK(cron_parse("@hourly", &cr, err, sizeof(err)) == 0);
	CHECK(cron_parse("60 * * * *", &cr, err, sizeof(err)) == -1);
	CHECK(strstr(err, "minute") != NULL);
	CHECK(cron_parse("* * 0 * *", &cr, err, sizeof(err)) == -1);
	CHECK(cron_parse("* * * * * *", &cr, err, sizeof(err)) == -1);
	CHECK(cron_parse("* * * FOO *", &cr, err, sizeof(err)) == -1);
	CHECK(cron_parse("5-1 * * * *", &cr, err, sizeof(err)) == -1);
	CHECK(cron_parse("*/0 * * * *", &cr, err, sizeof(err)) == -1);
	TEST_END();

	TEST_BEGIN("cron: day of month OR day of week when both are set");
	CHECK(cron_parse("0 0 1 * MON", &cr, err, sizeof(err)) == 0);
	CHECK(cron_match(&cr, monday(0, 0)));		/* a Monday */
	CHECK(cron_match(&cr, monday(0, 0) - 29 * 86400));	/* Sun 1 Nov */
	CHECK(cron_match(&cr, monday(0, 0) + 86400));	/* Tue 1 Dec */
	CHECK(!cron_match(&cr, monday(0, 0) + 2 * 86400));	/* Wed 2 Dec */
	CHECK(!cron_match(&cr, monday(0, 1)));
	TEST_END();

	TEST_EXIT();
}
