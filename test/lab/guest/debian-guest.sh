#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# debian-guest.sh: the L2 Linux guest's kernel is Debian's own, the one
# users run in their guests: linux-image-amd64 of Debian 12 (6.1), with its
# modules, and the matching linux-headers for vmctx_guest.ko.  The packages
# (image, headers, headers-common, linux-kbuild) are downloaded and unpacked
# into $VMCTX_LAB_DIR/debian-guest, once per version; depmod indexes the
# modules there.  The headers' Makefile includes the common headers by an
# absolute /usr/src path: it is pointed at the unpacked copy, so nothing is
# installed on this machine.
#
# Prints KEY=VALUE lines: kver, vmlinuz, headers (the directory external
# modules build against) and modules (/lib/modules/KVER of the unpacked
# image).  Dies with a message when the packages cannot be had.
set -euo pipefail
. "$(dirname "$0")/../lab-env.sh"

dest=$LAB_DIR/debian-guest
img=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-6\.1\.[0-9]*-[0-9]*-amd64\)$/\1/p' | head -n 1)
[ -n "$img" ] || die "linux-image-amd64 depends on no linux-image-6.1.*-amd64 in the package lists (apt-get update?)"
kver=${img#linux-image-}
abi=${kver%-amd64}
pkgs=("$img" "linux-headers-$kver" "linux-headers-$abi-common" linux-kbuild-6.1)

if [ "$(cat "$dest/.vmctx-pkgs" 2>/dev/null)" != "${pkgs[*]}" ]; then
	log "downloading Debian's ${pkgs[*]}"
	rm -rf "$dest"
	mkdir -p "$dest/deb"
	(cd "$dest/deb" && apt-get download -q "${pkgs[@]}" >/dev/null 2>&1) ||
		die "apt-get download ${pkgs[*]} failed"
	for d in "$dest"/deb/*.deb; do
		dpkg-deb -x "$d" "$dest/root"
	done
	rm -rf "$dest/deb"
	mk=$dest/root/usr/src/linux-headers-$kver/Makefile
	grep -q "^include /usr/src/linux-headers-$abi-common/Makefile\$" "$mk" ||
		die "$mk does not include the common headers as expected"
	sed -i "s|^include /usr/src/|include $dest/root/usr/src/|" "$mk"
	depmod -b "$dest/root" "$kver" || die "depmod of $kver failed"
	echo "${pkgs[*]}" > "$dest/.vmctx-pkgs"
fi
echo "kver=$kver"
echo "vmlinuz=$dest/root/boot/vmlinuz-$kver"
echo "headers=$dest/root/usr/src/linux-headers-$kver"
echo "modules=$dest/root/lib/modules/$kver"
