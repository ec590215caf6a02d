#!/bin/sh
# make install puts the binaries, the man pages and the example config in
# place; the installed example parses; the systemd unit verifies.
. "$(dirname "$0")/lib.sh"

D="$T/dest"
make -C "$top_builddir" install DESTDIR="$D" >"$T/install.log" 2>&1
check "make install succeeds" [ $? -eq 0 ]
for f in sbin/nopsd sbin/nopsctl share/man/man5/nops.conf.5 \
    share/man/man7/nops-jobs.7 share/man/man8/nopsd.8 \
    share/man/man8/nopsctl.8 etc/nops/nops.conf.example; do
	check "installed: $f" test -s "$D/usr/local/$f"
done
check "the installed nopsd runs" sh -c "'$D/usr/local/sbin/nopsd' -h 2>&1 |
    grep -q 'usage: nopsd'"

# The unit, with its binary path pointed at the installed one
# (systemd-analyze comes with Debian's systemd; scripts/deps installs it).
check "systemd-analyze is installed" command -v systemd-analyze
if command -v systemd-analyze >/dev/null 2>&1; then
	sed "s|/usr/local/sbin/nopsd|$D/usr/local/sbin/nopsd|g" \
	    "$top_srcdir/etc/nopsd.service" >"$T/nopsd.service"
	# --man=no: the unit's Documentation= pages are not installed here.
	out=$(systemd-analyze verify --man=no "$T/nopsd.service" 2>&1)
	check "systemd-analyze verify etc/nopsd.service: no complaint" \
	    test -z "$out"
	[ -z "$out" ] || echo "$out" | sed 's/^/# /'
fi
