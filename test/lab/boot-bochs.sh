#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# boot-bochs.sh KERNEL LOG [L1 cmdline extras...]: boot the L1 host on Intel
# VMX (bochs, corei7_haswell_4770) from an isolinux CD, unattended; the serial
# console goes to LOG.  VMCTX_BOCHS_INITRD (default the lab's initramfs) and
# VMCTX_BOCHS_MEGS (default 512) change what it boots with.
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

kernel=${1:?kernel}
logf=${2:?log}
shift 2
work=$LAB_DIR/bochs
rm -rf "$work"
mkdir -p "$work/iso/isolinux"
cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$work/iso/isolinux/"
cp "$kernel" "$work/iso/bzimage"
cp "${VMCTX_BOCHS_INITRD:-$LAB_DIR/initramfs.cpio.gz}" "$work/iso/initrd.gz"
# reboot=t: L1 leaves with a triple fault, which stops bochs
cat > "$work/iso/isolinux/isolinux.cfg" <<CFG
default lab
prompt 0
timeout 0
label lab
  kernel /bzimage
  initrd /initrd.gz
  append console=ttyS0,115200 reboot=t panic=-1 quiet loglevel=4 $*
CFG
xorriso -as mkisofs -quiet -o "$work/lab.iso" -b isolinux/isolinux.bin \
	-c isolinux/boot.cat -no-emul-boot -boot-load-size 4 -boot-info-table "$work/iso"

cat > "$work/bochsrc" <<RC
megs: ${VMCTX_BOCHS_MEGS:-512}
cpu: model=corei7_haswell_4770, count=1, ips=200000000, reset_on_triple_fault=0
romimage: file=/usr/share/bochs/BIOS-bochs-latest
vgaromimage: file=/usr/share/vgabios/vgabios.bin
ata0-master: type=cdrom, path=$work/lab.iso, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev=$logf
display_library: rfb, options="timeout=0"
clock: sync=none, time0=local
# Debian's bochs 2.7 aborts in its sound mixer thread where ALSA finds no
# sound card (a fresh machine): no sound devices, dummy drivers
sound: waveoutdrv=dummy, waveindrv=dummy, midioutdrv=dummy
speaker: enabled=0
log: $work/bochs.log
panic: action=fatal
error: action=report
RC
echo c > "$work/rc"
rm -f "$logf"
rc=0
(cd "$work" && timeout "${VMCTX_BOCHS_TIMEOUT:-900}" bochs -q -f bochsrc -rc rc \
	</dev/null >"$work/bochs.out" 2>&1) || rc=$?
# bochs ends with a non-zero status when L1 triple-faults (its way out), so
# the status alone says nothing: show it, and bochs' own words when L1 never
# wrote to the console
if [ ! -s "$logf" ]; then
	log "bochs exited with status $rc and L1 wrote nothing; the tail of $work/bochs.out:"
	tail -n 15 "$work/bochs.out" >&2
fi
