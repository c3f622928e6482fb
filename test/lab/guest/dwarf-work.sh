#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# dwarf-work.sh SECS: the DWARF run's Debian programs, one after the other,
# each for SECS seconds, under the guest's own perf record (guest-init.sh):
# xz compressing Debian's own programs (a few MiB), then perl running
# dwarf.pl, whose subs give the interpreter's C code a call structure of
# its own (sub calls, hashes, sort with a block, a regex).  Each says its
# pid, for the host's checks.
secs=$1
cat /usr/bin/perl /lib/x86_64-linux-gnu/libc.so.6 /usr/bin/perl > /tmp/xz.in
/usr/bin/xz -6 -T1 -c /tmp/xz.in > /dev/null &
x=$!
echo "xz: pid $x"
sleep "$secs"
kill "$x"
wait
/usr/bin/perl /lib/dwarf.pl "$secs"
