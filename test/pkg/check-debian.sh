#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-only
#
# What a distribution packager ships, built and used as on a clean system
# (test/pkg/README):
#   1. dpkg-buildpackage -us -uc -b on a fresh copy of the tree (the files
#      git knows, so a fresh clone's);
#   2. the symbols file against lib/libvmctx.map and the library's exports;
#   3. lintian: no error and no warning that debian/*.lintian-overrides
#      does not explain;
#   4. make install (dh_auto_install's DESTDIR=debian/tmp, with configure's
#      default directories) against the packages: the same files in the
#      same places;
#   5. in a clean Debian 12 root (mmdebstrap, from the registry apt uses):
#      apt-get install ./*.deb, then pkg-config, a program built against
#      libvmctx-dev, trace-cmd report -O vmctx:maps=FILE with the plugin
#      from the system directory, dkms build against linux-headers-amd64,
#      vmctx-agent --help, its service's unit verified and off until
#      enabled, and apt-get remove --purge leaving the root as it was
#      before;
#   6. in that root, the README's "On a real KVM host" steps 1 and 2 as
#      written: the series pushed onto Debian's linux-source-6.12 with
#      quilt, perf built from it against the installed libvmctx-dev.
# As root (chroot, mounts).  Exit 77 (skip) when not root or a tool is
# missing; ./run check installs the tools.
#
# Environment: VMCTX_PKG_CACHE (~/.cache/vmctx-pkg: the base root's
# tarball, refreshed after VMCTX_PKG_BASE_DAYS=7 days, and apt's .deb
# cache), VMCTX_PKG_MIRROR (http://deb.debian.org), VMCTX_PKG_KEEP=1 keeps
# the work directory, VMCTX_PKG_REUSE=DIR takes the packages of a kept one
# instead of building them again.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/test/pkg
cache=${VMCTX_PKG_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/vmctx-pkg}
mirror=${VMCTX_PKG_MIRROR:-http://deb.debian.org}
base_days=${VMCTX_PKG_BASE_DAYS:-7}
suite=bookworm
start=$SECONDS
phase_start=$SECONDS

say() { printf '[pkg %4ds] %s\n' $((SECONDS - start)) "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }
skip() { say "SKIP: $*"; exit 77; }
phase() { say "$1 (previous step $((SECONDS - phase_start)) s)"; phase_start=$SECONDS; }

[ "$(id -u)" -eq 0 ] || skip "needs root (chroot and mounts)"
for t in dpkg-buildpackage dh dh_dkms lintian mmdebstrap git; do
	command -v "$t" >/dev/null || skip "$t is missing (apt-get install debhelper dh-dkms lintian mmdebstrap)"
done

work=$(mktemp -d /var/tmp/vmctx-pkg.XXXXXX)
# make check runs programs as nobody (test-agent-bpf)
chmod 755 "$work"
root=$work/root
mounts=()
cleanup() {
	local i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		umount -l "${mounts[i]}" 2>/dev/null || true
	done
	if [ "${VMCTX_PKG_KEEP:-0}" = 1 ]; then
		say "kept $work"
	else
		rm -rf --one-file-system "$work"
	fi
}
trap cleanup EXIT

upstream=$(cd "$top" && dpkg-parsechangelog -SVersion | sed 's/-[^-]*$//')
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
ours=$(sed -n 's/^Package: //p' "$top/debian/control")

# ---- 1. the build, on the files a clone has
src=$work/vmctx-$upstream
if [ -n "${VMCTX_PKG_REUSE:-}" ]; then
	# a work directory kept by VMCTX_PKG_KEEP=1: its build, not a new one
	phase "reusing the build in $VMCTX_PKG_REUSE"
	cp -a "$VMCTX_PKG_REUSE"/. "$work"/
	rm -rf "$root"
else
	phase "copying the tree (git ls-files) to $src"
	mkdir -p "$src"
	# (a file deleted but not yet committed is left out)
	(cd "$top" && git ls-files -z -c -o --exclude-standard |
		while IFS= read -r -d '' f; do
			if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
		done | tar --null -cf - -T -) | tar -xf - -C "$src"

	phase "dpkg-buildpackage -us -uc -b (log: build.log)"
	(cd "$src" && nice dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$work/build.log" 2>&1 || {
		tail -n 40 "$work/build.log" >&2
		die "dpkg-buildpackage failed"
	}
fi
grep -E '^# (PASS|FAIL|SKIP|ERROR):' "$work/build.log" | sed 's/^/  make check /' >&2
debs=()
for p in $ours; do
	f=$(ls "$work"/"${p}"_*.deb 2>/dev/null) || die "no package $p was built"
	debs+=("$f")
done
for f in "${debs[@]}"; do
	printf '  %s: %s\n' "$(basename "$f")" \
		"$(dpkg-deb -c "$f" | awk '$6 !~ /\/$/ && $6 !~ /usr\/share\/doc\// { n++ } END { print n " files" }')" >&2
done

# ---- 2. the symbols file is the version map is the library's exports
phase "symbols: lib/libvmctx.map, debian/libvmctx0.symbols, the packaged library"
map_syms=$(awk '/^[A-Z0-9_.]+ *\{/ { node = $1 } node && /^\t[a-z_0-9]+;/ { s = $1; sub(/;/, "", s);
	print s "@" node }' "$top/lib/libvmctx.map" | sort)
deb_syms=$(awk '/^ [a-z_0-9]+@/ { print $1 }' "$top/debian/libvmctx0.symbols" | sort)
mkdir -p "$work/x"
dpkg-deb -x "$work"/libvmctx0_*.deb "$work/x"
so_syms=$(nm -D --defined-only --with-symbol-versions "$work/x/usr/lib/$multiarch/libvmctx.so.0" |
	awk '$2 == "T" || $2 == "D" || $2 == "B" || $2 == "R" { print $3 }' | sed 's/@@*/@/' | sort)
[ -n "$map_syms" ] || die "no symbols read from lib/libvmctx.map"
diff <(echo "$map_syms") <(echo "$deb_syms") >&2 ||
	die "debian/libvmctx0.symbols and lib/libvmctx.map differ (< map, > symbols)"
diff <(echo "$map_syms") <(echo "$so_syms") >&2 ||
	die "the packaged libvmctx.so.0 exports other symbols than lib/libvmctx.map (< map, > library)"
say "  $(echo "$map_syms" | wc -l) symbols, the same in all three"

# ---- 3. lintian
phase "lintian"
lintian --fail-on error,warning -I --pedantic \
	"$work"/vmctx_*_"$(dpkg --print-architecture)".changes >"$work/lintian.log" 2>&1 || {
	cat "$work/lintian.log" >&2
	die "lintian found errors or warnings without an override"
}
grep -v 'running with root privileges' "$work/lintian.log" | sed 's/^/  /' >&2 || true
say "  lintian: no error, no warning but the $(cat "$src"/debian/*.lintian-overrides | grep -c '^[^#]') overridden"

# ---- 4. make install = the packages
phase "make install (debian/tmp) against the packages' files"
not_installed=$(grep -v '^#' "$src/debian/not-installed" | sed 's/[.]/[.]/g; s/[*]/[^\/]*/g; s/^/^\//; s/$/$/' |
	paste -sd'|')
installed=$(cd "$src/debian/tmp" && find . ! -type d | sed 's/^[.]//' | grep -Ev "$not_installed" | sort)
packaged=$(for f in "${debs[@]}"; do dpkg-deb -c "$f"; done |
	awk '{ print $6 }' | sed 's/^[.]//' | grep -v '/$' |
	grep -Ev '^/usr/share/(doc|lintian)/' | sed 's/[.]gz$//' | sort)
diff <(echo "$installed") <(echo "$packaged") >&2 ||
	die "make install and the packages differ (< make install only, > packages only)"
say "  $(echo "$installed" | wc -l) files, each where make install puts it"

# ---- 5. a clean Debian 12 root
base=$cache/$suite-apt.tar
mkdir -p "$cache/archives/partial"
if [ ! -s "$base" ] || [ -n "$(find "$base" -mtime +"$base_days")" ]; then
	phase "mmdebstrap --variant=apt $suite (cached in $base)"
	rm -rf "$cache/new"
	mkdir -p "$cache/new"
	mmdebstrap --quiet --mode=root --variant=apt "$suite" "$cache/new/base.tar" \
		"deb $mirror/debian $suite main" \
		"deb $mirror/debian $suite-updates main" \
		"deb $mirror/debian-security $suite-security main" >&2
	mv "$cache/new/base.tar" "$base"
	rmdir "$cache/new"
fi
phase "a fresh root from $base"
mkdir -p "$root"
tar -C "$root" -xf "$base"
mount -t proc proc "$root/proc"; mounts+=("$root/proc")
mount --bind /dev "$root/dev"; mounts+=("$root/dev")
mount --bind "$cache/archives" "$root/var/cache/apt/archives"; mounts+=("$root/var/cache/apt/archives")
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/tmp/pkg"
cp "${debs[@]}" "$here/use-libvmctx.c" "$here/make-trace-dat.pl" "$root/tmp/pkg/"

in_root() {
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"
}
apt_in_root() { in_root apt-get -q -y --no-install-recommends -o APT::Keep-Downloaded-Packages=true "$@"; }

# What the packages need, and the tools of the test, installed first: the
# root with them is the state that apt-get remove --purge must restore.
deps=$(for f in "${debs[@]}"; do dpkg-deb -f "$f" Depends; done | tr ',' '\n' |
	sed 's/^ *//; s/ *$//' | grep -v '^$' | grep -Evw "$(echo $ours | tr ' ' '|')" | sort -u | paste -sd,)
phase "apt-get: the packages' dependencies ($deps) and the test's tools"
apt_in_root update >"$work/apt.log" 2>&1 || { tail "$work/apt.log" >&2; die "apt-get update failed"; }
apt_in_root satisfy "$deps" >>"$work/apt.log" 2>&1 ||
	{ tail "$work/apt.log" >&2; die "the packages' dependencies cannot be installed"; }
apt_in_root install trace-cmd gcc libc6-dev pkg-config make linux-headers-amd64 systemd man-db >>"$work/apt.log" 2>&1 ||
	{ tail "$work/apt.log" >&2; die "the test's tools cannot be installed"; }

# The headers come without the kernel image, whose postinst runs depmod:
# the module's own depmod (dkms install) would otherwise leave modules.*
# behind that a system with that kernel has anyway.
kver=$(in_root dpkg-query -W -f '${Depends}' linux-headers-amd64 | sed 's/^linux-headers-//; s/[ ,].*//')
in_root depmod -a "$kver"

# every file of the root except what apt, dpkg and the test change anyway
# (/run: a tmpfs on a running system, where systemctl leaves its state)
snapshot() {
	(cd "$root" && find . -xdev \( -path ./proc -o -path ./dev -o -path ./tmp -o -path ./run -o -path ./var/cache \
		-o -path ./var/log -o -path ./var/lib/apt -o -path ./root \) -prune -o -print |
		grep -Ev '^./var/lib/dpkg/(status|status-old|available|lock.*|triggers/.*|[a-z]*-old)$' | sort)
}
snapshot >"$work/before.list"
pkgs_before=$(in_root dpkg-query -W -f '${Package}\n' | sort)

phase "apt-get install ./*.deb"
apt_in_root install $(for f in "${debs[@]}"; do echo "/tmp/pkg/$(basename "$f")"; done) \
	>"$work/install.log" 2>&1 || { tail -n 30 "$work/install.log" >&2; die "apt-get install ./*.deb failed"; }
grep -i 'dkms\|module' "$work/install.log" | sed 's/^/  postinst: /' >&2 || true
added=$(comm -13 <(echo "$pkgs_before") <(in_root dpkg-query -W -f '${Package}\n' | sort) | paste -sd' ')
[ "$added" = "$(echo $ours | tr ' ' '\n' | sort | paste -sd' ')" ] ||
	die "apt-get install ./*.deb installed [$added], not just [$ours]"

phase "in the root: pkg-config, a program against libvmctx-dev"
v=$(in_root pkg-config --modversion libvmctx) || die "pkg-config does not know libvmctx"
[ "$v" = "$upstream" ] || die "pkg-config --modversion libvmctx says $v, not $upstream"
say "  pkg-config --modversion libvmctx: $v"
in_root sh -c 'cd /tmp/pkg && gcc -Wall -Werror -o use-libvmctx use-libvmctx.c $(pkg-config --cflags --libs libvmctx)' ||
	die "use-libvmctx.c does not build against libvmctx-dev"
out=$(in_root /tmp/pkg/use-libvmctx /tmp/pkg/guest.vmctx) || die "use-libvmctx failed: $out"
[ "$out" = "tasks 1 root-owner 0 exit-12 HLT" ] || die "use-libvmctx printed: $out"
say "  use-libvmctx: $out"

phase "in the root: trace-cmd report -O vmctx:maps=FILE, the plugin from the system directory"
plugdir=/usr/lib/$multiarch/traceevent/plugins
in_root trace-cmd list -P 2>&1 | grep -qx "  $plugdir/plugin_vmctx.so" ||
	die "trace-cmd list -P does not list $plugdir/plugin_vmctx.so"
in_root perl /tmp/pkg/make-trace-dat.pl /tmp/pkg/exit.dat
rep=$(in_root trace-cmd report -O vmctx:maps=/tmp/pkg/guest.vmctx -i /tmp/pkg/exit.dat 2>&1) ||
	die "trace-cmd report failed: $rep"
line=$(grep 'kvm_exit:' <<<"$rep") || die "trace-cmd report printed no kvm_exit: $rep"
say "  $line"
# libtraceevent loads one directory in readdir order and the handler
# registered last prints (plugin_vmctx(7), LOADING): plugin_kvm.so of
# libtraceevent1-plugin (trace-cmd depends on it) is in the same directory.
order=$(in_root ls -f "$plugdir" | grep -E '^plugin_(kvm|vmctx)[.]so$' | paste -sd' ')
case $order in
"plugin_kvm.so plugin_vmctx.so")
	grep -q 'vcpu 1 reason HLT rip 0x401136 cr3 0x12346000 (raw 0x12346801) guest=proc_b\[42\]' <<<"$line" ||
		die "plugin_vmctx.so is loaded last but its line does not name the guest process"
	;;
"plugin_vmctx.so plugin_kvm.so")
	grep -q 'reason HLT rip 0x401136 info 0 0' <<<"$line" ||
		die "plugin_kvm.so is loaded last but the line is not its own"
	say "  here readdir lists plugin_kvm.so last, so its line wins (plugin_vmctx(7), LOADING)"
	;;
