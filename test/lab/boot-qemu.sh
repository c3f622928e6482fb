#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# boot-qemu.sh KERNEL LOG [L1 cmdline extras...]: boot the L1 host on AMD SVM
# (QEMU TCG, -cpu max: build-qemu.sh's QEMU) with the lab initramfs (VMCTX_QEMU_INITRD: another);
# the console goes to LOG.
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

kernel=${1:?kernel}
logf=${2:?log}
shift 2
# tsc=reliable: else TCG may mark the TSC unstable and cpu-clock drops to 250 Hz
[ -x "$L1_QEMU" ] || "$LAB_SRC/build-qemu.sh"
rc=0
timeout "${VMCTX_QEMU_TIMEOUT:-300}" "$L1_QEMU" -accel tcg -cpu max -smp 2 -m 1G \
	-nographic -no-reboot -kernel "$kernel" -initrd "${VMCTX_QEMU_INITRD:-$LAB_DIR/initramfs.cpio.gz}" \
	-append "console=ttyS0,115200 tsc=reliable panic=-1 quiet loglevel=4 $*" \
	</dev/null >"$logf" 2>&1 || rc=$?
[ $rc -eq 0 ] || log "$L1_QEMU exited with status $rc (124: timed out); see $logf"
