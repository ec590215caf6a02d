/*
 * A minimal test harness for the unit tests: one small main() per module.
 * Each test case prints "ok - NAME" or "not ok - NAME # why"; make check
 * counts those lines.  A check that fails marks the current case failed
 * and goes on, so one run reports every failure.
 */
#ifndef NOPS_TEST_H
#define NOPS_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int	 test_failed_cases;
static int	 test_cur_failed;
static const char *test_cur_name;

#define TEST_BEGIN(name) do {						\
	test_cur_name = (name);						\
	test_cur_failed = 0;						\
} while (0)

#define TEST_END() do {							\
	if (test_cur_failed) {						\
		test_failed_cases++;					\
		printf("not ok - %s\n", test_cur_name);			\
	} else								\
		printf("ok - %s\n", test_cur_name);			\
	fflush(stdout);							\
} while (0)

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		test_cur_failed = 1;					\
		printf("# %s:%d: %s: check failed: %s\n", __FILE__,	\
		    __LINE__, test_cur_name, #cond);			\
	}								\
} while (0)

#define CHECK_STR(a, b) do {						\
	const char *_a = (a), *_b = (b);				\
	if (_a == NULL || _b == NULL || strcmp(_a, _b) != 0) {		\
		test_cur_failed = 1;					\
		printf("# %s:%d: %s: \"%s\" != \"%s\"\n", __FILE__,	\
		    __LINE__, test_cur_name, _a ? _a : "(null)",	\
		    _b ? _b : "(null)");				\
	}								\
} while (0)

#define TEST_EXIT()	return (test_failed_cases ? 1 : 0)

#endif /* NOPS_TEST_H */
