#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# /init of the lab's L2 Linux guest.  Loads vmctx_guest.ko, records with
# vmctx-agent while two "hot" processes and one short-lived "blip" run (and,
# with vmctx.churn=1, one short "churn" process after another on vCPU 0),
# and writes the bundle to the virtio disk the host gave it.  Then it
# loads and unloads the module while processes churn, and powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null

secs=4 churn=0
for arg in $(cat /proc/cmdline); do
	case $arg in
	vmctx.secs=*) secs=${arg#*=} ;;
	vmctx.churn=*) churn=${arg#*=} ;;
	esac
done

say() { echo "VMCTX-L2: $*"; }
bye() {
	say "DONE $1"
	sleep 1
	reboot -f
}

pti=off
grep -qw pti /proc/cpuinfo && pti=on
say "up: kernel $(uname -r) cpus $(grep -c ^processor /proc/cpuinfo) pti=$pti pcid=$(grep -qw pcid /proc/cpuinfo && echo yes || echo no)"
# Debian's modules, as a distro guest has them: virtio for the disk, and
# dozens more (vmctx-agent must handle every one of them)
for m in $(cat /lib/vmctx-modules); do
	modprobe "$m" || say "modprobe $m failed"
done
n=0
while [ ! -b /dev/vda ] && [ $n -lt 50 ]; do usleep 100000; n=$((n + 1)); done
[ -b /dev/vda ] || bye "FAIL no /dev/vda (virtio_blk)"
say "modules: $(wc -l < /proc/modules) loaded"
insmod /lib/vmctx_guest.ko || bye "FAIL insmod"

# The window: the agent first, so every exec and exit is in its log.
vmctx-agent record -o /tmp/guest1.vmctx -d $((secs + 2)) &
agent=$!
sleep 1
# both on vCPU 1, so that the guest's scheduler shares it between them
taskset -c 1 hot -t "$secs" > /tmp/hot1.out &
taskset -c 1 hot -t "$secs" > /tmp/hot2.out &
blip -t 1 > /tmp/blip.out &
# churn: processes of 20 ms of work each, one after the other on vCPU 0,
# whose freed page-table roots the next ones reuse at once.  They stop a
# second before the agent's window closes: the host records until the
# guest says so, and churn outside the window is in no bundle.
if [ "$churn" = 1 ]; then
	(sleep $((secs + 1)); touch /tmp/stop) &
	taskset -c 0 sh -c 'n=0; while [ ! -f /tmp/stop ]; do churn -t 0.02 >/dev/null; n=$((n + 1)); done; echo $n > /tmp/churn.n' &
	churner=$!
fi
wait $agent || bye "FAIL vmctx-agent record"
touch /tmp/stop
wait
[ "$churn" = 1 ] && say "churn: $(cat /tmp/churn.n) processes of 20 ms"
# The host stops sampling when it reads this; give it a moment, so that
# the processes below (outside the agent's window) are not sampled.
say "window closed"
# the work each hot did, for the host's check of how the samples split
# (and where each one's libc code lay)
{ cat /tmp/hot1.out /tmp/hot2.out; grep 'libc text' /tmp/blip.out; } |
	while read -r line; do say "$line"; done
sleep 1
# The bundle goes out on the virtio disk the host gave us (/dev/vda).
dd if=/tmp/guest1.vmctx of=/dev/vda bs=65536 conv=fsync 2>/dev/null || bye "FAIL writing the bundle to /dev/vda"
say "bundle $(wc -c < /tmp/guest1.vmctx) bytes on vda"
say "timers: $(grep -E 'LOC|TIMER' /proc/interrupts | tr -s ' ' | tr '\n' ' ') clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"

# Unload and reload while processes come and go: no oops, no leak.  Only
# what the kernel says from here on counts: a distro kernel's boot already
# says "WARNING" (RETBleed and the like on this emulated CPU).
complaints='BUG|Oops|WARNING|general protection'
said=$(dmesg | grep -cE "$complaints")
rmmod vmctx_guest || bye "FAIL rmmod"
free_before=$(awk '/MemFree/ {print $2}' /proc/meminfo)
( i=0; while [ $i -lt 200 ]; do true; i=$((i + 1)); done ) &
churn=$!
i=0
while [ $i -lt 20 ]; do
	insmod /lib/vmctx_guest.ko || bye "FAIL insmod $i"
	cat /proc/vmctx_guest/tasks > /dev/null 2>&1
	rmmod vmctx_guest || bye "FAIL rmmod $i"
	i=$((i + 1))
done
wait $churn
if [ "$(dmesg | grep -cE "$complaints")" -gt "$said" ]; then
	dmesg | grep -E "$complaints" | tail -n +$((said + 1)) | tail -20
	bye "FAIL kernel complained during load/unload churn"
fi
say "churn: 20 load/unload cycles, MemFree $free_before -> $(awk '/MemFree/ {print $2}' /proc/meminfo) kB"
bye PASS
