#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# debian-guest.sh [6.1|6.12]: an L2 Linux guest's kernel is Debian's own,
# the one users run in their guests: 6.1 (the default) is
# linux-image-amd64 of Debian 12; 6.12 is the newest
# linux-image-6.12.*+deb12-cloud-amd64-unsigned in the package lists that
# has its headers and kbuild there too (Debian 12's backported kernel, for
# a second guest).  Each comes with its modules, and the matching
# linux-headers for vmctx_guest.ko.  The packages (image, headers,
# headers-common, linux-kbuild) are downloaded and unpacked into
# $VMCTX_LAB_DIR/debian-guest[-6.12], once per version; 6.12's modules
# are xz-compressed and are unpacked there (busybox's modprobe in the
# guest reads plain .ko files); depmod indexes the modules.  The headers'
# Makefile includes the common headers by an absolute /usr/src path: it is
# pointed at the unpacked copy, so nothing is installed on this machine.
#
# Prints KEY=VALUE lines: kver, vmlinuz, headers (the directory external
# modules build against), modules (/lib/modules/KVER of the unpacked
# image) and root (the unpacked tree).  Dies with a message when the
# packages cannot be had.
set -euo pipefail
. "$(dirname "$0")/../lab-env.sh"

series=${1:-6.1}
case $series in
6.1)
	dest=$LAB_DIR/debian-guest
	img=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-6\.1\.[0-9]*-[0-9]*-amd64\)$/\1/p' | head -n 1)
	[ -n "$img" ] || die "linux-image-amd64 depends on no linux-image-6.1.*-amd64 in the package lists (apt-get update?)"
	kver=${img#linux-image-}
	abi=${kver%-amd64}
	pkgs=("$img" "linux-headers-$kver" "linux-headers-$abi-common" linux-kbuild-6.1)
	;;
6.12)
	dest=$LAB_DIR/debian-guest-6.12
	pkgs=()
	for v in $(apt-cache pkgnames linux-image-6.12. 2>/dev/null |
		sed -n 's/^linux-image-\(6\.12\.[0-9]*\)+deb12-cloud-amd64-unsigned$/\1/p' | sort -t. -k3,3nr); do
		try=("linux-image-$v+deb12-cloud-amd64-unsigned" "linux-headers-$v+deb12-cloud-amd64"
		     "linux-headers-$v+deb12-common" "linux-kbuild-$v+deb12")
		ok=1
		for p in "${try[@]}"; do
			apt-cache show "$p" >/dev/null 2>&1 || ok=0
		done
		if [ $ok = 1 ]; then
			pkgs=("${try[@]}")
			kver=$v+deb12-cloud-amd64
			abi=$v+deb12
			break
		fi
	done
	[ ${#pkgs[@]} -gt 0 ] ||
		die "no linux-image-6.12.*+deb12-cloud-amd64-unsigned with its headers and kbuild in the package lists (apt-get update?)"
	;;
*) die "usage: debian-guest.sh [6.1|6.12]" ;;
esac

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
	find "$dest/root/lib/modules/$kver" -name '*.ko.xz' -exec xz -d {} +
	depmod -b "$dest/root" "$kver" || die "depmod of $kver failed"
	echo "${pkgs[*]}" > "$dest/.vmctx-pkgs"
fi
echo "kver=$kver"
echo "vmlinuz=$dest/root/boot/vmlinuz-$kver"
echo "headers=$dest/root/usr/src/linux-headers-$kver"
echo "modules=$dest/root/lib/modules/$kver"
echo "root=$dest/root"
