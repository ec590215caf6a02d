#!/bin/sh
# What each process of the real daemon may do (nopsd.8 PRIVILEGES): a
# worker cannot signal a sibling, and what a worker writes reaches the log
# labelled with its name, never as the master's own line.
. "$(dirname "$0")/lib.sh"

# The forged log lines and the sibling probes are test hooks
# (NOPS_TEST_HOOK): without them, both parts are reported skipped.
if test_hooks_built; then
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
	# "W: test hook: WHAT LO..HI: every one refused: ...", with PID in
	# LO..HI and not logged on its own (allowed or another error).
	probe_refused() {
		grep "^$1: test hook: $2 [0-9]*\.\.[0-9]*: every one refused: Operation not permitted" \
		    "$T/nopsd.log" | awk -v pid="$3" '{
			split($5, r, "\\.\\."); sub(/:$/, "", r[2]);
			if (pid + 0 >= r[1] + 0 && pid + 0 <= r[2] + 0) found = 1
		} END { exit !found }' &&
		    ! grep -q "^$1: test hook: $2 $3: " "$T/nopsd.log"
	}
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
			    probe_refused "$w" kill "$pid"
			check "$w: F_SETOWN to sibling $s refused with EPERM" \
			    probe_refused "$w" F_SETOWN "$pid"
			check "$w: sibling $s still runs" kill -0 "$pid"
		done
		check "$w: no signal to another process was allowed" \
		    sh -c "! grep -q '^$w: test hook: .*: allowed' '$T/nopsd.log'"
		kill -TERM "$DAEMON_PID"
		wait "$DAEMON_PID" 2>/dev/null
	done
else
	echo "ok - a worker's forged log lines and its signals to siblings # SKIP needs a build with --enable-test-hooks"
fi

# The master drops root (master user): its own user, only the listed
# capabilities, NO_NEW_PRIVS, its seccomp filter, no core file.
echo 'alice:$2b$10$zFG0z3CCCcxlvaqEEC3E6u8Oyod75IM2AaifCC1b7fV4wXITsIxP.' \
    >"$T/users"
# Root's, 0600: read as root at start and kept (nopsd.8, RELOAD).
chmod 600 "$T/users"
MPORT=$(free_port)
cat >"$T/master.conf" <<EOC
user "_nops"
master user "_nopsd"
users file "$T/users"
database "$T/mdb/nops.db"
control socket "$SOCK" group "_nopsadm"
listen on 127.0.0.1 port $MPORT
EOC
: >"$T/nopsd.log"
if ! start_daemon "$T/master.conf"; then
	notok "daemon with master user starts"
	exit 1
fi
ok "daemon with master user starts"
muid=$(id -u _nopsd)
check "master: it drops root before its first worker starts" \
    sh -c "grep -n -e '^nopsd: running as _nopsd' -e '^gitworker: ' \
    '$T/nopsd.log' | head -1 | grep -q 'running as _nopsd'"
check "master: the control socket's directory, which it made, is its" \
    [ "$(stat -c %U "$(dirname "$SOCK")")" = _nopsd ]
check "master: Uid is _nopsd's, real, effective, saved and fs" \
    grep -q "^Uid:	$muid	$muid	$muid	$muid\$" "/proc/$DAEMON_PID/status"
check "master: no supplementary group" \
    grep -q "^Groups:	 *\$" "/proc/$DAEMON_PID/status"
check "master: NoNewPrivs 1" [ "$(proc_field "$DAEMON_PID" NoNewPrivs)" = 1 ]
check "master: Seccomp 2" [ "$(proc_field "$DAEMON_PID" Seccomp)" = 2 ]
# CAP_KILL 5, CAP_SETGID 6, CAP_SETUID 7, CAP_SYS_CHROOT 18: 0x400e0
check "master: CapEff only kill, setgid, setuid, sys_chroot" \
    [ "$(proc_field "$DAEMON_PID" CapEff)" = 00000000000400e0 ]
check "master: CapPrm the same" \
    [ "$(proc_field "$DAEMON_PID" CapPrm)" = 00000000000400e0 ]
check "master: core file size limit 0" \
    sh -c "grep '^Max core file size' /proc/$DAEMON_PID/limits | grep -Eq ' 0 +0 +bytes'"
check "master: not dumpable (its /proc files are root's)" \
    [ "$(stat -c %u "/proc/$DAEMON_PID/status")" = 0 ]
check "database and state directory are the master's user's" \
    [ "$(stat -c %U "$T/mdb" "$T/mdb/nops.db" | sort -u)" = _nopsd ]
check "the gitworker's cache is the workers' user's" \
    [ "$(stat -c %U "$T/mdb/git")" = _nops ]