*)
	die "readdir order of $plugdir: [$order]"
	;;
esac

phase "in the root: dkms build against linux-headers-amd64 ($kver)"
in_root dkms build --force -m vmctx-guest -v "$upstream" -k "$kver" >"$work/dkms.log" 2>&1 || {
	tail -n 30 "$work/dkms.log" >&2
	in_root sh -c 'cat /var/lib/dkms/vmctx-guest/*/build/make.log' 2>/dev/null | tail -n 30 >&2
	die "dkms build of vmctx-guest/$upstream for $kver failed"
}
ko=$(in_root sh -c "ls /var/lib/dkms/vmctx-guest/$upstream/$kver/*/module/vmctx_guest.ko*") ||
	die "dkms build made no vmctx_guest.ko for $kver"
magic=$(in_root /usr/sbin/modinfo -F vermagic "$ko")
case $magic in "$kver "*) ;; *) die "vmctx_guest.ko's vermagic is '$magic', not $kver" ;; esac
say "  $ko: vermagic $magic"

phase "in the root: vmctx-agent --help"
help=$(in_root vmctx-agent --help 2>&1) || die "vmctx-agent --help failed: $help"
grep -q snapshot <<<"$help" && grep -q record <<<"$help" ||
	die "vmctx-agent --help names neither snapshot nor record: $help"
