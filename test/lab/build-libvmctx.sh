#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build libvmctx from this tree once for the whole lab, with the autotools
# build, out of tree in $VMCTX_LAB_DIR/vmctx-build, and install it to
# $VMCTX_LAB_DIR/vmctx: the shared library for perf (through its rpath),
# the static one for the lab's static programs (lab-vmm, vmctx-agent and
# lab-linux-check in the guests), and plugin_vmctx.so for trace-cmd and
# perf script in L1 (experiment 6).
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

lab_lock
vbuild=$LAB_DIR/vmctx-build
vprefix=$LAB_DIR/vmctx
if [ ! -x "$REPO_TOP/configure" ]; then
	log "autoreconf -fi in $REPO_TOP"
	(cd "$REPO_TOP" && autoreconf -fi >/dev/null 2>&1) || die "autoreconf failed in $REPO_TOP"
fi
# automake refuses a VPATH build of a tree that is configured in place
[ ! -f "$REPO_TOP/config.status" ] ||
	die "$REPO_TOP is configured in place; run 'make distclean' there first"
vconf=(--prefix="$vprefix" --enable-static --without-libelf --with-libtraceevent)
mkdir -p "$vbuild"
# configured from this source tree with these arguments (a lab directory
# outlives the clones that use it: the tree is part of the stamp)
if [ ! -f "$vbuild/config.status" ] ||
   [ "$(cat "$vbuild/.vmctx-configure-args" 2>/dev/null)" != "$REPO_TOP ${vconf[*]}" ]; then
	log "configuring libvmctx in $vbuild (from $REPO_TOP)"
	# objects of another tree's sources would look up to date
	rm -rf "$vbuild"
	mkdir -p "$vbuild"
	(cd "$vbuild" && "$REPO_TOP/configure" "${vconf[@]}" >configure.out 2>&1) ||
		die "libvmctx configure failed, see $vbuild/configure.out and config.log"
	echo "$REPO_TOP ${vconf[*]}" > "$vbuild/.vmctx-configure-args"
fi
log "building libvmctx (only the library, shared and static) and plugin_vmctx"
make -s -C "$vbuild" -j"$JOBS" lib/libvmctx.la lib/libvmctx.pc perf-plugin/plugin_vmctx.la >/dev/null
# install only when something changed: a fresh vmctx.h would make perf
# recompile what includes it
if [ ! -f "$vprefix/.vmctx-installed" ] ||
   [ -n "$(find "$vbuild/lib/.libs" "$vbuild/lib/libvmctx.pc" "$REPO_TOP/lib/vmctx.h" \
	-newer "$vprefix/.vmctx-installed" -print -quit)" ]; then
	log "installing libvmctx to $vprefix"
	make -s -C "$vbuild" install-libLTLIBRARIES install-includeHEADERS \
		install-pkgconfigDATA >/dev/null
	touch "$vprefix/.vmctx-installed"
fi
if [ ! -f "$vprefix/lib/traceevent/plugins/plugin_vmctx.so" ] ||
   [ -n "$(find "$vbuild/perf-plugin/.libs" -newer "$vprefix/lib/traceevent/plugins/plugin_vmctx.so" -name '*.so' -print -quit)" ]; then
	make -s -C "$vbuild" install-traceeventpluginLTLIBRARIES >/dev/null
fi
[ -f "$vprefix/lib/pkgconfig/libvmctx.pc" ] || die "libvmctx.pc not installed in $vprefix"
[ -f "$vprefix/lib/libvmctx.a" ] || die "libvmctx.a not installed in $vprefix"
