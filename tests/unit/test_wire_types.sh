#!/bin/sh
# A field table of shared/wire.h cannot read a member as what it is not:
# each WF_ row checks the member's type when it is compiled (WF_TYPE).
# A small layout with a row of every kind is compiled with the C
# compiler: with the right members it compiles; with a uint32_t member in
# a WF_U64 row, a const char * in a WF_U32 row, an int64_t in a WF_I32
# row, an int in a WF_STR row, a uint32_t length in a WF_DATA row or a
# size_t count in a WF_STRS row it fails, and the message names the
# layout, the member and the type it should have.

srcdir=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$srcdir/../..}
top_srcdir=$(cd "$top_srcdir" && pwd)
top_builddir=${top_builddir:-$top_srcdir}
CC=${CC:-cc}
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

# Without a compiler nothing can be compiled, so nothing is checked; the
# build that runs this test has one (scripts/deps installs gcc).
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "ok - wire types # SKIP no C compiler ($CC)"
	exit 0
fi

# $1: the struct's members.  Compiles them as layout "t", with a table of
# items and a table of fields that name every kind, to an object; the
# compiler's output in $T/out.
compile() {
	{
		printf '#include <stddef.h>\n#include <stdint.h>\n'
		printf '#include "wire.h"\nstruct wire_t {\n%s\n};\n' "$1"
		cat <<'END'
static const struct wire_field t_items[] = {
	WF_STR(t, hname[0], 16),
};
const struct wire_field t_fields[] = {
	WF_U8(t, flag),
	WF_U32(t, seq),
	WF_I32(t, status),
	WF_U64(t, id),
	WF_I64(t, at),
	WF_STR(t, name, 64),
	WF_DATA(t, body, bodylen, 1024),
	WF_STRS(t, nhdr, 4, "too many", t_items),
};
END
	} >"$T/t.c"
	"$CC" -std=gnu11 -I"$top_builddir" -I"$top_srcdir/shared" \
	    -c "$T/t.c" -o "$T/t.o" >"$T/out" 2>&1
}

good='	uint8_t		 flag;
	uint32_t	 seq;
	int32_t		 status;
	uint64_t	 id;
	int64_t		 at;
	const char	*name;
	const void	*body;
	size_t		 bodylen;
	uint32_t	 nhdr;
	const char	*hname[4];'

if compile "$good"; then
	echo "ok - wire types: a table whose rows match its members compiles"
else
	echo "not ok - wire types: a right table does not compile"
	sed 's/^/# /' "$T/out" | head -20
fi

# $1: the case, $2: a sed command that swaps one member's type, $3: what
# the error must say.
refused() {
	if compile "$(echo "$good" | sed "$2")"; then
		echo "not ok - wire types: $1 compiles"
	elif grep -qF "$3" "$T/out"; then
		echo "ok - wire types: $1 is refused: \"$3\""
	else
		echo "not ok - wire types: $1 is refused without \"$3\""
		sed 's/^/# /' "$T/out" | head -10
	fi
}

refused "a uint32_t member in a WF_U64 row" \
    's/uint64_t	 id;/uint32_t	 id;/' 'wire_t.id is not uint64_t'
refused "a const char * member in a WF_U32 row" \
    's/uint32_t	 seq;/const char	*seq;/' 'wire_t.seq is not uint32_t'
refused "an int64_t member in a WF_I32 row" \
    's/int32_t		 status;/int64_t		 status;/' \
    'wire_t.status is not int32_t'
refused "an int member in a WF_STR row" \
    's/const char	\*name;/int		 name;/' 'wire_t.name is not const char *'
refused "a uint32_t length in a WF_DATA row" \
    's/size_t		 bodylen;/uint32_t	 bodylen;/' \
    'wire_t.bodylen is not size_t'
refused "a size_t count in a WF_STRS row" \
    's/uint32_t	 nhdr;/size_t		 nhdr;/' 'wire_t.nhdr is not uint32_t'
