#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What does the switch log (vmctx-agent record --switches) cost a guest
# in a context-switch storm, and what does it lose?  switch-storm pins two
# threads to one CPU that hand a byte back and forth through pipes, two
# switches a round trip.  It runs ROUNDS times alone and as many times
# under 'vmctx-agent record --switches=RING' with the BPF backend,
# interleaved, SECS seconds each, and prints the best round trips a
# second of each (the storm's slowdown), and for each ring size what the
# agent logged and lost (from its -v lines), its CPU time and the bundle's
# size.  Needs root and a kernel with BTF (the BPF backend).
#
#   guest-agent/bench-switches.sh [AGENT [SECS [ROUNDS [RINGS]]]]
#
# AGENT defaults to $VMCTX_AGENT, else guest-agent/vmctx-agent in the
# current directory (a build tree); SECS 2; ROUNDS 3; RINGS "4096 65536"
# (4096 is the default ring: 80,000 switches a second a CPU at the
# default 50 ms interval, fewer than the storm makes).  A storm of SECS
# seconds near 250,000 switches a second stays below libvmctx's 64 MiB
# read limit for SECS <= 2 (vmctx-agent(8), The switch log).
set -eu

agent=${1:-${VMCTX_AGENT:-./guest-agent/vmctx-agent}}
secs=${2:-2}
rounds=${3:-3}
rings=${4:-4096 65536}
[ -x "$agent" ] || { echo "bench-switches: $agent: not an executable (pass AGENT)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench-switches: needs root (the BPF backend)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-switches: needs /usr/bin/time (package time)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmctx-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -pthread -o "$tmp/storm" "$here/tests/switch-storm.c"

# rate FILE: round trips a second from switch-storm's line
rate() { awk '{ printf "%d\n", $1 / $2 }' "$1"; }
best() { sort -n | tail -n 1; }

echo "bench-switches: $(nproc) CPUs, $(uname -r), $secs s storms, best of $rounds"
for ring in $rings; do
	: > "$tmp/alone" ; : > "$tmp/logged"
	i=0
	while [ $i -lt "$rounds" ]; do
		"$tmp/storm" "$secs" 0 > "$tmp/out"
		rate "$tmp/out" >> "$tmp/alone"
		/usr/bin/time -f '%U %S' -o "$tmp/time" "$agent" record --switches="$ring" \
			--backend=bpf -v -o "$tmp/b.vmctx" -- "$tmp/storm" "$secs" 0 \
			> "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
		rate "$tmp/out" >> "$tmp/logged"
		i=$((i + 1))
	done
	a=$(best < "$tmp/alone")
	l=$(best < "$tmp/logged")
	held=$(sed -n 's/.*the switch log holds \([0-9]*\) context switches, and \([0-9]*\) gap.*/\1 \2/p' "$tmp/err")
	lost=$(sed -n 's/.*warning: \([0-9]*\) context switches were lost.*/\1/p' "$tmp/err")
	printf 'ring %6s: storm %d round trips/s alone, %d logged (%+.1f%%); last run: %s switches and %s gaps held, %s lost; agent %s s user, %s s system; bundle %d bytes\n' \
		"$ring" "$a" "$l" "$(awk -v a="$a" -v l="$l" 'BEGIN { print a ? 100 * (l - a) / a : 0 }')" \
		"${held% *}" "${held#* }" "${lost:-0}" $(cat "$tmp/time") "$(wc -c < "$tmp/b.vmctx")"
done
