#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build-qemu.sh: the L1 emulator, $LAB_DIR/qemu/bin/qemu-system-x86_64:
# Debian's own QEMU (the source of the installed qemu-system-x86, with
# Debian's patches) with test/lab/qemu/*.patch on top, x86_64-softmmu only.
#
# Why: two plain read-modify-writes of a word another thread writes too,
# and a helper that reads state its caller has not written back.
# svm-virq-atomic.patch: QEMU 7.2's nested SVM sets CPU_INTERRUPT_VIRQ on
# VMRUN without the BQL and can lose the I/O thread's request to look at
# the local APIC, and with it L1's one-shot timer, for good: the L1 hangs
# of test/lab/guest/README (upstream made that write atomic in 2025).
# ignne-atomic.patch: every FLDENV/FXRSTOR/XRSTOR on any vCPU writes back
# the first CPU's hflags2, and can undo its #VMEXIT's clearing of nested
# paging: the nested guest gets the L1 host's registers (lab-vmm "its
# state was lost"; run-lab.sh's L1 emulator check, test/lab/README).
# cmpxchg-cc-op.patch: CMPXCHG8B/16B left RFLAGS bits from stale lazy
# flags, which a #VMEXIT carries into a nested guest for good: the L2
# guests' double faults with impossible RFLAGS (test/lab/README).
# vmexit-outside-guest.patch is no fix: QEMU says on its console when it
# makes a #VMEXIT outside guest mode, which no CPU does.
# VMCTX_L1_QEMU=/usr/bin/qemu-system-x86_64 boots L1 on Debian's binary
# instead, and skips this build.
#
# The source comes through apt, as every package does (signed Release,
# Sources index, checksums), with a private list of deb-src lines made
# from the system's deb lines, in $LAB_DIR/qemu-apt: the system's apt
# configuration is not changed.  Built once per Debian version and patch
# set (the stamp); ccache keeps a rebuild short.
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

if [ -n "${VMCTX_L1_QEMU:-}" ]; then
	[ -x "$VMCTX_L1_QEMU" ] || die "VMCTX_L1_QEMU=$VMCTX_L1_QEMU: not an executable"
	log "L1 emulator: $VMCTX_L1_QEMU (VMCTX_L1_QEMU; not built)"
	exit 0
fi
lab_lock

prefix=$LAB_DIR/qemu
bin=$L1_QEMU
ver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null) ||
	die "qemu-system-x86 is not installed (install-deps.sh)"
stamp="$ver $(cat "$LAB_SRC"/qemu/*.patch | sha256sum | cut -d' ' -f1)"
if [ -x "$bin" ] && [ "$(cat "$prefix/.stamp" 2>/dev/null)" = "$stamp" ]; then
	log "L1 emulator up to date: $bin (Debian qemu $ver, patched)"
	exit 0
fi

# A private apt: the system's deb sources as deb-src, its keyring, lists
# and downloads under $apt_dir.
apt_dir=$LAB_DIR/qemu-apt
rm -rf "$apt_dir"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/sources.list.d"
: > "$apt_dir/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] || continue
	sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >> "$apt_dir/sources.list"
done
sort -u -o "$apt_dir/sources.list" "$apt_dir/sources.list"
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	# deb822 stanzas: keep those that list deb, now as deb-src only
	awk 'BEGIN { RS = ""; ORS = "\n\n" }
	     { n = split($0, l, "\n"); keep = 0; out = ""
	       for (i = 1; i <= n; i++) {
		       if (l[i] ~ /^Types:/) {
			       if (l[i] ~ /[[:space:]]deb([[:space:]]|$)/) keep = 1
			       l[i] = "Types: deb-src"
		       }
		       out = out l[i] "\n"
	       }
	       if (keep) print out }' \
		"$f" > "$apt_dir/sources.list.d/$(basename "$f")"
