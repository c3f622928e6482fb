#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# /init of the L1 host for the Linux-guest lab.  Runs QEMU with KVM for an
# L2 Linux guest (vmctx-agent inside) and takes the guest's bundle from a
# virtio disk.  vmctx.host=perf records as a user does, with
# 'perf record --vmcs-ctx -a', and checks what 'perf report --guest-maps'
# and 'perf script' print (perf-check.sh); vmctx.host=lab-record records
# with the lab's recorder and checks the kernel's capture sample by sample
# (lab-linux-check).  vmctx.pti=on|off picks the guest's page-table
# isolation.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp

period=1000000 secs=4 pti=on dump=0 host=lab-record churn=0
for arg in $(cat /proc/cmdline); do
	case $arg in
	vmctx.period=*) period=${arg#*=} ;;
	vmctx.secs=*) secs=${arg#*=} ;;
	vmctx.pti=*) pti=${arg#*=} ;;
	vmctx.dump=*) dump=${arg#*=} ;;
	vmctx.host=*) host=${arg#*=} ;;
	vmctx.churn=*) churn=${arg#*=} ;;
	esac
done
finish() {
	echo "VMCTX-LAB: RESULT $1"
	sleep 2
	reboot -f
}
echo "VMCTX-LAB: L1 up for the Linux guest (pti=$pti, period ${period} ns, $host)"
# KVM's debugfs holds the TSC offsets that perf record --vmcs-ctx records;
# tracefs the kvm_vcpu_wakeup tracepoint
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
[ -c /dev/kvm ] || finish "FAIL no /dev/kvm"
# Under TCG a sample costs ~100x what it costs on hardware: the kernel would
# throttle cpu-clock (perf_cpu_time_max_percent), and drop ticks unevenly.
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent

case $pti in
on) l2pti=pti=on ;;
*) l2pti=nopti ;;
esac
# debug-threads: vCPU threads are named "CPU N/KVM" (the vCPU id also comes
# from the sample block, so nothing depends on it)
# the bundle comes back on this virtio disk
dd if=/dev/zero of=/tmp/out.img bs=1M count=16 2>/dev/null
cat > /tmp/run-l2.sh <<EOS
qemu-system-x86_64 -accel kvm -cpu host -smp 2 -m 256M -nodefaults -no-reboot \
	-display none -serial stdio -name guest1,debug-threads=on -L /share/qemu \
	-drive file=/tmp/out.img,if=virtio,format=raw \
	-kernel /lab/l2/bzImage -initrd /lab/l2/initramfs.cpio.gz \
	-append "console=ttyS0 quiet panic=-1 tsc=reliable lapic=notscdeadline $l2pti vmctx.secs=$secs vmctx.churn=$churn" \
	> /tmp/l2.log 2>&1
echo "qemu exit \$?" > /tmp/l2.exit
EOS
# The recording window is the guest agent's: from QEMU's start until the
# guest says "window closed"; QEMU goes on to hand over the bundle.
cat > /tmp/window.sh <<'EOS'
sh /tmp/run-l2.sh &
while ! grep -aq '^VMCTX-L2: window closed' /tmp/l2.log 2>/dev/null; do
	[ -f /tmp/l2.exit ] && exit 1
	usleep 50000
done
EOS
if [ "$host" = perf ]; then
	perf record --vmcs-ctx -e cpu-clock -c "$period" -a -o /tmp/perf.data -- sh /tmp/window.sh \
		2> /tmp/perf-record.err ||
		{ cat /tmp/perf-record.err; tail -30 /tmp/l2.log; cat /tmp/l2.exit; finish "FAIL perf record of the L2 guest"; }
	grep -v '^\[ perf record' /tmp/perf-record.err
else
	lab-record -c "$period" -o /tmp/samples.txt -- sh /tmp/window.sh ||
		{ tail -30 /tmp/l2.log; cat /tmp/l2.exit; finish "FAIL recording the L2 guest"; }
fi
# Show the guest's progress lines while it hands over the bundle.
tail -f /tmp/l2.log | grep -a '^VMCTX-L2' &
progress=$!
waited=0
while [ ! -f /tmp/l2.exit ]; do
	sleep 1
	waited=$((waited + 1))
	if [ $waited -gt "${l2_timeout:-240}" ]; then
		kill $progress
		tail -c 2000 /tmp/l2.log
		finish "FAIL the L2 guest did not finish within ${l2_timeout:-240} s"
	fi
done
kill $progress
grep -aq '^VMCTX-L2: DONE PASS' /tmp/l2.log || { tail -30 /tmp/l2.log; finish "FAIL L2 guest"; }
size=$(sed -n 's/^VMCTX-L2: bundle \([0-9]*\) bytes on vda.*/\1/p' /tmp/l2.log)
[ -n "$size" ] || finish "FAIL no bundle size from the L2 guest"
head -c "$size" /tmp/out.img > /tmp/guest1.vmctx || finish "FAIL bundle transfer"
# vmctx.dump=1: hand the raw data to the lab host for offline analysis
if [ "$dump" = 1 ]; then
	for f in samples.txt perf.data guest1.vmctx; do
		[ -f /tmp/$f ] || continue
		echo "VMCTX-DUMP-BEGIN $f"
		gzip -c /tmp/$f | base64
		echo "VMCTX-DUMP-END $f"
	done
fi
# "hot: pid N: R rounds" from the guest: the work each instance did
work=$(tr -d '\r' < /tmp/l2.log |
	sed -n 's/^VMCTX-L2: hot: pid \([0-9]*\): \([0-9]*\) rounds.*/\1:\2/p' | tr '\n' ,)
# "hot: pid N: libc text LO-HI": where each instance's libc.so.6 code lay
libc=$(tr -d '\r' < /tmp/l2.log |
	sed -n 's/^VMCTX-L2: hot: pid [0-9]*: libc text \(0x[0-9a-f]*-0x[0-9a-f]*\).*/\1/p' | tr '\n' ,)
if [ "$host" = perf ]; then
	sh /lab/perf-check.sh /tmp/perf.data /tmp/guest1.vmctx "${work%,}" "${libc%,}" ||
		finish "FAIL Linux guest through perf (pti=$pti)"
	finish "PASS linux pti=$pti perf"
fi
lab-linux-check -s /tmp/samples.txt -b /tmp/guest1.vmctx -p 0 -y /lab/hot.syms -w "${work%,}" ||
	finish "FAIL Linux guest checks (pti=$pti)"
finish "PASS linux pti=$pti"
