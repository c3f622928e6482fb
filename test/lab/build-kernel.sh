#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build-kernel.sh patched|stock|debug|stock-debug: build the L1 kernel
# from linux-source-6.12 with (patched) or without (stock) the
# kernel-patches series; debug is the patched kernel with lockdep, KASAN
# and UBSAN (l1-debug.config on top of l1.config), stock-debug the stock
# one with the same (the debug soak's baseline).
#
# One unpacked tree serves both flavours: quilt pushes or pops the series, and
# each flavour builds into its own O= directory.  The compiler sees the same
# paths for both, so ccache shares every object the series does not touch,
# and the stock build costs little once the patched one is in the cache.  The
# tree is unpacked again only when the tarball or the series changes.
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

flavour=${1:?usage: build-kernel.sh patched|stock|debug|stock-debug}
frags=("$LAB_SRC/l1.config")
case $flavour in
patched|stock) ;;
debug|stock-debug) frags+=("$LAB_SRC/l1-debug.config") ;;
*) die "unknown flavour $flavour" ;;
esac
lab_lock
out=$LAB_DIR/out/$flavour

[ -f "$PATCH_DIR/series" ] || die "no series in $PATCH_DIR"
stamp=$( (sha256sum "$LINUX_TARBALL" | cut -c1-16;
	  cd "$PATCH_DIR" && cat series $(grep -v '^#' series)) | sha256sum | cut -c1-16)
if [ "$(cat "$LINUX_TREE/.vmctx-stamp" 2>/dev/null)" != "$stamp" ]; then
	log "unpacking $(basename "$LINUX_TARBALL") into $LINUX_TREE"
	rm -rf "$LINUX_TREE"
	mkdir -p "$LINUX_TREE"
	tar -xf "$LINUX_TARBALL" -C "$LINUX_TREE" --strip-components=1
	echo "$stamp" > "$LINUX_TREE/.vmctx-stamp"
	# tar keeps the archive's old mtimes: objects built from an earlier
	# series could look newer than a file that changed, so start over
	rm -rf "$LAB_DIR/out/patched" "$LAB_DIR/out/stock" "$LAB_DIR/out/debug" \
		"$LAB_DIR/out/stock-debug"
fi
case $flavour in stock*) tree_state stock ;; *) tree_state patched ;; esac
# the lab-only NMI exerciser (test/lab/nmi, not part of the series) is built
# into both flavours; without PERF_SAMPLE_GUEST_CTX it compiles to nothing
cmp -s "$LAB_SRC/nmi/vmctx_lab_nmi.c" "$LINUX_TREE/kernel/events/vmctx_lab_nmi.c" ||
	cp "$LAB_SRC/nmi/vmctx_lab_nmi.c" "$LINUX_TREE/kernel/events/"
grep -q vmctx_lab_nmi "$LINUX_TREE/kernel/events/Makefile" ||
	echo 'obj-y += vmctx_lab_nmi.o' >> "$LINUX_TREE/kernel/events/Makefile"

mkdir -p "$out"
cfg_stamp=$(cat "${frags[@]}" "$LINUX_TREE/.vmctx-stamp" | sha256sum | cut -c1-16)
if [ "$(cat "$out/.vmctx-config-stamp" 2>/dev/null)" != "$cfg_stamp" ]; then
	log "configuring $flavour: tinyconfig + ${frags[*]##*/}"
	make -s -C "$LINUX_TREE" O="$out" ARCH=x86_64 tinyconfig >"$out/merge_config.log" 2>&1 ||
		die "tinyconfig failed, see $out/merge_config.log"
	"$LINUX_TREE/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
		"${frags[@]}" >>"$out/merge_config.log" 2>&1 ||
		die "merge_config failed, see $out/merge_config.log"
	make -s -C "$LINUX_TREE" O="$out" ARCH=x86_64 olddefconfig >>"$out/merge_config.log" 2>&1 ||
		die "olddefconfig failed, see $out/merge_config.log"
	# every option the fragment asks for must have survived olddefconfig
	while read -r line; do
		case $line in
		CONFIG_*=*) grep -qx "$line" "$out/.config" || die "config: $line not set" ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			if grep -q "^$sym=" "$out/.config"; then die "config: $sym should be off"; fi ;;
		esac
	done < <(cat "${frags[@]}")
	echo "$cfg_stamp" > "$out/.vmctx-config-stamp"
fi

log "building $flavour bzImage (-j$JOBS, ccache in $CCACHE_DIR)"
start=$SECONDS
# Reproducible: quilt's pops and pushes between flavours relink the same
# sources, and the soak's ledger counts boots by the image's hash; with
# kbuild's build number, time, user and host fixed, the same sources give
# the same bzImage
KBUILD_BUILD_TIMESTAMP="@$(stat -c %Y "$LINUX_TARBALL")" KBUILD_BUILD_VERSION=1 \
KBUILD_BUILD_USER=vmctx KBUILD_BUILD_HOST=lab \
	make -s -C "$LINUX_TREE" O="$out" ARCH=x86_64 CC="ccache gcc" -j"$JOBS" bzImage
log "$flavour bzImage ready in $((SECONDS - start)) s: $out/arch/x86/boot/bzImage"
