#!/bin/sh
# SQL lives in the store modules only (README, "Layout"): outside
# master/store.c, master/store_*.c and their headers no master file
# includes sqlite3.h, names an sqlite3 function or type, or holds SQL
# text in a string.  Files still waiting to be moved are listed in
# "pending" below; each is removed from the list as its SQL moves, and a
# listed file that is already clean fails too, so the list cannot rot.
# The store modules reach SQLite through master/store_priv.h: no source
# file outside master/store.c and master/store_*.c includes it, and the
# public store headers (store.h, store_<group>.h) name no sqlite3 type,
# so a file that includes them cannot reach SQLite either.
# Prints one "ok" or "not ok" line per master source file, then one per
# check of the private header, then one for the rule that handlers never
# decode their messages again (issue 16, item 1).

srcdir=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$srcdir/../..}
top_srcdir=$(cd "$top_srcdir" && pwd)
master=$top_srcdir/master

# Not yet moved into store modules (issue 16, item 3): none left.
pending=""

if [ ! -f "$master/store.c" ]; then
	echo "not ok - layering: no master/store.c under $top_srcdir"
	exit 1
fi

# What makes a file hold SQL: the header, the library's names, a string
# literal that reads as a statement or one of its clauses, or the store's
# statement helpers (they hand out SQLite statements).  One grep per
# pattern over every file; hits are "file:line:text".
files=$(ls "$master"/*.c "$master"/*.h "$master"/*.y 2>/dev/null |
    grep -vE '/store(_[a-z0-9_]+)?\.[ch]$')
hits=$(
	grep -nHE '#[[:space:]]*include[[:space:]]*[<"]sqlite3\.h[>"]' $files
	grep -nHE '\bsqlite3(_[a-z0-9_]+)?\b' $files
	grep -nHE '"[^"]*(\bSELECT\b|\bINSERT( OR [A-Z]+)? INTO\b|\bUPDATE [a-z_]+ SET\b|\bDELETE FROM\b|\bWHERE\b|\bVALUES *\(|\bORDER BY\b|\bGROUP BY\b|\bPRAGMA\b|\bON CONFLICT\b|\bRETURNING\b|\bFROM [a-z_]+|\bJOIN [a-z_]+ )' $files
	grep -nHE '\bstore_(prepare|db|col_strdup|col_int)\(' $files
)

n=0
for f in $files; do
	b=${f##*/}
	n=$((n + 1))
	fh=$(printf '%s\n' "$hits" | grep -F "$f:" | sort -u | head -3)
	case " $(echo $pending) " in
	*" $b "*)
		if [ -n "$fh" ]; then
			echo "ok - master/$b holds SQL: listed as not yet moved"
		else
			echo "not ok - master/$b is listed as pending but holds no" \
			    "SQL: remove it from the list in test_layering.sh"
		fi
		;;
	*)
		if [ -n "$fh" ]; then
			echo "not ok - master/$b holds SQL outside the store modules:"
			printf '%s\n' "$fh" | sed "s|^$master/|#   |"
		else
			echo "ok - master/$b holds no SQL"
		fi
		;;
	esac
done

# Every pending name must still be a file: a stale entry says the list
# is not kept.
for p in $pending; do
	if [ ! -f "$master/$p" ]; then
		echo "not ok - test_layering.sh lists master/$p, which is gone"
	fi
done

if [ "$n" -lt 10 ]; then
	echo "not ok - layering: only $n master files found under $master"
fi

# The private header: included by the store modules alone.  Production
# sources of every process, the benchmarks and the fuzzers are checked;
# the store's own unit tests may include it.
priv=$(cd "$top_srcdir" && grep -lE \
    '#[[:space:]]*include[[:space:]]*[<"]store_priv\.h[>"]' \
    master/*.[chy] shared/*.[ch] gitworker/*.[ch] nomadworker/*.[ch] \
    webworker/*.[ch] nopsctl/*.[ch] bench/*.c tests/fuzz/*.c 2>/dev/null |
    grep -vE '^master/store(_[a-z0-9_]+)?\.c$')
if [ -n "$priv" ]; then
	echo "not ok - store_priv.h is included outside the store modules:"
	printf '%s\n' "$priv" | sed 's/^/#   /'
else
	echo "ok - store_priv.h is included by the store modules alone"
fi
if [ ! -f "$master/store_priv.h" ]; then
	echo "not ok - layering: no master/store_priv.h"
fi

# The public store headers name no SQLite type and include no header
# that does.
pub=$(ls "$master"/store.h "$master"/store_*.h | grep -v '/store_priv\.h$')
shits=$(grep -nHE '\bsqlite3(_[a-z0-9_]+)?\b|[<"]store_priv\.h[>"]' $pub)
if [ -n "$shits" ]; then
	echo "not ok - a public store header names SQLite:"
	printf '%s\n' "$shits" | head -3 | sed "s|^$master/|#   |"
else
	echo "ok - the public store headers ($(echo $pub | wc -w)) name no SQLite"
fi

# Each message is decoded once, by its receiver's dispatch through the
# message table (imsg_decode(), shared/msgtab.h): no source of a process
# outside shared/ reads a payload itself with msg_reader() or a
# wire_get_*() decoder.
dhits=$(cd "$top_srcdir" && grep -nHE '\b(msg_reader|wire_get_[a-z0-9_]+)\(' \
    master/*.[chy] gitworker/*.[ch] nomadworker/*.[ch] webworker/*.[ch] \
    2>/dev/null)
if [ -n "$dhits" ]; then
	echo "not ok - a handler decodes its message again:"
	printf '%s\n' "$dhits" | head -3 | sed 's/^/#   /'
else
	echo "ok - every handler takes its payload decoded by the dispatch"
fi
