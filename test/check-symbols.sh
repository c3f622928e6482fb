#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only
# libvmctx exports exactly what lib/libvmctx.map lists, and the map lists
# only what the library defines: nothing leaks, nothing dangles.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
so=$(ls "$builddir"/lib/.libs/libvmctx.so.* 2>/dev/null | head -n 1)
[ -n "$so" ] || { echo "check-symbols: libvmctx.so not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Version nodes (VMCTX_0.2, ...) show up as absolute symbols of their own.
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBR]$/ && $3 !~ /^VMCTX_/ { sub(/@.*/, "", $3); print $3 }' |
	sort -u >"$tmp/exported"
sed -n 's/^[[:space:]]*\(vmctx_[a-z0-9_]*\);.*/\1/p' "$srcdir/lib/libvmctx.map" | sort -u >"$tmp/map"
# Declarations start a line; comments name man pages such as vmctx_bundle(3).
grep '^[a-z]' "$srcdir/lib/vmctx.h" | grep -o '\bvmctx_[a-z0-9_]*(' | tr -d '(' | sort -u >"$tmp/header"
rc=0
if ! diff -u "$tmp/map" "$tmp/exported"; then
	echo "check-symbols: exports differ from lib/libvmctx.map (- map, + exported)" >&2
	rc=1
fi
if ! diff -u "$tmp/header" "$tmp/map"; then
	echo "check-symbols: lib/vmctx.h declarations differ from the map (- header, + map)" >&2
	rc=1
fi
[ "$rc" = 0 ] && echo "check-symbols: $(wc -l <"$tmp/map") symbols, map = exports = header"
exit $rc