done
apt_opts=(-q -o Dir::Etc::SourceList="$apt_dir/sources.list"
	  -o Dir::Etc::SourceParts="$apt_dir/sources.list.d"
	  -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache::Archives="$apt_dir/archives"
	  -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o Debug::NoLocking=1
	  -o APT::Sandbox::User="$(id -un)")
log "fetching Debian's qemu $ver source (apt, deb-src lists in $apt_dir)"
apt-get "${apt_opts[@]}" update >"$apt_dir/update.log" 2>&1 ||
	die "apt-get update of the deb-src lists failed; see $apt_dir/update.log"

src_dir=$LAB_DIR/qemu-src
rm -rf "$src_dir"
mkdir -p "$src_dir"
# apt-get source unpacks with dpkg-source -x, which applies Debian's patches.
# The installed version's source, or where the mirror has moved on (it
# lists only the newest), the newest of Debian 12's 7.2: the one-line fix
# is the same for every 7.2 update
if ! (cd "$src_dir" && apt-get "${apt_opts[@]}" source "qemu=$ver") >"$src_dir.log" 2>&1; then
	log "no source of qemu $ver on the mirror; taking its newest qemu source"
	rm -rf "$src_dir"
	mkdir -p "$src_dir"
	(cd "$src_dir" && apt-get "${apt_opts[@]}" source qemu) >>"$src_dir.log" 2>&1 ||
		die "apt-get source qemu failed; see $src_dir.log (VMCTX_L1_QEMU=/usr/bin/qemu-system-x86_64 boots L1 on Debian's QEMU, without the fix)"
	grep -q '^Version: 1:7\.2+' "$src_dir"/qemu_*.dsc ||
		die "the mirror's qemu source is not 7.2 ($(sed -n 's/^Version: //p' "$src_dir"/qemu_*.dsc)); see $src_dir.log"
fi
tree=$(find "$src_dir" -mindepth 1 -maxdepth 1 -type d -name 'qemu-*' | head -n 1)
[ -n "$tree" ] && [ -f "$tree/target/i386/tcg/sysemu/svm_helper.c" ] ||
	die "no QEMU tree unpacked in $src_dir; see $src_dir.log"
for p in "$LAB_SRC"/qemu/*.patch; do
	log "applying $(basename "$p")"
	patch -d "$tree" -p1 -s --no-backup-if-mismatch < "$p" ||
		die "$(basename "$p") does not apply to Debian's qemu $ver"
done

# Only the x86_64 system emulator, and nothing it needs no display for.
# The firmware stays Debian's (qemu-system-data, seabios, ipxe-qemu).
log "building qemu-system-x86_64 (ccache in $CCACHE_DIR)"
export PATH=/usr/lib/ccache:$PATH
mkdir -p "$tree/build"
(cd "$tree/build" && ../configure --prefix="$prefix" --target-list=x86_64-softmmu \
	--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu \
	--disable-docs --disable-werror --disable-gtk --disable-sdl --disable-vnc \
	--disable-spice --disable-opengl --disable-xen --disable-libusb \
	--disable-usb-redir --disable-tools --disable-guest-agent) \
	>"$src_dir/configure.log" 2>&1 || die "QEMU's configure failed; see $src_dir/configure.log"
ninja -C "$tree/build" -j"$JOBS" qemu-system-x86_64 >"$src_dir/build.log" 2>&1 ||
	die "QEMU's build failed; see $src_dir/build.log"
mkdir -p "$prefix/bin"
install -m 755 "$tree/build/qemu-system-x86_64" "$bin.new"
mv "$bin.new" "$bin"
echo "$stamp" > "$prefix/.stamp"
# the tree is 1 GB once built; the stamp and ccache are what a rebuild needs
rm -rf "$src_dir" "$apt_dir"
log "L1 emulator: $bin (Debian qemu $ver with $(ls "$LAB_SRC"/qemu/*.patch | wc -l) patch(es))"
