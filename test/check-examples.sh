#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only
# Every EXAMPLE in a library man page (section 3) compiles against lib/vmctx.h, warnings as
# errors (as libtracefs's samples are extracted from its man pages), so an
# example cannot drift from the API it shows.  A page's EXAMPLE is its
# first ---- block after "== EXAMPLE"; each is a whole translation unit.
set -eu
srcdir=${top_srcdir:-.}
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
rc=0
for page in "$srcdir"/doc/*.3.adoc; do
	grep -q '^== EXAMPLE' "$page" || continue
	c=$tmp/$(basename "$page" .adoc).c
	awk '/^== /{ in_ex = ($0 == "== EXAMPLE"); next }
	     in_ex && /^----$/ { if (open) exit; open = 1; next }
	     in_ex && open' "$page" >"$c"
	n=$((n + 1))
	if ! $cc -std=gnu11 -Wall -Wextra -Werror -I"$srcdir/lib" -c "$c" -o "$c.o" 2>"$c.err"; then
		echo "check-examples: ${page#"$srcdir"/}: the EXAMPLE does not compile:" >&2
		cat "$c.err" >&2
		rc=1
	fi
done
[ "$n" -gt 0 ] || { echo "check-examples: no EXAMPLE found" >&2; exit 1; }
[ "$rc" = 0 ] && echo "check-examples: $n man page examples compile"
exit $rc
