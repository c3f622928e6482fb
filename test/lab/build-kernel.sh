#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build-kernel.sh patched|stock: unpack linux-source-6.1 (and apply the
# kernel-patches series with quilt for "patched"), configure tinyconfig plus
# l1.config, and build bzImage with ccache.  Trees live under $VMCTX_LAB_DIR
# and are reused while the series and the fragment do not change.
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

flavour=${1:?usage: build-kernel.sh patched|stock}
case $flavour in patched|stock) ;; *) die "unknown flavour $flavour" ;; esac
src=$LAB_DIR/src/$flavour
out=$LAB_DIR/out/$flavour

if [ "$flavour" = patched ]; then
	[ -f "$PATCH_DIR/series" ] || die "no series in $PATCH_DIR"
	stamp=$(cd "$PATCH_DIR" && cat series $(grep -v '^#' series) | sha256sum | cut -c1-16)
else
	stamp=stock
fi
stamp="$stamp $(sha256sum "$LINUX_TARBALL" | cut -c1-16)"

if [ "$(cat "$src/.vmctx-stamp" 2>/dev/null)" != "$stamp" ]; then
	log "unpacking $(basename "$LINUX_TARBALL") into $src"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xf "$LINUX_TARBALL" -C "$src" --strip-components=1
	if [ "$flavour" = patched ]; then
		log "applying $PATCH_DIR/series with quilt"
		(cd "$src" && QUILT_PATCHES="$PATCH_DIR" QUILT_PC=.pc \
			quilt --quiltrc=- push -a -q) || die "the series does not apply"
	fi
	echo "$stamp" > "$src/.vmctx-stamp"
fi

mkdir -p "$out"
cfg_stamp=$(cat "$LAB_SRC/l1.config" "$src/.vmctx-stamp" | sha256sum | cut -c1-16)
if [ "$(cat "$out/.vmctx-config-stamp" 2>/dev/null)" != "$cfg_stamp" ]; then
	log "configuring $flavour: tinyconfig + l1.config"
	make -s -C "$src" O="$out" ARCH=x86_64 tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
		"$LAB_SRC/l1.config" >/dev/null
	make -s -C "$src" O="$out" ARCH=x86_64 olddefconfig
	# every option the fragment asks for must have survived olddefconfig
	while read -r line; do
		case $line in
		CONFIG_*=*) grep -qx "$line" "$out/.config" || die "config: $line not set" ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			if grep -q "^$sym=" "$out/.config"; then die "config: $sym should be off"; fi ;;
		esac
	done < "$LAB_SRC/l1.config"
	echo "$cfg_stamp" > "$out/.vmctx-config-stamp"
fi

log "building $flavour bzImage (-j$JOBS, ccache in $CCACHE_DIR)"
start=$SECONDS
make -s -C "$src" O="$out" ARCH=x86_64 CC="ccache gcc" -j"$JOBS" bzImage
log "$flavour bzImage ready in $((SECONDS - start)) s: $out/arch/x86/boot/bzImage"
