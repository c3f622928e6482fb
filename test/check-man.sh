#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only
# Every libvmctx export has a man page entry: it is named in the NAME
# section of a doc/*.3.adoc page and declared in that page's SYNOPSIS.  A
# page naming a function the library does not export fails too, as a
# renamed or removed function would leave it behind.
set -eu
srcdir=${top_srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sed -n 's/^[[:space:]]*\(vmctx_[a-z0-9_]*\);.*/\1/p' "$srcdir/lib/libvmctx.map" | sort -u >"$tmp/exports"

# "name, name - purpose": the NAME paragraph, which asciidoctor also reads.
names() {
	awk '/^== /{ in_name = ($0 == "== NAME"); next }
	     in_name && NF { line = line " " $0 }
	     END { sub(/ - .*/, "", line); gsub(/,/, " ", line); print line }' "$1" |
		tr ' ' '\n' | sed '/^$/d'
}

rc=0
: >"$tmp/documented"
for page in "$srcdir"/doc/*.3.adoc; do
	synopsis=$(awk '/^== /{ in_syn = ($0 == "== SYNOPSIS"); next } in_syn' "$page")
	for name in $(names "$page"); do
		case $name in vmctx_*) ;; *) continue ;; esac
		echo "$name" >>"$tmp/documented"
		if ! printf '%s\n' "$synopsis" | grep -q "[ *]$name("; then
			echo "check-man: ${page#"$srcdir"/}: $name is named but not in the SYNOPSIS" >&2
			rc=1
		fi
	done
done
sort -u -o "$tmp/documented" "$tmp/documented"

if ! diff -u "$tmp/exports" "$tmp/documented" >"$tmp/diff"; then
	sed -n 's/^-\(vmctx_.*\)/check-man: \1 is exported but has no man page entry/p' \
		"$tmp/diff" >&2
	sed -n 's/^+\(vmctx_.*\)/check-man: \1 has a man page entry but is not exported/p' \
		"$tmp/diff" >&2
	rc=1
fi
[ "$rc" = 0 ] && echo "check-man: $(wc -l <"$tmp/exports") exports, each with a man page entry"
exit $rc