say "  $(head -n 1 <<<"$help")"

# The service: its unit as systemd reads it (systemd-analyze verify: its
# keys, its command, its man page), off until enabled, its settings a
# conffile.  Not started: a container is no VM, which the unit asks for
# (ConditionVirtualization=vm: the agent serves a VM's host over vsock),
# and booting one needs systemd as PID 1 on this machine (CI's have none).
phase "in the root: the vmctx-agent service"
unit=/lib/systemd/system/vmctx-agent.service
[ -f "$root$unit" ] || die "no $unit in the root"
ver=$(in_root systemd-analyze verify "$unit" 2>&1) || die "systemd-analyze verify $unit: $ver"
[ -z "$ver" ] || die "systemd-analyze verify $unit says: $ver"
state=$(in_root systemctl is-enabled vmctx-agent.service 2>&1) || true
[ "$state" = disabled ] || die "vmctx-agent.service is '$state' after install, not disabled"
grep -qx 'ConditionVirtualization=vm' "$root$unit" || die "$unit does not ask for a VM"
in_root dpkg-query -W -f '${Conffiles}\n' vmctx-agent | grep -q '^ /etc/vmctx/agent.conf ' ||
	die "/etc/vmctx/agent.conf is not a conffile of vmctx-agent"
say "  $unit: systemd-analyze verify clean, $state, /etc/vmctx/agent.conf a conffile; not started: a container is no VM (ConditionVirtualization=vm), and no systemd runs as PID 1 here to boot one"

