#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# boot-qemu.sh KERNEL LOG [L1 cmdline extras...]: boot the L1 host on AMD SVM
# (QEMU TCG, -cpu max) with the lab initramfs (VMCTX_QEMU_INITRD: another);
# the console goes to LOG.
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

kernel=${1:?kernel}
logf=${2:?log}
shift 2
# tsc=reliable: else TCG may mark the TSC unstable and cpu-clock drops to 250 Hz
rc=0
timeout "${VMCTX_QEMU_TIMEOUT:-300}" qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 1G \
	-nographic -no-reboot -kernel "$kernel" -initrd "${VMCTX_QEMU_INITRD:-$LAB_DIR/initramfs.cpio.gz}" \
	-append "console=ttyS0,115200 tsc=reliable panic=-1 quiet loglevel=4 $*" \
	</dev/null >"$logf" 2>&1 || rc=$?
[ $rc -eq 0 ] || log "qemu-system-x86_64 exited with status $rc (124: timed out); see $logf"