for w in gitworker nomadworker webworker; do
	pid=$(worker_field $w pid)
	check "$w under the unprivileged master: no capability left" \
	    [ "$(proc_field "$pid" CapEff)$(proc_field "$pid" CapPrm)$(proc_field "$pid" CapAmb)" = 000000000000000000000000000000000000000000000000 ]
	check "$w: Seccomp 2" [ "$(proc_field "$pid" Seccomp)" = 2 ]
done
# Logins: bcrypt runs in the master's hashing processes (auth_hash.c):
# children of the master, each a session of its own, under SCHED_IDLE,
# the master's filter and their own, holding no descriptor but their
# socket (and 0-2).  A field of /proc/PID/stat after the command name.
stat_field() {
	sed 's/.*) //' "/proc/$1/stat" | awk -v n="$2" '{ print $(n - 2) }'
}
hashers() {
	for p in $(cat /proc/"$DAEMON_PID"/task/*/children); do
		[ "$(stat_field "$p" 6)" = "$p" ] && echo "$p"
	done
}
login() {
	curl -s -o /dev/null -w '%{http_code}' -X POST \
	    -H 'Content-Type: application/json' \
	    -d '{"username":"alice","password":"not her password"}' \
	    "http://127.0.0.1:$MPORT/api/v1/login"
}
hpids=$(hashers)
check "two hashing processes, each the leader of a session of its own" \
    [ "$(echo $hpids | wc -w)" = 2 ]
for p in $hpids; do
	check "hashing process $p: SCHED_IDLE (policy 5)" \
	    [ "$(stat_field "$p" 41)" = 5 ]
	filters() { [ "$(proc_field "$1" Seccomp_filters)" = 2 ]; }
	check "hashing process $p: the master's filter and its own" \
	    wait_for 10 filters "$p"
	check "hashing process $p: the master's user, no capability" \
	    [ "$(proc_field "$p" Uid | cut -f1)$(proc_field "$p" CapEff)" = "${muid}0000000000000000" ]
	fds() { [ "$(ls /proc/"$1"/fd | sort -n | tr '\n' ' ')" = "0 1 2 3 " ]; }
	check "hashing process $p: descriptors 0-3 only (3: its socket)" \
	    wait_for 10 fds "$p"
done
check "a login under the master's filter is answered (401)" \
    [ "$(login)" = 401 ]
# Where the master could make one as root, the hashing processes are in an
# idle CPU cgroup of their own; else the log says why not.  The log line
# names the cgroup's directory, the file marking it idle and its value.
cgline=$(grep -o "password hashing: in the idle CPU cgroup .*" "$T/nopsd.log")
if [ -n "$cgline" ]; then
	set -- $(echo "$cgline" | sed 's/.*cgroup \([^ ]*\) (\([^ ]*\) \([^)]*\))/\1 \2 \3/')
	cgdir=$1 cgfile=$2 cgidle=$3
	for p in $hpids; do
		check "hashing process $p: in the cgroup $cgdir" \
		    wait_for 10 grep -q ":/\(.*/\)\?nopsd-hashing$" "/proc/$p/cgroup"
	done
	check "$cgdir: idle ($cgfile $cgidle)" \
	    [ "$(cat "$cgdir/$cgfile")" = "$cgidle" ]
	check "$cgdir/cgroup.procs: the master's user's (it moves only theirs)" \
	    [ "$(stat -c %u "$cgdir/cgroup.procs")" = "$muid" ]
	# A check that waits a second gives the cgroup a fair share, until
	# none waits: the hashing processes stopped, a login waits.
	for p in $hpids; do kill -STOP "$p"; done
	login >"$T/login.code" &
	lpid=$!
	fair() { [ "$(cat "$cgdir/$cgfile")" != "$cgidle" ]; }
	check "a check waiting 1 s: the cgroup gets a fair share" \
	    wait_for 10 fair
	for p in $hpids; do kill -CONT "$p"; done
	wait "$lpid"
	check "... the login is answered (401)" [ "$(cat "$T/login.code")" = 401 ]
	idle() { [ "$(cat "$cgdir/$cgfile")" = "$cgidle" ]; }
	check "... and with none waiting the cgroup is idle again" \
	    wait_for 10 idle
else
	check "no idle CPU cgroup: the log says why" \
	    grep -q "password hashing: no idle CPU cgroup (.*)" "$T/nopsd.log"
fi
check "the master still runs after the login" kill -0 "$DAEMON_PID"
# One dies: the pool is dropped (the other killed) and the next login
# starts a new one.
set -- $hpids
kill -9 "$1"
gone() { ! kill -0 "$2" 2>/dev/null; }
check "when one hashing process dies the master kills the other" \
    wait_for 10 gone "$1" "$2"
check "... and says so" grep -q "password hashing: hashing process $1 killed by signal 9" "$T/nopsd.log"
check "the next login is answered (401) by a new pool" [ "$(login)" = 401 ]
check "... of two new hashing processes" \
    [ "$(hashers | grep -cvx -e "$1" -e "$2")" = 2 ]

oldpid=$(worker_field nomadworker pid)
kill -9 "$oldpid"
restarted() {
	p=$(worker_field nomadworker pid)
	[ "$p" != 0 ] && [ "$p" != "$oldpid" ] &&
	    [ "$(worker_field nomadworker state)" = running ]
}
check "the unprivileged master restarts a killed worker" wait_for 10 restarted
newpid=$(worker_field nomadworker pid)
check "... which drops to the workers' user again" \
    [ "$(proc_field "$newpid" Uid)" = "$(id -u _nops)" ]
check "... with no capability left" \
    [ "$(proc_field "$newpid" CapEff)$(proc_field "$newpid" CapAmb)" = 00000000000000000000000000000000 ]
check "... under the master's filter and its own" \
    [ "$(proc_field "$newpid" Seccomp_filters)" = 2 ]

for w in gitworker webworker; do
	oldpid=$(worker_field $w pid)
	kill -9 "$oldpid"
	again() {
		p=$(worker_field $w pid)
		[ "$p" != 0 ] && [ "$p" != "$oldpid" ] &&
		    [ "$(worker_field $w state)" = running ]
	}
	check "$w restarts under the master's Landlock and filter" \
	    wait_for 10 again
done
check "the master confined its file system (Landlock)" \
    grep -q "sandbox: nopsd Landlock rules" "$T/nopsd.log"

# Reload: what takes a restart is refused whole, with the reason.
cp "$T/master.conf" "$T/master.good"
sed -i "s/^listen on 127.0.0.1 port .*/listen on 127.0.0.1 port 81/" \
    "$T/master.conf"
echo 'drift-interval 7m' >>"$T/master.conf"
ctl reload >/dev/null 2>&1
check "reload with a new listener exits 1" [ $? -eq 1 ]
check "the refusal names the statement and asks for a restart" \
    grep -q "listen changed, which takes a restart of nopsd; nothing was changed" \
    "$T/nopsd.log"
check "nothing of it was applied (drift interval unchanged)" \
    sh -c "$(printf '%s -s %s -j status' "$NOPSCTL" "$SOCK") | grep -q '\"reload_failures\": *1'"
cp "$T/master.good" "$T/master.conf"
check "a reload without restart-only changes succeeds" ctl reload
check "... though the users file is root's, 0600 (the copy read at start)" \
    [ "$(stat -c '%U %a' "$T/users")" = "root 600" ]

# The users file changes and stays root's: the master cannot read the new
# one, so the reload is refused, saying why.
echo 'bob:$2b$10$zFG0z3CCCcxlvaqEEC3E6u8Oyod75IM2AaifCC1b7fV4wXITsIxP.' \
    >>"$T/users"
ctl reload >/dev/null 2>&1
check "reload after a root-only secret changed exits 1" [ $? -eq 1 ]
check "the refusal names the file and says it changed since the start" \
    grep -q "$T/users cannot be read by the master's user _nopsd (it changed since nopsd read it as root at start)" \
    "$T/nopsd.log"
chown _nopsd "$T/users"
check "given to the master's user, the changed file is read" ctl reload

# A secret only root can read: the master, now _nopsd, refuses the reload.
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/metrics.token"
chmod 600 "$T/metrics.token"
echo "metrics token file \"$T/metrics.token\"" >>"$T/master.conf"
ctl reload >/dev/null 2>&1
check "reload naming a root-only secret file exits 1" [ $? -eq 1 ]
check "the refusal names the file and the master's user" \
    grep -q "$T/metrics.token cannot be read by the master's user _nopsd" \
    "$T/nopsd.log"
chown _nopsd "$T/metrics.token"
check "given to the master's user, the same reload succeeds" ctl reload

# A secret in a directory the configuration did not use at start: Landlock
# keeps the master out of it, and the reload says so.
# (outside $T, the configuration's own directory, which it may read)
N=$(mktemp -d /tmp/nops-test.XXXXXX)
chmod 0711 "$N"
cp -p "$T/metrics.token" "$N/metrics.token"
sed -i "s|^metrics token file .*|metrics token file \"$N/metrics.token\"|" \
    "$T/master.conf"
ctl reload >/dev/null 2>&1
check "reload naming a file in a new directory exits 1" [ $? -eq 1 ]
check "the refusal names that file" \
    grep -q "$N/metrics.token cannot be read by the master's user" \
    "$T/nopsd.log"
rm -rf "$N"

# SIGTERM: the unprivileged master still signals every worker it started
# (those from before its sandbox too) and exits.
wpids="$(worker_field gitworker pid) $(worker_field webworker pid)"
kill -TERM "$DAEMON_PID"
stopped() { ! kill -0 "$DAEMON_PID" 2>/dev/null; }
check "the unprivileged master stops on SIGTERM" wait_for 15 stopped
for p in $wpids; do
	check "worker $p stopped with it" sh -c "! kill -0 $p 2>/dev/null"
done
