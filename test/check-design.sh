#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only
# DESIGN.md's map of the perf half names every source file the kernel
# series adds under tools/perf, and names no tools/perf file that no patch
# of the series adds or changes: a file split, renamed or added without the
# map is caught here.
set -eu
srcdir=${top_srcdir:-.}
design=$srcdir/DESIGN.md
patches=$(ls "$srcdir"/kernel-patches/[0-9][0-9][0-9][0-9]-*.patch | grep -v /0000-)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the .c files the series creates under tools/perf, relative to it
cat $patches | sed -n 's|^ create mode [0-7]* tools/perf/\(.*\.c\)$|\1|p' | sort -u >"$tmp/added"
# every tools/perf file a patch touches
cat $patches | sed -n 's|^+++ b/tools/perf/\(.*\)$|\1|p' | sort -u >"$tmp/touched"
# the tools/perf paths the map names: `util/x.c`, `builtin-x.c`, `tests/x.c`
grep -o '`\(util\|tests\)/[A-Za-z0-9_.-]*\.[ch]`\|`builtin-[a-z-]*\.c`' "$design" |
	tr -d '`' | sort -u >"$tmp/named"

[ -s "$tmp/added" ] || { echo "check-design: no file added under tools/perf: is the series there?" >&2; exit 1; }
rc=0
for f in $(comm -23 "$tmp/added" "$tmp/named"); do
	echo "check-design: DESIGN.md does not name tools/perf/$f, which the series adds" >&2
	rc=1
done
for f in $(comm -23 "$tmp/named" "$tmp/touched"); do
	echo "check-design: DESIGN.md names tools/perf/$f, which no patch of the series adds or changes" >&2
	rc=1
done
[ $rc = 0 ] && echo "check-design: $(wc -l <"$tmp/added") added and $(wc -l <"$tmp/named") named tools/perf files agree"
exit $rc
