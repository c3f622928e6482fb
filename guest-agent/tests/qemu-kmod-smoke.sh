#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Boot a real Linux 6.1 kernel under QEMU (TCG, no KVM needed) with the
# module and the agent, and check what unit tests cannot:
#   - vmctx_guest.ko loads, its files are root-only, a snapshot and a
#     record run, and processes that exit inside the window keep their maps;
#   - record --switches: the switch log names the spinning processes, the
#     idle task and kernel threads, starts at the window's start, and an
#     overrun of 64-switch rings is warned of and left as gaps; a second
#     reader of the switches file is refused, and the module unloads with
#     it open;
#   - load/unload while processes fork, unload with a reader's file open:
#     no oops, warning or BUG in dmesg;
#   - the root the module reports for a spinning process is the CR3 that
#     QEMU's monitor shows while it runs (after dropping PCID/PTI bits),
#     with pti=on (user root = root | 0x1000) and with nopti.
#
#   qemu-kmod-smoke.sh KERNEL KO AGENT
#
# KERNEL: a bzImage/vmlinuz (e.g. Debian's, from
#   apt-get download linux-image-6.1.0-NN-amd64 && dpkg -x ...);
# KO: vmctx_guest.ko built for exactly that kernel
#   (make -C guest-agent/kmod KDIR=/usr/src/linux-headers-6.1.0-NN-amd64);
# AGENT: the vmctx-agent binary; its shared libraries are copied with ldd
#   (run with LD_LIBRARY_PATH holding libvmctx when it is a build tree's).
#   It runs with --backend=kmod: a Debian guest has BTF, and auto would
#   choose BPF.
# Needs qemu-system-x86_64, a static busybox, python3 and cc -static.
# Exit 77 (skipped) when those are missing.  Takes about a minute per boot.
# VMCTX_QEMU_MODES (default "pti=on nopti"), VMCTX_QEMU_CPU (default max;
# max,+pcid,+invpcid exercises PCID), VMCTX_CHURN_LOOPS (default 15
# unload/load cycles), VMCTX_KEEP=1 (keep the guest's output on failure).
set -eu

[ $# -eq 3 ] || { echo "usage: $0 KERNEL KO AGENT" >&2; exit 2; }
kernel=$1 ko=$2 agent=$3
for t in qemu-system-x86_64 python3 cpio; do
	command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }
done
busybox=$(command -v busybox || true)
if [ -z "$busybox" ] || ! file -L "$busybox" | grep -q 'statically linked'; then
	echo "SKIP: a static busybox is needed"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmctx-qemu.XXXXXX")
trap 'if [ "${fail:-1}" = 0 ] || [ -z "${VMCTX_KEEP:-}" ]; then rm -rf "$tmp"; else echo "kept $tmp"; fi' EXIT
ir=$tmp/ir
mkdir -p "$ir/bin" "$ir/proc" "$ir/sys" "$ir/dev" "$ir/tmp"
cp "$busybox" "$ir/bin/busybox"
cp "$agent" "$ir/bin/vmctx-agent"
cp "$ko" "$ir/vmctx_guest.ko"
# The agent's libraries at the paths ld.so looks in.
ldd "$agent" | awk '/=> \// { print $3 } /^\t\// { print $1 }' | while read -r lib; do
	mkdir -p "$ir$(dirname "$lib")" "$ir/lib/x86_64-linux-gnu"
	cp -L "$lib" "$ir$lib"
	cp -L "$lib" "$ir/lib/x86_64-linux-gnu/" 2>/dev/null || :
done

