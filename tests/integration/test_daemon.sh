#!/bin/sh
# The real daemon, sandbox on: workers start sandboxed, are restarted when
# killed, a bad config on reload is refused, SIGTERM stops everything.
. "$(dirname "$0")/lib.sh"

write_conf "$T/nops.conf"
if ! start_daemon "$T/nops.conf"; then
	notok "daemon starts"
	exit 1
fi
ok "daemon starts"

# The control socket answers once the webworker is up; the other two may
# still be starting (not yet IMSG_WORKER_READY).
three_running() {
	out=$(ctl status)
	n=0
	for w in gitworker nomadworker webworker; do
		echo "$out" | grep -Eq "^$w +[0-9]+ +running" && n=$((n + 1))
	done
	[ "$n" -eq 3 ]
}
check "status lists three running workers" wait_for 10 three_running

for w in gitworker nomadworker webworker; do
	pid=$(worker_field $w pid)
	uid=$(proc_field "$pid" Uid)
	check "$w runs as an unprivileged uid" \
	    sh -c '[ -n "$1" ] && [ "$1" != 0 ]' _ "$uid"
	check "$w has NoNewPrivs" [ "$(proc_field "$pid" NoNewPrivs)" = 1 ]
	check "$w has a seccomp filter" [ "$(proc_field "$pid" Seccomp)" = 2 ]
done
webpid=$(worker_field webworker pid)
check "webworker is chrooted in the empty directory" \
    [ "$(readlink /proc/"$webpid"/root)" = "$NOPS_RUNDIR/empty" ]
check "master runs as its own user, _nopsd" \
    [ "$(proc_field "$DAEMON_PID" Uid)" = "$(id -u _nopsd)" ]

# The control socket: root-owned, group of the config, mode 0660.
check "control socket mode 0660, group _nopsadm" \
    [ "$(stat -c '%a %U %G' "$SOCK")" = "660 root _nopsadm" ]

# A killed worker is restarted within seconds and the restart counted.
oldpid=$(worker_field gitworker pid)
kill -9 "$oldpid"
restarted() {
	p=$(worker_field gitworker pid)
	[ "$p" != 0 ] && [ "$p" != "$oldpid" ] &&
	    [ "$(worker_field gitworker state)" = running ]
}
check "kill -9 gitworker: a new one within seconds" wait_for 10 restarted
check "the restart is counted" [ "$(worker_field gitworker restarts)" = 1 ]
check "last exit says it was killed by signal 9" \
    sh -c "$(printf '%s -s %s status | grep -q "killed by signal 9"' "$NOPSCTL" "$SOCK")"

# Reload: a broken config is refused, the old one stays.
cp "$T/nops.conf" "$T/good.conf"
echo 'drift-interval banana' >>"$T/nops.conf"
kill -HUP "$DAEMON_PID"
refused() { [ "$(ctl -j status | json "j['reload_failures']")" = 1 ]; }
check "SIGHUP with a broken config is refused" wait_for 5 refused
check "the daemon is still up after the refused reload" ctl status
check "the log names the error with its line" \
    grep -q "nops.conf:8" "$T/nopsd.log"
ctl reload >/dev/null 2>&1
check "nopsctl reload of a broken config exits 1" [ $? -eq 1 ]
cp "$T/good.conf" "$T/nops.conf"
check "nopsctl reload of a good config succeeds" ctl reload
check "reload counted" [ "$(ctl -j status | json "j['reloads']")" = 1 ]

# log verbose|brief
ctl log brief >/dev/null
check "log brief" [ "$(ctl -j status | json "j['verbose']")" = 0 ]
ctl log verbose >/dev/null
check "log verbose" [ "$(ctl -j status | json "j['verbose']")" = 1 ]
"$NOPSCTL" -s "$SOCK" log loud >/dev/null 2>&1
check "nopsctl usage error exits 2" [ $? -eq 2 ]

# The API answers errors as JSON with the codes of the design.
body=$(curl -s --unix-socket "$SOCK" http://x/api/v1/nothing)
check "unknown endpoint: not_found" \
    [ "$(echo "$body" | json "j['error']['code']")" = not_found ]
code=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" \
    -X POST -H 'Content-Type: text/plain' -d x http://x/api/v1/reload)
check "a write without JSON content type is refused (415)" [ "$code" = 415 ]
code=$(curl -s -o /dev/null -w '%{http_code}' \
    "http://127.0.0.1:$HTTP_PORT/api/v1/status")
check "TCP without credentials gets 401" [ "$code" = 401 ]
hdrs=$(curl -s -D - -o /dev/null "http://127.0.0.1:$HTTP_PORT/api/v1/status")
check "security headers on every answer" \
    sh -c "echo '$hdrs' | grep -qi 'x-content-type-options: nosniff'"

# SIGTERM: exit 0, workers gone.
pids="$(worker_field gitworker pid) $(worker_field nomadworker pid) $(worker_field webworker pid)"
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID"
check "SIGTERM: nopsd exits 0" [ $? -eq 0 ]
alive=0
for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
check "SIGTERM: every worker is gone" [ $alive -eq 0 ]
check "SIGTERM: the control socket is removed" [ ! -e "$SOCK" ]
check "the audit log recorded start, reloads, worker exit and stop" \
    sh -c "sqlite3 '$T/db/nops.db' 'select action from events' | tr '\n' ' ' | grep -q 'daemon.start.*worker.exit.*config.reload.*daemon.stop'"
