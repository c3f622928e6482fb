# SPDX-License-Identifier: GPL-2.0
# Sourced first by every /init of the lab (the L1 host's init.sh, the
# Linux-guest lab's l1-init.sh and its L2 guest's guest-init.sh), from
# /lib/vmctx-init-common.sh where install_init (lab-env.sh) puts it:
# busybox's applets, the pseudo file systems, and the vmctx.KEY=VALUE
# words of the kernel command line.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp

# lab_args KEY...: set the shell variable KEY from vmctx.KEY=VALUE on the
# kernel command line, for the KEYs named; other words are left alone.
lab_args() {
	local arg key
	for arg in $(cat /proc/cmdline); do
		case $arg in
		vmctx.*=*) ;;
		*) continue ;;
		esac
		key=${arg%%=*}
		key=${key#vmctx.}
		case " $* " in
		*" $key "*) eval "$key=\${arg#*=}" ;;
		esac
	done
}

# kernel_splats: how many lockdep, KASAN, UBSAN and WARN/BUG report lines
# the kernel's log holds (the debug L1 has them all), as a line the lab
# reads: "VMCTX-LAB: kernel splats: N"
SPLATS='WARNING:|BUG:|KASAN:|UBSAN:|possible circular locking|inconsistent lock state|suspicious RCU usage|Call Trace:'
kernel_splats() {
	echo "VMCTX-LAB: kernel splats: $(dmesg | grep -cE "$SPLATS")"
	clock_source
}

# clock_source: L1's clocksource, and the watchdog's word if it changed
# it: perf's timestamps (local_clock) follow the clocksource once the TSC
# is marked unstable, while a KVM guest's kvm-clock still runs on the TSC
# ("VMCTX-LAB: clocksource tsc", or "hpet: clocksource: Marking ...")
clock_source() {
	echo "VMCTX-LAB: clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)$(dmesg | grep -m 1 -E 'Marking clocksource|unstable' | sed 's/^\[[ 0-9.]*\] */: /')"
}
