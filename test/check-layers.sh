#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only
# libvmctx's files stack in the order of the data (lib/README, "Layers"):
# a file calls only files listed before it.  nm on the library's objects
# finds every call from one file to another; one that goes to a file
# listed later (a lower layer calling a higher one) fails, and so does a
# lib/*.c file the table does not place, and an #include of a header of
# a higher layer.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "  layer:   a.c b.c": the files in table order, one a line, with their rank.
awk '/^  [a-z]+: +[a-z]/ { for (i = 2; i <= NF; i++) print $i }' "$srcdir/lib/README" |
	awk '{ print NR, $1 }' >"$tmp/rank"
[ -s "$tmp/rank" ] || { echo "check-layers: no layer table in lib/README" >&2; exit 1; }

# includes DIR: each #include of a private header that goes up a layer.
# A header X.h belongs to X.c's layer; a file may include its own
# layer's headers and those below, never one above (a struct or inline
# of a higher layer is as much a dependency as a call to it).
includes() {
	awk '/^  [a-z]+: +[a-z]/ { n++; for (i = 2; i <= NF; i++) { sub(/\.c$/, "", $i); print $i, n } }' \
		"$1/README" >"$tmp/layer"
	for f in "$1"/*.c "$1"/*.h; do
		base=$(basename "$f")
		grep -o '^#include "[a-z-]*\.h"' "$f" | sed 's/.*"\(.*\)\.h"/\1/' |
			awk -v base="$base" 'NR == FNR { layer[$1] = $2; next }
			     { own = base; sub(/\.[ch]$/, "", own) }
			     (own in layer) && ($1 in layer) && layer[$1] > layer[own] {
				printf "check-layers: lib/%s includes %s.h, a layer above it\n", base, $1 }' \
			"$tmp/layer" -
	done
}

rc=0
includes "$srcdir/lib" >"$tmp/upinc"
if [ -s "$tmp/upinc" ]; then
	cat "$tmp/upinc" >&2
	rc=1
fi
# and the include check fails where it should: timeline.c including
# session.h, in a copy
mkdir "$tmp/lib"
cp "$srcdir"/lib/README "$srcdir"/lib/*.c "$srcdir"/lib/*.h "$tmp/lib/"
sed -i '0,/^#include "/s//#include "session.h"\n#include "/' "$tmp/lib/timeline.c"
if ! includes "$tmp/lib" | grep -q 'lib/timeline.c includes session.h'; then
	echo "check-layers: an upward #include planted in a copy of lib/ was not found" >&2
	rc=1
fi
for c in "$srcdir"/lib/*.c; do
	f=$(basename "$c")
	if ! awk -v f="$f" '$2 == f { found = 1 } END { exit !found }' "$tmp/rank"; then
		echo "check-layers: lib/$f is in no layer of lib/README" >&2
		rc=1
	fi
done

# Each file's object, shared build or static.
obj() {
	for o in "$builddir/lib/.libs/libvmctx_internal_la-${1%.c}.o" \
		 "$builddir/lib/libvmctx_internal_la-${1%.c}.o"; do
		[ -f "$o" ] && { echo "$o"; return 0; }
	done
	return 1
}

: >"$tmp/defs"
: >"$tmp/uses"
while read -r n f; do
	o=$(obj "$f") || { echo "check-layers: no object for lib/$f" >&2; exit 1; }
	nm --defined-only "$o" | awk -v n="$n" -v f="$f" \
		'$2 ~ /^[TDBR]$/ { print $3, n, f }' >>"$tmp/defs"
	nm -u "$o" | awk -v n="$n" -v f="$f" '{ print $NF, n, f }' >>"$tmp/uses"
done <"$tmp/rank"

# symbol caller-rank caller callee-rank callee, for calls between files
awk 'NR == FNR { rank[$1] = $2; file[$1] = $3; next }
     ($1 in rank) && file[$1] != $3 { print $1, $2, $3, rank[$1], file[$1] }' \
	"$tmp/defs" "$tmp/uses" >"$tmp/calls"

awk '$4 > $2 { printf "check-layers: lib/%s calls %s() of lib/%s, a layer above it\n", $3, $1, $5 }' \
	"$tmp/calls" >"$tmp/up"
if [ -s "$tmp/up" ]; then
	cat "$tmp/up" >&2
	rc=1
fi
[ "$rc" = 0 ] && echo "check-layers: $(wc -l <"$tmp/rank") files," \
	"$(awk '{ print $3, $5 }' "$tmp/calls" | sort -u | wc -l) file-to-file edges, all downwards;" \
	"no #include goes up (a planted one is found)"
exit $rc
