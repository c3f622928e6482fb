#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pack busybox, the lab programs, perf (build-perf.sh) with the libraries it
# loads, and init.sh into $VMCTX_LAB_DIR/initramfs.cpio.gz.
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

stage=$LAB_DIR/initramfs
rm -rf "$stage"
mkdir -p "$stage"/{bin,lab,proc,sys,dev,tmp}
cp /bin/busybox "$stage/bin/busybox"
# ldd fails on a static binary
if ldd /bin/busybox >/dev/null 2>&1; then
	die "/bin/busybox is not static (install busybox-static)"
fi
for t in lab-vmm lab-record lab-check lab-chain-check lab-exp-check lab-exits-check lab-leak lab-fpu-load lab-cmpxchg-flags; do
	cp "$TOOLS_DIR/$t" "$stage/bin/"
done
# the series' KVM selftest, where it has one (build-tools.sh)
for t in guest_ctx_test guest_chain_test; do
	[ -f "$TOOLS_DIR/$t" ] && cp "$TOOLS_DIR/$t" "$stage/bin/"
done
cp "$TOOLS_DIR/guest.elf" "$stage/lab/"
install -m 755 "$LAB_SRC/experiments.sh" "$REPO_TOP/test/bench/lab-overhead.sh" "$stage/lab/"

stage_perf "$stage"
# experiment 6: trace-cmd and plugin_vmctx (perf already brought libtraceevent)
# (at a path of its own: L1 mounts a tmpfs on /tmp, which would hide a
# lab directory's there, VMCTX_LAB_DIR=/tmp/...)
plugin=$LAB_DIR/vmctx/lib/traceevent/plugins/plugin_vmctx.so
[ -f "$plugin" ] || die "$plugin not built (build-libvmctx.sh)"
mkdir -p "$stage/lab/plugins"
cp "$plugin" "$stage/lab/plugins/"
tc=$(command -v trace-cmd) || die "no trace-cmd (apt-get install trace-cmd)"
cp "$tc" "$stage/bin/trace-cmd"
for lib in $(ldd "$tc" "$plugin" | awk '/=> \// { print $3 }'); do
	[ -f "$stage$lib" ] && continue
	mkdir -p "$stage$(dirname "$lib")"
	cp -L "$lib" "$stage$lib"
done
echo /lab/plugins > "$stage/lab/plugin-dir"
install_init "$LAB_SRC/init.sh" "$stage"
pack_initramfs "$stage" "$LAB_DIR/initramfs.cpio.gz" 9
log "initramfs: $LAB_DIR/initramfs.cpio.gz ($(du -k "$LAB_DIR/initramfs.cpio.gz" | cut -f1) KiB)"