phase "in the root: apt-get remove --purge"
apt_in_root remove --purge $ours >"$work/purge.log" 2>&1 ||
	{ tail -n 30 "$work/purge.log" >&2; die "apt-get remove --purge failed"; }
snapshot >"$work/after.list"
diff "$work/before.list" "$work/after.list" >&2 ||
	die "apt-get remove --purge left the root different (< before the packages, > after their purge)"
say "  $(wc -l <"$work/before.list") paths, the same before the packages and after their purge"

# ---- 6. the README's "On a real KVM host", steps 1 and 2, as written
# (test/pkg/README): its apt-get lines (with -y: there is no one to say
# yes), Debian's linux-source-6.12 unpacked and the series pushed with
# quilt, the host's configuration taken over (make olddefconfig), then
# step 2's dpkg -i of the packages phase 1 built, and perf built and
# asked for libvmctx.  The host's /boot/config-$(uname -r) is that of
# Debian's own 6.12 kernel for amd64, the one a Debian 12 KVM host runs.
# Step 1's build (hours of a distribution's configuration) and boot are
# left out: the lab builds the same series and boots it (build-kernel.sh);
# what that build would run into is checked from the configuration: each
# option Debian's kernel has is kept (make olddefconfig drops, silently,
# what the build machine lacks a tool for: without pahole, the kernel's
# and modules' BTF), and each tool the build of that configuration calls
# is installed.  Step 2's dpkg-buildpackage is phase 1's above.
# readme_block N: the lines of step N's code block, unindented
readme_block() { awk -v n="$1" -f "$top/test/lab/readme-step.awk" "$top/README.md"; }
step1=$(readme_block 1) step2=$(readme_block 2)
# script LINES: a step's lines as one shell script for the root,
# each as written but: apt-get install with -y; /path/to/vmctx the tree
# (read-only, at /tmp/vmctx); step 1's kernel build and boot left out;
# step 2's dpkg-buildpackage phase 1's, its dpkg -i run beside those
# packages.  (The lines this test needs are checked below.)
script() {
	local l
	while IFS= read -r l; do
		case $l in
		"dpkg -i ../linux-image-"*) continue ;;
		"cp /boot/config-"*" && make -j"*" bindeb-pkg") l=${l%% && make -j*} ;;
		"cd /path/to/vmctx && dpkg-buildpackage -us -uc -b && "*)
			l="mkdir -p /tmp/pkg/build && cd /tmp/pkg/build && ${l#cd /path/to/vmctx && dpkg-buildpackage -us -uc -b && }" ;;
		"apt-get install "*) l="apt-get -q -y -o APT::Keep-Downloaded-Packages=true install ${l#apt-get install }" ;;
		esac
		l=${l//\/path\/to\/vmctx//tmp/vmctx}
		printf 'echo "+ %s"\n%s\n' "$(sed 's/["$`\\]/\\&/g' <<<"$l")" "$l"
	done <<<"$1"
}
grep -q '^QUILT_PATCHES=/path/to/vmctx/kernel-patches quilt push -a$' <<<"$step1" &&
	grep -q '^cp /boot/config-$(uname -r) .config && make olddefconfig && make -j$(nproc) bindeb-pkg$' <<<"$step1" &&
	grep -q '^cd /path/to/vmctx && dpkg-buildpackage -us -uc -b && dpkg -i ' <<<"$step2" &&
	grep -q 'perf version --build-options | grep libvmctx' <<<"$step2" ||
	die "README.md's \"On a real KVM host\" steps 1 and 2 have not the lines this test runs: $(tr '\n' ';' <<<"$step1$step2")"
mkdir -p "$root/tmp/vmctx"
mount --bind "$top" "$root/tmp/vmctx"; mounts+=("$root/tmp/vmctx")
mount -o remount,bind,ro "$root/tmp/vmctx"
script "$step1" >"$root/tmp/readme-1.sh"
# the host's configuration: Debian's newest 6.12 kernel for amd64
kpkg=$(in_root apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' |
	awk '{ print $1 }' | sort -V | tail -n 1)
[ -n "$kpkg" ] || die "no linux-image-6.12.*+deb12-amd64-unsigned in the root's package lists"
in_root sh -c "cd /tmp && apt-get -q download $kpkg" >>"$work/apt.log" 2>&1 ||
	{ tail "$work/apt.log" >&2; die "apt-get download $kpkg failed"; }
host_config=/boot/config-$(uname -r)
dpkg-deb --fsys-tarfile "$root"/tmp/"$kpkg"_*.deb | tar -x -O --wildcards './boot/config-*' >"$root$host_config" ||
	die "$kpkg has no /boot/config-*"
rm -f "$root"/tmp/"$kpkg"_*.deb
say "  $host_config: $kpkg's"
script "$step2" >"$root/tmp/readme-2.sh"
phase "README step 1 as written, but the kernel's build and boot (log: readme.log)"
in_root sh -e /tmp/readme-1.sh >"$work/readme.log" 2>&1 ||
	{ tail -n 30 "$work/readme.log" >&2; die "README step 1 failed in a clean root (see readme.log)"; }
src=/root/linux-source-6.12
n=$(in_root sh -c "cd $src && quilt applied | wc -l")
[ "$n" = "$(grep -c . "$top/kernel-patches/series")" ] || die "quilt applied $n patches, not the series' $(grep -c . "$top/kernel-patches/series")"
say "  quilt push -a: $n patches applied to linux-source-6.12"
# Debian's options, each kept with its value (but the compiler's name:
# Debian's packages build with x86_64-linux-gnu-gcc-12, the same gcc)
lost=$(grep '^CONFIG_' "$root$host_config" | grep -v '^CONFIG_CC_VERSION_TEXT=' | sort |
	comm -23 - <(grep '^CONFIG_' "$root$src/.config" | sort))
[ -z "$lost" ] ||
	die "make olddefconfig did not keep Debian's configuration, as the build machine lacks what it needs (step 1's apt-get line): $(tr '\n' ' ' <<<"$lost")"
# the tools that the build of this configuration calls, and bindeb-pkg's
# (its headers_install: rsync)
tools="dpkg-buildpackage rsync"
for t in KERNEL_GZIP:gzip KERNEL_XZ:xz KERNEL_ZSTD:zstd KERNEL_LZ4:lz4 KERNEL_LZO:lzop \
	 KERNEL_BZIP2:bzip2 MODULE_COMPRESS_XZ:xz MODULE_COMPRESS_ZSTD:zstd MODULE_COMPRESS_GZIP:gzip \
	 DEBUG_INFO_BTF:pahole MODULE_SIG:openssl; do
	grep -q "^CONFIG_${t%:*}=y" "$root$src/.config" && tools="$tools ${t#*:}"
done
missing=
for t in $tools; do
	in_root sh -c "command -v $t" >/dev/null || missing="$missing $t"
done
[ -z "$missing" ] ||
	die "step 1's build of Debian's configuration calls what step 1 does not install:$missing"
say "  make olddefconfig kept Debian's $(grep -c '^CONFIG_' "$root$host_config") options; the build's tools are there ($tools)"
phase "README step 2 as written, but dpkg-buildpackage (phase 1's) (log: readme.log)"
in_root sh -e /tmp/readme-2.sh >>"$work/readme.log" 2>&1 ||
	{ tail -n 30 "$work/readme.log" >&2; die "README step 2 failed in a clean root (see readme.log)"; }
out=$(grep -A3 '^+ .*perf version --build-options' "$work/readme.log" | grep libvmctx | grep -v '^+') ||
	die "README step 2's perf version --build-options printed no libvmctx line (see readme.log)"
say "  perf version --build-options: $(sed 's/^ *//' <<<"$out")"
grep -q 'libvmctx: *\[ on' <<<"$out" || die "perf was built without libvmctx (see readme.log)"
perf=/root/perf-build/perf
# ld.so.cache names /lib/<triplet> (merged /usr): the file behind it
lib=$(in_root ldd "$perf" | sed -n 's/.*libvmctx[.]so[.]0 => \([^ ]*\) .*/\1/p')
[ -n "$lib" ] && lib=$(in_root readlink -f "$lib")
owner=$(in_root dpkg -S "${lib:-none}" 2>/dev/null | cut -d: -f1) || true
[ "$owner" = libvmctx0 ] || die "perf loads libvmctx.so.0 from '${lib:-nowhere}', not from libvmctx0"
n=$(in_root "$perf" test 'Sample parsing' 2>&1 | grep -c ': Ok') || true
[ "$n" = 2 ] || die "perf test 'Sample parsing': $n of 2 Ok"
say "  perf: libvmctx on, $lib of libvmctx0 loaded, perf test 'Sample parsing' Ok"

phase "done"
say "all package checks passed in $((SECONDS - start)) s"
