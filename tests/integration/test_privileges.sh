#!/bin/sh
# What each process of the real daemon may do (nopsd.8 PRIVILEGES): a
# worker cannot signal a sibling, and what a worker writes reaches the log
# labelled with its name, never as the master's own line.
. "$(dirname "$0")/lib.sh"

# One daemon whose gitworker forges log lines and probes its siblings.
write_conf "$T/nops.conf"
if ! start_daemon "$T/nops.conf" NOPS_TEST_HOOK=gitworker:forge-log; then
	notok "daemon starts"
	exit 1
fi
ok "daemon starts"

forged() { grep -q 'nopsd: forged on stdout' "$T/nopsd.log"; }
wait_for 10 forged
check "a worker's forged line is labelled with the worker's name" \
    grep -qx 'gitworker: nopsd: deployment 2 approved by root' "$T/nopsd.log"
check "no line of the log passes for the master's forged one" \
    sh -c "! grep -q '^nopsd: deployment 2 approved' '$T/nopsd.log'"
check "a carriage return is escaped, the line stays one line" \
    grep -qx 'gitworker: innocent\\x0dnopsd: after a carriage return' \
    "$T/nopsd.log"
check "a forged priority does not change who speaks" \
    grep -qx 'gitworker: nopsd: forged with a priority' "$T/nopsd.log"
check "standard output of a worker is labelled too" \
    grep -qx 'gitworker: nopsd: forged on stdout' "$T/nopsd.log"
check "a worker's own log lines are labelled" \
    grep -q '^gitworker: ready' "$T/nopsd.log"
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null

# A worker that signals its siblings (and F_SETOWN towards them) is
# refused by its seccomp filter, on any kernel.
: >"$T/nopsd.log"
HTTP_PORT=$(free_port)
write_conf "$T/nops.conf"
for w in gitworker nomadworker webworker; do
	: >"$T/nopsd.log"
	if ! start_daemon "$T/nops.conf" NOPS_TEST_HOOK=$w:signal-siblings; then
		notok "daemon with $w probing its siblings starts"
		continue
	fi
	probed() { grep -q 'test hook: kill master' "$T/nopsd.log"; }
	wait_for 10 probed
	for s in gitworker nomadworker webworker; do
		[ "$s" = "$w" ] && continue
		pid=$(worker_field $s pid)
		check "$w: kill of sibling $s (pid $pid) refused with EPERM" \
		    grep -q "^$w: test hook: kill $pid: Operation not permitted" \
		    "$T/nopsd.log"
		check "$w: F_SETOWN to sibling $s refused with EPERM" \
		    grep -q "^$w: test hook: F_SETOWN $pid: Operation not permitted" \
		    "$T/nopsd.log"
		check "$w: sibling $s still runs" kill -0 "$pid"
	done
	check "$w: no signal to another process was allowed" \
	    sh -c "! grep -q '^$w: test hook: .*: allowed' '$T/nopsd.log'"
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
done