cat >"$tmp/spin.c" <<'EOF'
__attribute__((noinline)) unsigned long vmctx_spin_hot(unsigned long x)
{
	unsigned long i;

	for (i = 0; i < 100000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

int main(void)
{
	unsigned long x = 1;

	for (;;)
		x = vmctx_spin_hot(x);
	return (int)x;
}
EOF
${CC:-cc} -O1 -static -o "$ir/bin/spin" "$tmp/spin.c"

cat >"$ir/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
echo "cmdline: $(cat /proc/cmdline)"
echo "cpu flags: $(grep -o -w 'pti\|pcid\|invpcid' /proc/cpuinfo | sort -u | tr '\n' ' ')"
insmod /vmctx_guest.ko ring_size=4096 && echo INSMOD_OK
ls -l /proc/vmctx_guest | grep -c '^-r-------- .* 0 *0 ' | sed 's/^/ROOT_ONLY_FILES=/'
head -1 /proc/vmctx_guest/tasks
/bin/spin &
SPIN=$!
sleep 0.2
echo "SPIN_LINE $(grep "^$SPIN " /proc/vmctx_guest/tasks)"
vmctx-agent snapshot --backend=kmod -v -o /tmp/s.vmctx; echo "SNAPSHOT_RC=$?"
vmctx-agent record --backend=kmod -v -i 20 -o /tmp/r.vmctx -- \
	sh -c 'for i in 1 2 3; do /bin/spin & P=$!; sleep 0.1; kill $P; done'
echo "RECORD_RC=$?"
echo "ENDED_SPINS=$(zcat /tmp/r.vmctx | grep '^task .*exit=[0-9].*comm=spin$' | wc -l)"
echo "ENDED_SPIN_MAPS=$(zcat /tmp/r.vmctx | grep '^map .*path=/bin/spin$' | wc -l)"
# $SPIN stopped, and a sleep at the end: the one CPU idles at times
kill -STOP $SPIN
vmctx-agent record --backend=kmod --switches -v -i 20 -o /tmp/w.vmctx -- \
	sh -c 'for i in 1 2 3; do /bin/spin & P=$!; sleep 0.1; kill $P; done; sleep 0.2'
echo "SWITCH_RECORD_RC=$?"
kill -CONT $SPIN
zcat /tmp/w.vmctx | grep '^switch ' | head -3
echo "SPIN_SWITCHES=$(zcat /tmp/w.vmctx | grep -c '^switch .*kind=task comm=spin$')"
echo "IDLE_SWITCHES=$(zcat /tmp/w.vmctx | grep -c '^switch .*pid=0 tgid=0 kind=idle ')"
echo "KTHREAD_SWITCHES=$(zcat /tmp/w.vmctx | grep -c '^switch .*kind=kthread ')"
WS=$(zcat /tmp/w.vmctx | sed -n 's/^window start=\([0-9]*\) .*/\1/p')
echo "CPU0_AT_START=$(zcat /tmp/w.vmctx | grep -c "^switch 0 $WS ")"
vmctx-agent record --backend=kmod --switches=64 -i 1000 -o /tmp/o.vmctx -- \
	sh -c 'i=0; while [ $i -lt 200 ]; do /bin/busybox true; i=$((i+1)); done' 2>/tmp/o.err
echo "OVERRUN_RC=$? WARNED=$(grep -c 'context switches were lost' /tmp/o.err) GAPS=$(zcat /tmp/o.vmctx | grep -c '^gap ')"
exec 4</proc/vmctx_guest/switches
cat /proc/vmctx_guest/switches >/dev/null 2>&1 || echo SECOND_READER_REFUSED
rmmod vmctx_guest && echo RMMOD_SWITCHES_OPEN_OK
exec 4<&-
insmod /vmctx_guest.ko ring_size=4096 || echo INSMOD_FAIL
( i=0; while [ $i -lt 300 ]; do /bin/busybox true; i=$((i+1)); done ) &
C1=$!
( i=0; while [ $i -lt 300 ]; do sh -c 'exit 0'; i=$((i+1)); done ) &
C2=$!
n=0
while [ $n -lt @CHURN@ ]; do
	rmmod vmctx_guest || echo RMMOD_FAIL
	insmod /vmctx_guest.ko ring_size=64 || echo INSMOD_FAIL
	cat /proc/vmctx_guest/events >/dev/null
	( cat /proc/vmctx_guest/tasks >/dev/null 2>&1 ) &
	n=$((n+1))
done
wait $C1 $C2
rmmod vmctx_guest && insmod /vmctx_guest.ko && echo RELOAD_OK
exec 3</proc/vmctx_guest/events
rmmod vmctx_guest && echo RMMOD_OPEN_OK
cat <&3 >/dev/null 2>&1 || echo READ_AFTER_RMMOD_FAILS_CLEANLY
exec 3<&-
insmod /vmctx_guest.ko && echo INSMOD_AGAIN_OK
echo "KERNEL_COMPLAINTS=$(dmesg | grep -ciE 'oops|bug:|warning:|call trace|general protection')"
echo "MARK_SPIN $SPIN"
sleep 15
echo MARK_END
reboot -f
EOF
sed -i "s/@CHURN@/${VMCTX_CHURN_LOOPS:-15}/" "$ir/init"
chmod +x "$ir/init"
(cd "$ir" && find . | cpio -o -H newc 2>/dev/null | gzip -1 >"$tmp/initrd.gz")

cat >"$tmp/drive.py" <<'EOF'
import os, re, socket, subprocess, sys, time

kernel, initrd, append, log, mon = sys.argv[1:6]
p = subprocess.Popen(["qemu-system-x86_64", "-accel", "tcg", "-cpu", os.environ.get("VMCTX_QEMU_CPU", "max"), "-m", "512",
                      "-smp", "1", "-kernel", kernel, "-initrd", initrd,
                      "-append", "console=ttyS0 quiet " + append, "-display", "none",
                      "-no-reboot", "-serial", "file:" + log,
                      "-monitor", "unix:%s,server,nowait" % mon])
t0 = time.time()

def text():
    try:
        return open(log, errors="replace").read()
    except FileNotFoundError:
        return ""

while "MARK_SPIN" not in text():
    if p.poll() is not None or time.time() - t0 > 600:
        p.kill()
        print(text())
        sys.exit("no MARK_SPIN from the guest")
    time.sleep(0.5)
s = socket.socket(socket.AF_UNIX)
s.connect(mon)
s.settimeout(1)

def ask(cmd):
    s.sendall((cmd + "\n").encode())
    out = b""
    try:
        while not out.rstrip().endswith(b"(qemu)") or cmd.encode() not in out:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except socket.timeout:
        pass
    return out.decode(errors="replace")

ask("")
cr3 = []
for _ in range(20):
    time.sleep(0.1)
    m = re.search(r"CR3=([0-9a-f]+)", ask("info registers"))
    if m:
        cr3.append(int(m.group(1), 16))
while p.poll() is None and "MARK_END" not in text() and time.time() - t0 < 700:
    time.sleep(0.5)
time.sleep(2)
if p.poll() is None:
    p.kill()
out = text()
print(out)
print("CR3_SAMPLES " + " ".join("%#x" % c for c in cr3))
EOF

fail=0
check() {	# check LOG DESCRIPTION GREP-PATTERN
	if grep -qE "$3" "$1"; then
		echo "ok: $2"
	else
		echo "FAIL: $2"
		fail=1
	fi
}

for mode in ${VMCTX_QEMU_MODES:-pti=on nopti}; do
	log=$tmp/serial.log
	rm -f "$log" "$tmp/monitor.sock"
	echo "== booting with $mode"
	python3 "$tmp/drive.py" "$kernel" "$tmp/initrd.gz" "$mode" "$log" "$tmp/monitor.sock" \
		>"$tmp/out-$mode" 2>&1 || { cat "$tmp/out-$mode"; fail=1; continue; }
	o=$tmp/out-$mode
	check "$o" "module loads" '^INSMOD_OK'
	check "$o" "the three files are mode 0400, owned by root" '^ROOT_ONLY_FILES=3'
	check "$o" "snapshot succeeds" '^SNAPSHOT_RC=0'
	check "$o" "record succeeds" '^RECORD_RC=0'
	check "$o" "three spins that ended in the window are in the record" '^ENDED_SPINS=3'
	check "$o" "... with their maps" '^ENDED_SPIN_MAPS=[1-9]'
	check "$o" "record --switches succeeds" '^SWITCH_RECORD_RC=0'
	check "$o" "... and logs the spins" '^SPIN_SWITCHES=[1-9]'
	check "$o" "... the idle task" '^IDLE_SWITCHES=[1-9]'
	check "$o" "... and kernel threads" '^KTHREAD_SWITCHES=[1-9]'
	check "$o" "... from the window's start (the task at open)" '^CPU0_AT_START=1$'
	check "$o" "an overrun of 64-switch rings is warned of and left as gaps" \
		'^OVERRUN_RC=0 WARNED=1 GAPS=[1-9]'
	check "$o" "a second reader of the switches file is refused" '^SECOND_READER_REFUSED'
	check "$o" "unload with the switches file open" '^RMMOD_SWITCHES_OPEN_OK'
	check "$o" "load/unload under fork churn" '^RELOAD_OK'
	check "$o" "unload with an open events file" '^RMMOD_OPEN_OK'
	check "$o" "reload after that" '^INSMOD_AGAIN_OK'
	check "$o" "no oops, BUG or warning in dmesg" '^KERNEL_COMPLAINTS=0'
	if grep -q '^RMMOD_FAIL\|^INSMOD_FAIL' "$o"; then
		echo "FAIL: a load or unload failed during the churn:"
		grep -B2 '^RMMOD_FAIL\|^INSMOD_FAIL' "$o" | head -20
		fail=1
	fi
	# The module's root for the spinning process against the CR3 QEMU saw.
	python3 - "$o" "$mode" <<'EOF' || fail=1
import re, sys
out = open(sys.argv[1]).read()
m = re.search(r"SPIN_LINE \d+ \d+ \d+ (0x[0-9a-f]+) (\S+) spin", out)
c = re.search(r"CR3_SAMPLES (.*)", out)
if not m or not c:
    sys.exit("FAIL: no SPIN_LINE or CR3 samples")
root = int(m.group(1), 16)
user = None if m.group(2) == "-" else int(m.group(2), 16)
cr3 = [int(x, 16) for x in c.group(1).split()]
mask = 0x000fffffffffe000
hits = sum(1 for x in cr3 if x & mask == root & mask)
exact = sum(1 for x in cr3 if x & ~0xfff & ((1 << 52) - 1) in (root, user))
print("%s: root %#x user root %s; %d of %d CR3 samples match after normalising, %d exactly"
      % (sys.argv[2], root, m.group(2), hits, len(cr3), exact))
print("CR3 values seen: " + " ".join(sorted(set("%#x" % x for x in cr3))))
flags = re.search(r"cpu flags: (.*)", out)
print("guest cpu flags: " + (flags.group(1) if flags else "?"))
if sys.argv[2] == "pti=on" and user != root | 0x1000:
    sys.exit("FAIL: with PTI the user root is not root | 0x1000")
if sys.argv[2] == "nopti" and user is not None:
    sys.exit("FAIL: without PTI a user root is shown")
if hits < len(cr3) * 0.8:
    sys.exit("FAIL: the module's root is not the CR3 the spinning process runs with")
print("ok: the module's root is the CR3 QEMU sees")
EOF
done
exit $fail
