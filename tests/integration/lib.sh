# Shared helpers of the integration tests (sourced).  Each test starts its
# own daemon on free loopback ports, in its own temporary directory, and
# stops only the processes it started, by pid.

: "${NOPSD:?NOPSD must point at the nopsd binary}"
: "${NOPSCTL:?NOPSCTL must point at the nopsctl binary}"
: "${NOPS_RUNDIR:=/run/nops}"

T=$(mktemp -d /tmp/nops-test.XXXXXX)
# The gitworker (an unprivileged user) must reach its cache below here.
chmod 0711 "$T"
# The control socket, in a directory nopsd makes: it is then the master's
# user's, which removes its socket when it stops (nopsd.8, PRIVILEGES).
SOCK=$T/run/nopsd.sock
DAEMON_PID=
STARTED_PIDS=

cleanup() {
	for p in $STARTED_PIDS; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $STARTED_PIDS; do
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$T"
	# A script that reported a failure exits 1, whatever ran last.
	[ -z "$NOTOK" ] || exit 1
}
trap cleanup EXIT INT TERM

NOTOK=
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; NOTOK=1; }
# check NAME COMMAND...: one test case from a command's exit status.
check() {
	name=$1
	shift
	if "$@" >/dev/null 2>&1; then ok "$name"; else notok "$name"; return 1; fi
}

# test_hooks_built: nopsd was configured with --enable-test-hooks (its
# build tree's config.h says so).
test_hooks_built() {
	grep -q '^#define NOPS_TEST_HOOKS 1' "$(dirname "$NOPSD")/../config.h" \
	    2>/dev/null
}

# need_test_hooks NAME: without the test hooks, report NAME as one skipped
# case, with the reason, and end the test.
need_test_hooks() {
	test_hooks_built && return 0
	echo "ok - $1 # SKIP needs a build with --enable-test-hooks"
	exit 0
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# json EXPR: evaluate a Python expression over the JSON on stdin (as j).
json() {
	python3 -c "import json,sys; j=json.load(sys.stdin); v=($1); print(v if not isinstance(v,bool) else str(v).lower())"
}

# write_conf FILE: a minimal valid config for this test's directory.
write_conf() {
	cat >"$1" <<EOC
user "_nops"
database "$T/db/nops.db"
control socket "$SOCK" group "_nopsadm"
listen on 127.0.0.1 port ${HTTP_PORT:=$(free_port)}
drift-interval 5m
engine-interval 5s
apply-timeout 10m
EOC
}

ctl() { "$NOPSCTL" -s "$SOCK" "$@"; }

# start_daemon CONF [ENV=VALUE ...]: start nopsd -d in the background and
# wait for its control socket to answer.
start_daemon() {
	conf=$1
	shift
	env "$@" "$NOPSD" -d -v -f "$conf" >"$T/nopsd.log" 2>&1 &
	DAEMON_PID=$!
	STARTED_PIDS="$STARTED_PIDS $DAEMON_PID"
	i=0
	while [ $i -lt 100 ]; do
		if ctl -j status >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	echo "# nopsd did not come up; its log:"
	sed 's/^/# /' "$T/nopsd.log"
	return 1
}

# worker_field NAME FIELD: a field of one worker in nopsctl -j status.
worker_field() {
	ctl -j status | json "[w for w in j['workers'] if w['name']=='$1'][0]['$2']"
}

# wait_for SECONDS COMMAND...: poll until the command succeeds.
wait_for() {
	limit=$(($1 * 10))
	shift
	i=0
	while [ $i -lt $limit ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

proc_field() {
	awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"
}
