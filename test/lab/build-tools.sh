#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the static lab programs into $VMCTX_LAB_DIR/tools: the L2 guest, the
# test VMM, the libperf recorder (libperf from the patched tree), the
# checkers, and the series' KVM selftest guest_ctx_test where it has one.
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

lab_lock

src=$LINUX_TREE
[ -d "$src/tools/lib/perf" ] || die "no tree in $src; run build-kernel.sh patched first"
tree_state patched
mkdir -p "$TOOLS_DIR"

log "building libperf from $src/tools/lib/perf"
make -s -C "$src/tools/lib/perf" -j"$JOBS" >/dev/null

CFLAGS=(-O2 -g -Wall -Wextra -static)
gcc -c -I"$LAB_SRC/vmm" "$LAB_SRC/vmm/guest.S" -o "$TOOLS_DIR/guest.o"
ld -nostdlib -T "$LAB_SRC/vmm/guest.lds" "$TOOLS_DIR/guest.o" -o "$TOOLS_DIR/guest.elf"
# lab-vmm writes its guest's bundle with the lab's static libvmctx
"$LAB_SRC/build-libvmctx.sh"
# frame pointers: the host part of a guest call chain goes through lab-vmm
gcc "${CFLAGS[@]}" -fno-omit-frame-pointer -pthread -D_GNU_SOURCE -I"$LAB_SRC/vmm" -I"$REPO_TOP/lib" "$LAB_SRC/vmm/vmm.c" \
	"$VMCTX_A" -ldeflate -lz -o "$TOOLS_DIR/lab-vmm"
# The tree's tools/include carries the patched uapi perf_event.h.
gcc "${CFLAGS[@]}" -I"$src/tools/lib/perf/include" -I"$src/tools/include/uapi" \
	-I"$src/tools/include" "$LAB_SRC/record.c" \
	"$src/tools/lib/perf/libperf.a" "$src/tools/lib/api/libapi.a" -o "$TOOLS_DIR/lab-record"
# lab-check reads the samples with samples.c, the flags from that header too
gcc "${CFLAGS[@]}" -I"$src/tools/include/uapi" "$LAB_SRC/check.c" "$LAB_SRC/samples.c" \
	-o "$TOOLS_DIR/lab-check"
gcc "${CFLAGS[@]}" -I"$src/tools/include/uapi" "$LAB_SRC/chain-check.c" "$LAB_SRC/samples.c" \
	-o "$TOOLS_DIR/lab-chain-check"
gcc "${CFLAGS[@]}" "$LAB_SRC/exp-check.c" -lm -o "$TOOLS_DIR/lab-exp-check"
gcc "${CFLAGS[@]}" "$LAB_SRC/exits-check.c" -o "$TOOLS_DIR/lab-exits-check"
gcc "${CFLAGS[@]}" -I"$src/tools/include/uapi" "$LAB_SRC/leak.c" -o "$TOOLS_DIR/lab-leak"
gcc "${CFLAGS[@]}" "$LAB_SRC/fpu-load.c" -o "$TOOLS_DIR/lab-fpu-load"
gcc "${CFLAGS[@]}" "$LAB_SRC/cmpxchg-flags.c" -o "$TOOLS_DIR/lab-cmpxchg-flags"

# The series' KVM selftest, where the series has it, static for the
# busybox L1, with the uapi headers of the patched build (out/patched/usr:
# "make headers" in the tree itself would leave it unfit for O= builds)
# and its objects out of the tree too.
# guest_chain_test (guest call chains) where the series has that too.
for selftest in guest_ctx_test guest_chain_test; do
	rm -f "$TOOLS_DIR/$selftest"
	[ -f "$src/tools/testing/selftests/kvm/x86_64/$selftest.c" ] || continue
	# (the debug flavour is the same series: a debug-only soak has no
	# patched build, and its headers serve as well)
	out=$LAB_DIR/out/patched
	[ -f "$out/.config" ] || out=$LAB_DIR/out/debug
	[ -f "$out/.config" ] || die "no patched or debug build in $LAB_DIR/out; run build-kernel.sh patched first"
	log "building the KVM selftest $selftest"
	make -s -C "$src" O="$out" ARCH=x86_64 headers
	make -s -C "$src/tools/testing/selftests/kvm" CC="ccache gcc" -j"$JOBS" \
		OUTPUT="$LAB_DIR/out/selftests/kvm" KHDR_INCLUDES="-isystem $out/usr/include" \
		EXTRA_CFLAGS=-static "$LAB_DIR/out/selftests/kvm/x86_64/$selftest"
	cp "$LAB_DIR/out/selftests/kvm/x86_64/$selftest" "$TOOLS_DIR/"
done
log "tools ready in $TOOLS_DIR"
