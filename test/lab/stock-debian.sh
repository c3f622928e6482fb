#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# stock-debian.sh: the stock L1 from Debian's own 6.12 kernel package, the
# kernel users run, with no build: the newest linux-image-6.12.*-cloud-amd64-
# unsigned in the package lists is downloaded and unpacked into
# $VMCTX_LAB_DIR/debian-stock; its KVM is modules, so irqbypass, kvm,
# kvm-amd and kvm-intel are unpacked into a cpio that is appended to the
# lab's initramfs (init.sh loads them in stock mode).
#
# Prints the kernel and the initramfs to boot, one per line.  Exits non-zero
# (with a message) when no such package can be had, so that run-lab.sh can
# fall back to building a stock kernel.
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

dest=$LAB_DIR/debian-stock
pkg=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb[0-9]+-cloud-amd64-unsigned$' 2>/dev/null |
	awk '{ print $1 }' | sort -V | tail -n 1)
[ -n "$pkg" ] || die "no linux-image-6.12.*-cloud-amd64-unsigned in the package lists (apt-get update?)"
kver=${pkg#linux-image-}
kver=${kver%-unsigned}

if [ "$(cat "$dest/.vmctx-pkg" 2>/dev/null)" != "$pkg" ]; then
	log "downloading Debian's $pkg"
	rm -rf "$dest"
	mkdir -p "$dest/deb" "$dest/cpio/lib/vmctx-stock"
	(cd "$dest/deb" && apt-get download -q "$pkg" >/dev/null 2>&1) ||
		die "apt-get download $pkg failed"
	dpkg-deb -x "$dest"/deb/*.deb "$dest/root"
	for m in virt/lib/irqbypass arch/x86/kvm/kvm arch/x86/kvm/kvm-amd arch/x86/kvm/kvm-intel; do
		src=$dest/root/lib/modules/$kver/kernel/$m.ko.xz
		[ -f "$src" ] || die "$pkg has no $m.ko.xz"
		xz -dc "$src" > "$dest/cpio/lib/vmctx-stock/$(basename "$m").ko"
	done
	pack_initramfs "$dest/cpio" "$dest/modules.cpio.gz" 9
	echo "$pkg" > "$dest/.vmctx-pkg"
fi
# the kernel takes concatenated cpio archives: the lab's, then the modules
cat "$LAB_DIR/initramfs.cpio.gz" "$dest/modules.cpio.gz" > "$dest/initramfs.cpio.gz"
echo "$dest/root/boot/vmlinuz-$kver"
echo "$dest/initramfs.cpio.gz"
