#!/bin/sh
# A worker that breaks protocol or its sandbox is killed and restarted;
# the master lives.  Needs a build with --enable-test-hooks.
. "$(dirname "$0")/lib.sh"
need_test_hooks "protocol and sandbox violations (fault hooks)"

# hook_case WORKER HOOK EXPECTED-LAST-EXIT
hook_case() {
	w=$1 hook=$2 expect=$3
	write_conf "$T/nops.conf"
	rm -f "$SOCK"
	if ! start_daemon "$T/nops.conf" NOPS_TEST_HOOK="$w:$hook"; then
		notok "$w $hook: daemon starts"
		return
	fi
	counted() { [ "$(worker_field "$w" restarts)" -ge 1 ]; }
	check "$w $hook: the worker is killed and restarted" wait_for 10 counted
	check "$w $hook: last exit says why" \
	    sh -c "'$NOPSCTL' -s '$SOCK' -j status | grep -q '$expect'"
	[ $? -eq 0 ] || "$NOPSCTL" -s "$SOCK" status | sed "s/^/# /"
	check "$w $hook: the master lives" kill -0 "$DAEMON_PID"
	running() { [ "$(worker_field "$w" state)" = running ]; }
	check "$w $hook: the restarted worker runs (the hook is one-shot)" \
	    wait_for 10 running
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID"
}

hook_case webworker forbidden-msg "protocol violation: IMSG_INIT not permitted"
hook_case gitworker forbidden-msg "protocol violation: IMSG_INIT not permitted"
hook_case nomadworker bad-payload "protocol violation: IMSG_WORKER_READY malformed: trailing bytes"
# The table's decoder refused it in the receive path and the log says so;
# the handler never saw it: the worker's one well-formed READY is the only
# one that pid's title logged before it was killed.
check "nomadworker bad-payload: the log names the malformed message" \
    grep -q "protocol violation by nomadworker (pid [0-9]*): IMSG_WORKER_READY malformed: trailing bytes; killing it" "$T/nopsd.log"
handled() {
	sed -n '/protocol violation by nomadworker/q;/nomadworker ready$/p' \
	    "$T/nopsd.log" | wc -l
}
check "nomadworker bad-payload: not handled (one READY before the kill)" \
    test "$(handled)" -eq 1
hook_case gitworker syscall "killed by signal 31"
hook_case webworker syscall "killed by signal 31"
