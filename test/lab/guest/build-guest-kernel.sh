#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build-guest-kernel.sh: the L2 Linux guest kernel (stock linux-source-6.1,
# tinyconfig + guest/l2.config) with modules_prepare and Module.symvers, so that
# guest-agent/kmod builds against it.  Tree: $VMCTX_LAB_DIR/{src,out}/guest.
set -euo pipefail
. "$(dirname "$0")/../lab-env.sh"

src=$LAB_DIR/src/guest
out=$LAB_DIR/out/guest
frag=$LAB_SRC/guest/l2.config
stamp="guest $(sha256sum "$GUEST_LINUX_TARBALL" | cut -c1-16)"

if [ "$(cat "$src/.vmctx-stamp" 2>/dev/null)" != "$stamp" ]; then
	log "unpacking $(basename "$GUEST_LINUX_TARBALL") into $src"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xf "$GUEST_LINUX_TARBALL" -C "$src" --strip-components=1
	echo "$stamp" > "$src/.vmctx-stamp"
fi

mkdir -p "$out"
cfg_stamp=$(cat "$frag" "$src/.vmctx-stamp" | sha256sum | cut -c1-16)
if [ "$(cat "$out/.vmctx-config-stamp" 2>/dev/null)" != "$cfg_stamp" ]; then
	log "configuring guest: tinyconfig + l2.config"
	make -s -C "$src" O="$out" ARCH=x86_64 tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag" >/dev/null
	make -s -C "$src" O="$out" ARCH=x86_64 olddefconfig
	while read -r line; do
		case $line in
		CONFIG_*=*) grep -qx "$line" "$out/.config" || die "guest config: $line not set" ;;
		esac
	done < "$frag"
	echo "$cfg_stamp" > "$out/.vmctx-config-stamp"
fi

log "building the guest bzImage and Module.symvers (-j$JOBS)"
start=$SECONDS
# "modules" writes Module.symvers, which external modules link against
make -s -C "$src" O="$out" ARCH=x86_64 CC="ccache gcc" -j"$JOBS" bzImage modules_prepare modules
log "guest kernel ready in $((SECONDS - start)) s: $out/arch/x86/boot/bzImage"
