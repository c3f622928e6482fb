#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# dwarf-work.sh SECS: the DWARF run's Debian programs, one after the other,
# under the guest's own perf record (guest-init.sh):
# xz compressing Debian's own programs (a few MiB), then perl running
# dwarf.pl, whose subs give the interpreter's C code a call structure of
# its own (sub calls, hashes, sort with a block, a regex), for SECS
# seconds.  xz runs until it has had SECS seconds of CPU, not of the
# clock: where the host keeps the vCPU from running (a loaded machine, 1
# December: 172 samples in SECS of the clock, where the host's check wants
# 200), its samples come from the CPU time it gets; at most 4 SECS of the
# clock.  Each says its pid, for the host's checks.
secs=$1
cat /usr/bin/perl /lib/x86_64-linux-gnu/libc.so.6 /usr/bin/perl > /tmp/xz.in
/usr/bin/xz -6 -T1 -c /tmp/xz.in > /dev/null &
x=$!
echo "xz: pid $x"
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
# xz's CPU time so far, in clock ticks (utime + stime)
ticks() { awk '{ print $14 + $15 }' /proc/$x/stat 2>/dev/null || echo 0; }
i=0
while [ "$i" -lt $((4 * secs)) ] && [ "$(ticks)" -lt $((secs * hz)) ]; do
	sleep 1
	i=$((i + 1))
done
echo "xz: $(awk -v t="$(ticks)" -v hz="$hz" 'BEGIN { printf "%.2f", t / hz }') s of CPU in $i s"
kill "$x"
wait
/usr/bin/perl /lib/dwarf.pl "$secs"
