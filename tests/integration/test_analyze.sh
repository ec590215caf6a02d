#!/bin/sh
# make analyze can fail: scripts/analyze, given one file, reports a planted
# finding of each analyser and exits non-zero, passes a clean file, and
# honours a suppression written next to its finding.  Seconds: the full
# run over the tree is make analyze, outside make check.
. "$(dirname "$0")/lib.sh"

if ! command -v cppcheck >/dev/null || ! command -v clang >/dev/null; then
	echo "ok - make analyze # SKIP cppcheck or clang is not installed" \
	    "(scripts/deps installs them)"
	exit 0
fi

analyze() {
	top_srcdir=$top_srcdir top_builddir=$top_builddir \
	    sh "$top_srcdir/scripts/analyze" "$@" >"$T/out" 2>&1
}

# clang's analyser: a NULL dereferenced on one path.
cat >"$T/nullderef.c" <<'EOF'
#include <stdlib.h>
int nullderef(int);
int
nullderef(int n)
{
	int	*p = NULL;

	if (n > 0)
		p = malloc(sizeof(*p));
	if (p == NULL)
		return *p;
	*p = n;
	n = *p;
	free(p);
	return n;
}
EOF
# cppcheck: the old block leaks when realloc fails.
cat >"$T/realloc.c" <<'EOF'
#include <stdlib.h>
char *grow(size_t);
char *
grow(size_t n)
{
	char	*s;

	if ((s = malloc(1)) == NULL)
		return NULL;
	s = realloc(s, n);
	return s;
}
EOF
sed 's|^	s = realloc|	/* cppcheck-suppress memleakOnRealloc ; the test says so */\
&|' "$T/realloc.c" >"$T/suppressed.c"
cat >"$T/clean.c" <<'EOF'
int clean(int);
int
clean(int n)
{
	return n + 1;
}
EOF

if analyze "$T/nullderef.c"; then
	notok "a NULL dereference fails the run"
else
	check "a NULL dereference fails the run, named" \
	    grep -q 'nullderef.c:11.*core.NullDereference' "$T/out"
fi
if analyze "$T/realloc.c"; then
	notok "cppcheck's finding fails the run"
else
	check "cppcheck's finding fails the run, named" \
	    grep -q 'realloc.c:10.*memleakOnRealloc' "$T/out"
fi
if analyze "$T/clean.c"; then
	check "a clean file passes" grep -q '^analyze: no reports' "$T/out"
else
	notok "a clean file passes"
fi
check "a suppression with its reason next to the finding holds" \
    analyze "$T/suppressed.c"
[ -s "$T/out" ] && sed 's/^/# /' "$T/out"
exit 0
