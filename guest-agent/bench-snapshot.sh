#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# How heavy is a snapshot of a busy guest?  Builds a fake tree of NPROC
# processes (default 300) plus 100 kernel threads.  Each process gets the
# real /proc/PID/maps of one of this machine's processes, so the agent
# reads real ELF files (build-ids, symbol tables) through the fake root;
# kallsyms and modules are this machine's when readable.  Prints the wall
# time, peak RSS and bundle size.  The issue's budget: < 1 s, < 5 MB.
#
# Then one process that maps NPATHS distinct files (default 100000; 0
# skips it): the agent looks each path up once, so the time printed shows
# how that cost grows (it was quadratic: 17 s for 100,000).  The files do
# not exist, so the figure is the lookups', not libelf's.
#
#   guest-agent/bench-snapshot.sh [AGENT [NPROC [NPATHS]]]
#
# AGENT defaults to $VMCTX_AGENT, else guest-agent/vmctx-agent in the
# current directory (a build tree).  Needs no root, but as root it can
# read the maps of every process, which gives a more varied mix.
set -eu

agent=${1:-${VMCTX_AGENT:-./guest-agent/vmctx-agent}}
nproc=${2:-300}
npaths=${3:-100000}
[ -x "$agent" ] || { echo "bench-snapshot: $agent: not an executable (pass AGENT)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmctx-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fake=$tmp/root
mkdir -p "$fake/proc/vmctx_guest" "$fake/proc/sys/kernel/random" "$tmp/pool"
for d in usr lib lib64 bin sbin opt; do
	[ -e "/$d" ] && ln -s "/$d" "$fake/$d"
done

# A pool of real maps that map at least one executable file.
npool=0
for m in /proc/[0-9]*/maps; do
	grep -q ' r-xp .* /' "$m" 2>/dev/null || continue
	cp "$m" "$tmp/pool/$npool" 2>/dev/null || continue
	[ -s "$tmp/pool/$npool" ] || continue
	npool=$((npool + 1))
	[ $npool -ge 64 ] && break
done
if [ $npool -eq 0 ]; then
	cp /proc/self/maps "$tmp/pool/0"
	npool=1
fi

tasks=$fake/proc/vmctx_guest/tasks
echo "vmctx_guest 1 tsc_khz=2994375 tsc=1 ns=1000000000 pti=1 cr3_mask=0x0 tasks=$((nproc + 100))" >"$tasks"
i=1
while [ $i -le 100 ]; do
	echo "$((i + 1)) $((i + 1)) 0 - - kworker/$i" >>"$tasks"
	i=$((i + 1))
done
i=1
while [ $i -le "$nproc" ]; do
	pid=$((10000 + i))
	mkdir "$fake/proc/$pid"
	cp "$tmp/pool/$((i % npool))" "$fake/proc/$pid/maps"
	printf '%d %d %d 0x%x 0x%x proc%d\n' $pid $pid $((i * 1000)) $((0x1000000 + i * 0x2000)) \
		$((0x1001000 + i * 0x2000)) $i >>"$tasks"
	i=$((i + 1))
done
: >"$fake/proc/vmctx_guest/events"

if [ "$(head -c 16 /proc/kallsyms 2>/dev/null)" != "" ] && \
   awk '$1 !~ /^0+$/ { found = 1; exit } END { exit !found }' /proc/kallsyms; then
	cp /proc/kallsyms "$fake/proc/kallsyms"
	ksrc="this machine's"
else
	# As many text symbols as a Debian 6.1 kernel has.
	awk 'BEGIN { for (i = 0; i < 120000; i++) printf "%016x t ksym_%d\n", 18446744071578845184 + i * 64, i }' \
		>"$fake/proc/kallsyms"
	ksrc="synthetic"
fi
if [ -r /proc/modules ] && [ -s /proc/modules ]; then
	cp /proc/modules "$fake/proc/modules"
else
	: >"$fake/proc/modules"
fi
echo bench-guest >"$fake/proc/sys/kernel/hostname"
uname -r >"$fake/proc/sys/kernel/osrelease"
cat /proc/sys/kernel/random/boot_id >"$fake/proc/sys/kernel/random/boot_id" 2>/dev/null || :
echo 0 >"$fake/proc/sys/kernel/kptr_restrict"

out=$tmp/bench.vmctx
start=$(date +%s%N)
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%M %U %S' -o "$tmp/rss" "$agent" snapshot -v -r "$fake" -o "$out" \
		2>"$tmp/err" || {
		cat "$tmp/err" >&2
		exit 1
	}
	rss="$(tail -n 1 "$tmp/rss" | cut -d' ' -f1) KB"
	cpu="$(tail -n 1 "$tmp/rss" | awk '{ printf "%d ms (user %s s, sys %s s)", ($2 + $3) * 1000, $2, $3 }')"
else
	"$agent" snapshot -v -r "$fake" -o "$out" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
	rss="unknown (no /usr/bin/time)"
	cpu=$rss
fi
end=$(date +%s%N)

size=$(stat -c %s "$out")
ms=$(((end - start) / 1000000))
echo "processes: $nproc (+100 kernel threads), maps from $npool real processes, $ksrc kallsyms"
sed -n 's/^vmctx-agent: snapshot: /agent: /p' "$tmp/err"
echo "wall: ${ms} ms"
echo "cpu: $cpu"
echo "peak RSS: $rss"
echo "bundle: $size bytes ($(awk "BEGIN { printf \"%.2f\", $size / 1048576 }") MiB)"
echo "text inside: $(zcat "$out" | wc -c) bytes"
if [ "$ms" -lt 1000 ] && [ "$size" -lt 5000000 ]; then
	budget=met
else
	budget=MISSED
fi
echo "budget (< 1 s, < 5 MB): $budget"

if [ "$npaths" -gt 0 ]; then
	pid=9999
	echo "vmctx_guest 1 tsc_khz=2994375 tsc=1 ns=1000000000 pti=1 cr3_mask=0x0 tasks=1" >"$tasks"
	echo "$pid $pid 1000 0x3000000 0x3001000 many" >>"$tasks"
	mkdir -p "$fake/proc/$pid"
	awk -v n="$npaths" 'BEGIN { for (i = 0; i < n; i++)
		printf "%x-%x r-xp 00000000 08:01 %d /opt/many/lib%d.so\n",
		       268435456 + i * 8192, 268439552 + i * 8192, i + 1, i }' \
		>"$fake/proc/$pid/maps"
	start=$(date +%s%N)
	"$agent" snapshot --no-kallsyms -r "$fake" -o "$out" 2>"$tmp/err" || {
		cat "$tmp/err" >&2
		exit 1
	}
	end=$(date +%s%N)
	echo "distinct paths: $npaths mapped by one process, snapshot in $(((end - start) / 1000000)) ms"
fi
[ "$budget" = met ]
