# SPDX-License-Identifier: GPL-2.0
# Sourced by the lab scripts: locations and small helpers.  Every location
# can be overridden from the environment.

LAB_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_TOP=$(cd "$LAB_SRC/../.." && pwd)
PATCH_DIR=${VMCTX_PATCH_DIR:-$REPO_TOP/kernel-patches}
LAB_DIR=${VMCTX_LAB_DIR:-${HOME:-/var/tmp}/.cache/vmctx-lab}
# L1 (the KVM host, with the series) is 6.12; the L2 Linux guest stays 6.1
LINUX_TARBALL=${VMCTX_LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
JOBS=${VMCTX_LAB_JOBS:-2}
# The emulator of the L1 host on SVM: Debian's QEMU with the lab's fixes
# (build-qemu.sh), or VMCTX_L1_QEMU (/usr/bin/qemu-system-x86_64: Debian's
# own binary, unfixed)
L1_QEMU=${VMCTX_L1_QEMU:-$LAB_DIR/qemu/bin/qemu-system-x86_64}
export CCACHE_DIR=${CCACHE_DIR:-$LAB_DIR/ccache}

# src/linux-6.12: the unpacked tree, series pushed or popped with quilt;
# out/<flavour>: kernel builds; tools/: the static lab programs.
LINUX_TREE=$LAB_DIR/src/linux-6.12
TOOLS_DIR=$LAB_DIR/tools
RESULTS_DIR=${VMCTX_LAB_RESULTS:-$LAB_DIR/results}

# lab_lock: one lab step at a time per $LAB_DIR, since the shared tree
# switches between patched and stock.  A step another step runs (such as
# build-libvmctx.sh from build-perf.sh) is inside its caller's lock.
lab_lock() {
	[ -z "${VMCTX_LAB_LOCKED:-}" ] || return 0
	mkdir -p "$LAB_DIR"
	exec 9>"$LAB_DIR/.lock"
	flock 9
	export VMCTX_LAB_LOCKED=1
}

# The lab's libvmctx (build-libvmctx.sh): one build for every program.
VMCTX_A=$LAB_DIR/vmctx/lib/libvmctx.a

log() { printf '[lab %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

# install_init INIT STAGE: INIT as STAGE's /init, with the prologue every
# lab init sources (init-common.sh)
install_init() {
	mkdir -p "$2/lib"
	install -m 755 "$1" "$2/init"
	install -m 644 "$LAB_SRC/init-common.sh" "$2/lib/vmctx-init-common.sh"
}

# pack_initramfs STAGE OUT LEVEL: STAGE as a newc cpio, gzipped at LEVEL
# (9 where it is packed once, 1 where a big one is packed every run)
pack_initramfs() {
	(cd "$1" && find . | cpio -o -H newc --quiet | gzip -"$3") > "$2"
}
die() { log "ERROR: $*"; exit 1; }

# tree_state patched|stock: push or pop the whole series (quilt exits 2 when
# there is nothing to do).  quilt remembers where the patches were
# (.pc/.quilt_patches) and that wins over QUILT_PATCHES, so that is removed
# for a tree patched from another checkout; and the result is checked, as
# quilt finding no series is not an error.
tree_state() {
	local rc=0 want have sum

	rm -f "$LINUX_TREE/.pc/.quilt_patches" "$LINUX_TREE/.pc/.quilt_series"
	# The series as applied: if the patches changed since, take them all
	# off (-f: quilt restores the files it saved, as the changed patches
	# would not reverse) and put the new ones on.
	sum=$(cd "$PATCH_DIR" && cat series $(grep -v '^#' series) | sha256sum | cut -d' ' -f1)
	if [ "$1" = patched ] && [ -f "$LINUX_TREE/.pc/applied-patches" ] &&
	   [ "$(cat "$LINUX_TREE/.pc/.vmctx-series-sum" 2>/dev/null)" != "$sum" ]; then
		log "the patches changed since they were applied: re-applying them"
		(cd "$LINUX_TREE" && QUILT_PATCHES="$PATCH_DIR" QUILT_PC=.pc \
			quilt --quiltrc=- pop -a -f -q >/dev/null) || rc=$?
		[ $rc -eq 0 ] || [ $rc -eq 2 ] || die "quilt could not take the old patches off (exit $rc)"
		rc=0
	fi
	if [ "$1" = patched ]; then
		(cd "$LINUX_TREE" && QUILT_PATCHES="$PATCH_DIR" QUILT_PC=.pc \
			quilt --quiltrc=- push -a -q >/dev/null) || rc=$?
		[ $rc -eq 0 ] || [ $rc -eq 2 ] || die "quilt could not make the tree $1 (exit $rc)"
		mkdir -p "$LINUX_TREE/.pc"
		echo "$sum" > "$LINUX_TREE/.pc/.vmctx-series-sum"
		want=$(grep -cv '^#' "$PATCH_DIR/series")
	else
		(cd "$LINUX_TREE" && QUILT_PATCHES="$PATCH_DIR" QUILT_PC=.pc \
			quilt --quiltrc=- pop -a -q >/dev/null) || rc=$?
		want=0
	fi
	[ $rc -eq 0 ] || [ $rc -eq 2 ] || die "quilt could not make the tree $1 (exit $rc)"
	have=$(grep -c . "$LINUX_TREE/.pc/applied-patches" 2>/dev/null || true)
	[ "${have:-0}" -eq "$want" ] ||
		die "the tree in $LINUX_TREE has ${have:-0} patches applied, want $want ($1)"
}

# stage_perf DIR: the patched perf (build-perf.sh) at DIR/bin/perf,
# stripped, with every library ldd lists at the same path as here, the
# loader included; libvmctx.so.0 is found through perf's rpath
# ($LAB_DIR/vmctx/lib), or in /lib/x86_64-linux-gnu where that path is
# hidden.
stage_perf() {
	local stage=$1 perf=$LAB_DIR/out/perf/perf lib vlib
	[ -x "$perf" ] || "$LAB_SRC/build-perf.sh"
	mkdir -p "$stage/bin" "$stage/lib64"
	strip --strip-unneeded -o "$stage/bin/perf" "$perf"
	for lib in $(ldd "$perf" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }') \
		   /lib64/ld-linux-x86-64.so.2; do
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done
	vlib=$stage$LAB_DIR/vmctx/lib/libvmctx.so.0
	[ -f "$vlib" ] || die "ldd does not list $LAB_DIR/vmctx/lib/libvmctx.so.0 for $perf"
	strip --strip-unneeded "$vlib"
	# and where the loader looks after the rpath: a lab directory under
	# /tmp is hidden in L1 by the tmpfs mounted there
	mkdir -p "$stage/lib/x86_64-linux-gnu"
	cp "$vlib" "$stage/lib/x86_64-linux-gnu/"
}
