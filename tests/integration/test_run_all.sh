#!/bin/sh
# tests/run-all counts honestly: on a tree of stand-in test programs it
# counts passes, failures and skips apart, a skip is never a pass, a
# program that reports no case or dies without saying so is a failure,
# and it ends "N passed, N failed, N skipped" and exits 1 on a failure.
. "$(dirname "$0")/lib.sh"

RUNALL=$top_srcdir/tests/run-all
F=$T/fake
mkdir -p "$F/tests/conf" "$F/tests/man" "$F/tests/nomadsim" "$F/build"

# run_all GROUPS: run-all on the stand-in tree; its output in $T/out.
run_all() {
	TESTS=$1 top_srcdir=$F top_builddir=$F/build sh "$RUNALL" >"$T/out" 2>&1
}
last() { tail -1 "$T/out"; }

# conf: two passes, a skip (either case), a failure.
cat >"$F/tests/conf/run" <<'EOF'
echo "ok - one"
echo "ok 2 - two"
echo "ok - three # SKIP no reason to run"
echo "ok - four # skip lower case"
echo "not ok - five"
exit 1
EOF
run_all conf
rc=$?
check "passes, failures and skips are counted apart" \
    [ "$(last)" = "2 passed, 1 failed, 2 skipped" ]
check "a failure makes run-all exit 1" [ $rc -eq 1 ]

# man: reports nothing and exits 0.
: >"$F/tests/man/run"
run_all man
rc=$?
check "a program that reports no case is one failure" \
    [ "$(last) (exit $rc)" = "0 passed, 1 failed, 0 skipped (exit 1)" ]
check "... and says so in its log" \
    grep -q "^not ok - man # reported no case" "$F/build/tests/logs/man.log"

# man: all its cases pass, then it dies.
printf 'echo "ok - a"\necho "ok - b"\nexit 3\n' >"$F/tests/man/run"
run_all man
check "a program that dies after its cases passed is a failure" \
    [ "$(last)" = "2 passed, 1 failed, 0 skipped" ]
check "... naming its exit status" \
    grep -q "exited with status 3" "$F/build/tests/logs/man.log"

# Only skips: not a failure, and not a pass either.
printf 'echo "ok - a # SKIP needs something"\n' >"$F/tests/man/run"
run_all man
rc=$?
check "a program whose cases are all skipped passes nothing and fails nothing" \
    [ "$(last) (exit $rc)" = "0 passed, 0 failed, 1 skipped (exit 0)" ]
check "a skip is shown with its reason" \
    grep -q "^    ok - a # SKIP needs something" "$T/out"

# Groups add up.
printf 'print("ok - x")\nprint("ok - y # SKIP why")\n' \
    >"$F/tests/nomadsim/run-tests"
run_all "man nomadsim"
check "groups add up" [ "$(last)" = "1 passed, 0 failed, 2 skipped" ]
check "each program's line says how long it took" \
    grep -Eq '^PASS: nomadsim \(1 passed, 1 skipped\) [0-9]+ s$' "$T/out"

# Two at a time: conf waits for a file that man makes, which only
# works when both run at once.  One at a time, conf gives up and fails.
cat >"$F/tests/conf/run" <<EOF
i=0
while [ ! -e "$F/made-by-man" ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
if [ -e "$F/made-by-man" ]; then echo "ok - saw man"; else echo "not ok - saw man"; fi
EOF
printf ': >"%s/made-by-man"\necho "ok - made"\n' "$F" >"$F/tests/man/run"
rm -f "$F/made-by-man"
NOPS_TEST_JOBS=2 run_all "conf man"
check "programs run two at a time (NOPS_TEST_JOBS=2)" \
    [ "$(last)" = "2 passed, 0 failed, 0 skipped" ]
rm -f "$F/made-by-man"
NOPS_TEST_JOBS=1 run_all "conf man"
check "... and one after the other with NOPS_TEST_JOBS=1" \
    [ "$(last)" = "1 passed, 1 failed, 0 skipped" ]
NOPS_TEST_JOBS=x run_all man
rc=$?
check "a NOPS_TEST_JOBS that is not a number is refused" [ $rc -eq 2 ]
check "... saying why" grep -q "NOPS_TEST_JOBS must be a number" "$T/out"

# The shell tests' own helpers: a script that printed "not ok" exits 1
# even when its last command succeeded.
printf '. "%s/integration/lib.sh"\nnotok "a"\nok "b"\n' \
    "$top_srcdir/tests" >"$T/notok.sh"
sh "$T/notok.sh" >/dev/null 2>&1
check "a shell test that reported a failure exits 1" [ $? -eq 1 ]
printf '. "%s/integration/lib.sh"\nok "a"\n' "$top_srcdir/tests" >"$T/allok.sh"
check "... and one that did not exits 0" sh "$T/allok.sh"
