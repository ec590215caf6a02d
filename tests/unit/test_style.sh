#!/bin/sh
# Lines of at most 80 columns in the product's C sources (STYLE.md: KNF,
# as OpenBSD's daemons): every .c and .h file of master, shared,
# webworker, nomadworker, gitworker and nopsctl, a tab counting to the
# next multiple of 8.  Prints one "ok" or "not ok" line per folder, with
# FILE:LINE (columns) of each line too long, and first one that plants
# an 81-column line (and a tab-indented one) to show the check can fail.

srcdir=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$srcdir/../..}
top_srcdir=$(cd "$top_srcdir" && pwd)
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

# FILE...: "FILE:LINE (N columns)" for each line over 80, tabs expanded.
long() {
	awk '{
		n = 0
		for (i = 1; i <= length($0); i++) {
			c = substr($0, i, 1)
			if (c == "\t")
				n += 8 - n % 8
			else
				n++
		}
		if (n > 80)
			printf "%s:%d (%d columns)\n", FILENAME, FNR, n
	}' "$@"
}

# The check itself: 80 columns pass, 81 do not, and a tab counts as the
# columns it spans.
printf '%080d\n' 0 >"$T/ok.c"
printf '\t%072d\n' 0 >>"$T/ok.c"
printf '%081d\n' 0 >"$T/long.c"
printf '\t\t%065d\n' 0 >"$T/tab.c"
if [ -z "$(long "$T/ok.c")" ] &&
    [ "$(long "$T/long.c")" = "$T/long.c:1 (81 columns)" ] &&
    [ "$(long "$T/tab.c")" = "$T/tab.c:1 (81 columns)" ]; then
	echo "ok - style: the check passes 80 columns and finds 81, tabs" \
	    "expanded"
else
	echo "not ok - style: the check itself is wrong"
	long "$T/ok.c" "$T/long.c" "$T/tab.c" | sed 's/^/# /'
fi

for d in master shared webworker nomadworker gitworker nopsctl; do
	set -- "$top_srcdir/$d"/*.[ch]
	if [ ! -f "$1" ]; then
		echo "not ok - style: no C sources in $d"
		continue
	fi
	long "$@" | sed "s|^$top_srcdir/||" >"$T/out"
	if [ -s "$T/out" ]; then
		echo "not ok - style: $d has lines over 80 columns"
		sed 's/^/# /' "$T/out"
	else
		echo "ok - style: $d: $# files, no line over 80 columns"
	fi
done
