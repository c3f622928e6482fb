#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the patched perf (the tools/perf patches of kernel-patches/) for the
# L1 initramfs: libvmctx (build-libvmctx.sh), then perf from the patched
# tree into $VMCTX_LAB_DIR/out/perf, linked against Debian's
# libtraceevent 1.7 (6.12's perf always uses the system's) and that libvmctx.
#
# perf carries an rpath to $VMCTX_LAB_DIR/vmctx/lib, so it finds
# libvmctx.so.0 both here and in the initramfs, which copies every library
# ldd lists to the same path.  Optional features that would only add
# libraries to the initramfs are off (python, perl, libunwind, libnuma,
# libbpf, libcrypto, libcap, babeltrace, zstd, lzma, debuginfod, libbfd);
# so are the JSON PMU event tables (no PMU in TCG or bochs), which also
# means the build needs no python3.  libdw (DWARF) stays, and so does the
# slang TUI, which the machine checks drive under tmux.
#
# Two more builds of the same perf for test/perf/run-checks.sh:
# perf-nolibvmctx (NO_LIBVMCTX=1) and perf-libunwind, with libunwind's
# DWARF unwinder in place of libdw's, as Debian builds perf; not with
# VMCTX_PERF_VARIANTS=0 (the demo's: only the lab's checks read them).
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

lab_lock

src=$LINUX_TREE
[ -d "$src/tools/perf" ] || die "no tree in $src; run build-kernel.sh patched first"
tree_state patched
[ -f "$src/tools/build/feature/test-libvmctx.c" ] || die "$src lacks the perf patches (0012)"

start=$SECONDS

"$LAB_SRC/build-libvmctx.sh"
vprefix=$LAB_DIR/vmctx

# ---- perf
out=$LAB_DIR/out/perf
nolib=$LAB_DIR/out/perf-nolibvmctx
lu=$LAB_DIR/out/perf-libunwind
# build-kernel.sh unpacks the tree again when the tarball or the series
# changes, with the archive's old mtimes: start over then, as it does for
# the kernels
tree_stamp=$(cat "$src/.vmctx-stamp" 2>/dev/null || echo none)
for o in "$out" "$nolib" "$lu"; do
	if [ "$(cat "$o/.vmctx-tree-stamp" 2>/dev/null)" != "$tree_stamp" ]; then
		rm -rf "$o"
		mkdir -p "$o"
		echo "$tree_stamp" > "$o/.vmctx-tree-stamp"
	fi
done
# Options on the make command line override perf's own settings, so
# LDFLAGS (perf appends to it) goes through the environment.
perf_make=(make -s -C "$src/tools/perf" O="$out" -j"$JOBS" CC="ccache gcc"
	NO_LIBPYTHON=1 NO_LIBPERL=1 NO_JEVENTS=1
	NO_LIBUNWIND=1 NO_LIBNUMA=1 NO_LIBBPF=1 NO_JVMTI=1
	NO_LIBCRYPTO=1 NO_LIBCAP=1 NO_LIBBABELTRACE=1 NO_LIBZSTD=1 NO_LZMA=1
	NO_LIBDEBUGINFOD=1 NO_LIBBFD=1 NO_LIBLLVM=1 NO_CAPSTONE=1)
log "building perf in $out (-j$JOBS, ccache in $CCACHE_DIR)"
PKG_CONFIG_PATH=$vprefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
LDFLAGS="-Wl,-rpath,$vprefix/lib" \
	"${perf_make[@]}" >"$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log" >&2
	die "perf build failed, see $out/build.log"
}

opts=$("$out/perf" version --build-options)
grep -q 'libvmctx: \[ on' <<<"$opts" || die "perf was built without libvmctx (see $out/build.log)"
libs=$(ldd "$out/perf")
grep -q "$vprefix/lib/libvmctx.so" <<<"$libs" || die "perf does not load $vprefix/lib/libvmctx.so"
grep -q 'libtraceevent\.so\.1 => /' <<<"$libs" || die "perf does not load the system libtraceevent.so.1"
log "perf ready in $((SECONDS - start)) s: $out/perf"

[ "${VMCTX_PERF_VARIANTS:-1}" = 1 ] || exit 0

# ---- the same perf without libvmctx (NO_LIBVMCTX=1), as a distribution
# that does not ship the library builds it: test/perf/run-checks.sh checks
# that it merges guest call chains as the other does (perf's session code
# joins them, not libvmctx) and says what --guest-maps needs
start=$SECONDS
log "building perf without libvmctx in $nolib"
"${perf_make[@]/#O=$out/O=$nolib}" NO_LIBVMCTX=1 >"$nolib/build.log" 2>&1 || {
	tail -n 30 "$nolib/build.log" >&2
	die "perf build without libvmctx failed, see $nolib/build.log"
}
grep -q 'libvmctx: \[ OFF' <<<"$("$nolib/perf" version --build-options)" ||
	die "$nolib/perf was built with libvmctx (see $nolib/build.log)"
log "perf without libvmctx ready in $((SECONDS - start)) s: $nolib/perf"

# ---- the same perf with libunwind's unwinder (NO_LIBUNWIND= : perf then
# leaves libdw's out), as distributions build it: run-checks.sh unwinds
# guest stacks with both
start=$SECONDS
log "building perf with libunwind in $lu"
PKG_CONFIG_PATH=$vprefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
LDFLAGS="-Wl,-rpath,$vprefix/lib" \
	"${perf_make[@]/#O=$out/O=$lu}" NO_LIBUNWIND= >"$lu/build.log" 2>&1 || {
	tail -n 30 "$lu/build.log" >&2
	die "perf build with libunwind failed, see $lu/build.log"
}
grep -q 'libunwind: \[ on' <<<"$("$lu/perf" version --build-options)" ||
	die "$lu/perf was built without libunwind (see $lu/build.log)"
log "perf with libunwind ready in $((SECONDS - start)) s: $lu/perf"
