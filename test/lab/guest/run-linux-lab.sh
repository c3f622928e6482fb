#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run-linux-lab.sh: the guest-agent lab.  A patched L1 host (QEMU TCG, AMD
# SVM) runs a real Linux L2 guest with QEMU/KVM; vmctx-agent records inside
# the guest.  With the guest's PTI on, lab-record samples on the host and
# lab-linux-check resolves the samples through the guest's bundle one by
# one: the kernel's capture.  With PTI off, the user's path: 'perf record
# --vmcs-ctx -a' on the host, short "churn" processes in the guest besides
# the two hot ones (20 ms each, one after another for VMCTX_LINUX_CHURN
# seconds, 60 by default: about 1,600 processes), and perf-check.sh reads
# what 'perf report --guest-maps' and 'perf script' print.  The chains
# run: 'perf record --vmcs-ctx -g' while the guest runs tree (tree.c, a
# known call tree through a shared library), and check-chains.sh reads the
# call chains perf report, perf script and the exports give.  Exits 0 only
# if every check passed.
#
# Builds the L1 kernel and perf (build-kernel.sh, build-perf.sh: up to
# date in seconds) and lab-record (build-tools.sh) if missing.  Environment as in
# lab-env.sh, plus VMCTX_LINUX_RUNS="on off chains dwarf readme" (the runs
# to do: the guest's PTI on, off, the call-chain run, the DWARF stack run
# and the README's "On a real KVM host" as written),
# VMCTX_LINUX_DWARF_SECS (5) and VMCTX_LINUX_DWARF_PERIOD (2000000 ns):
# each program's seconds and the host's sample period in the DWARF run,
# VMCTX_LINUX_VMX=1 (L1 on bochs' Intel VMX with PCID, slow),
# VMCTX_LINUX_COST=1 (L1 also measures what --guest-maps costs perf
# report, about 3 minutes: a benchmark, as test/bench/report-cost.sh),
# VMCTX_LINUX_RUNS=soak (soak.sh: boots counted, not checked) and
# VMCTX_LINUX_L1=patched|stock|debug (the soak's L1).
set -euo pipefail
. "$(dirname "$0")/../lab-env.sh"

G=$LAB_SRC/guest
# VMCTX_LINUX_WORK: another work directory, for a second run at once (soak.sh)
W=${VMCTX_LINUX_WORK:-$LAB_DIR/linux}
mkdir -p "$W" "$RESULTS_DIR"
"$LAB_SRC/install-deps.sh"
"$LAB_SRC/build-qemu.sh"
[ -f /usr/share/seabios/bios-256k.bin ] || die "no /usr/share/seabios/bios-256k.bin (package seabios)"

# ---- the L1 host: the patched kernel (VMCTX_LINUX_L1=stock: unpatched,
# for the soak's baseline; debug: patched, with lockdep and KASAN;
# stock-debug: unpatched with the same, debug's baseline) and the recorder
flavour=${VMCTX_LINUX_L1:-patched}
case $flavour in
patched|stock|debug|stock-debug) ;;
*) die "VMCTX_LINUX_L1=$flavour: not patched, stock, debug or stock-debug" ;;
esac
[ "$flavour" = patched ] || [ "${VMCTX_LINUX_RUNS:-}" = soak ] ||
	die "VMCTX_LINUX_L1=$flavour runs only the soak (VMCTX_LINUX_RUNS=soak)"
l1=$LAB_DIR/out/$flavour/arch/x86/boot/bzImage
# each time, not only when missing: both builds are incremental, and a
# kernel or perf left from an older l1.config or series would run stale
"$LAB_SRC/build-kernel.sh" "$flavour"
"$LAB_SRC/build-perf.sh"
[ -x "$TOOLS_DIR/lab-record" ] || "$LAB_SRC/build-tools.sh"

# ---- the L2 guests: the agent and workloads, then for each guest its
# Debian kernel package, vmctx_guest.ko built against its headers, and an
# initramfs with the modules of that kernel
log "building vmctx-agent and lab-linux-check (static, with the lab's libvmctx.a)"
"$LAB_SRC/build-libvmctx.sh"
AGENT_CFLAGS=(-static -O2 -D_GNU_SOURCE -DPACKAGE_VERSION="\"$(sed -n "s/^AC_INIT(\[vmctx\], \[\([^]]*\)\].*/\1/p" "$REPO_TOP/configure.ac")\"" -I"$REPO_TOP/lib")
# with its BPF backend: the BPF program for CO-RE and its skeleton, as
# Makefile.am builds them, and Debian's static libbpf
mkdir -p "$W/bpf"
clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -I"$REPO_TOP/guest-agent/bpf" \
	-c "$REPO_TOP/guest-agent/bpf/agent.bpf.c" -o "$W/bpf/agent.bpf.o"
bpftool gen skeleton "$W/bpf/agent.bpf.o" name agent_prog > "$W/bpf/agent-bpf.skel.h"
gcc "${AGENT_CFLAGS[@]}" -DHAVE_BPF -I"$W/bpf" -o "$W/vmctx-agent" "$REPO_TOP"/guest-agent/*.c \
	"$VMCTX_A" -lbpf -lelf -ldeflate -lz 2> "$W/agent-link.err" ||
	{ cat "$W/agent-link.err" >&2; die "building vmctx-agent failed"; }
# (the warnings about getpwnam and the like in a static binary are glibc's)
gcc -static -O2 -I"$REPO_TOP/lib" -o "$W/compare-bundles" \
	"$REPO_TOP/guest-agent/tests/compare-bundles.c" "$VMCTX_A" -ldeflate -lz
# lab-linux-check reads the samples with ../samples.c, which takes the
# PERF_GUEST_CTX_* flags from the patched tree's uapi header (libvmctx is
# compiled without it: the tree's tools headers are not the system's)
(
	lab_lock
	tree_state patched
	gcc -O2 -D_GNU_SOURCE -I"$REPO_TOP/lib" -I"$LAB_SRC" -I"$LINUX_TREE/tools/include/uapi" \
		-c "$G/linux-check.c" -o "$W/linux-check.o"
	gcc -O2 -I"$LINUX_TREE/tools/include/uapi" -c "$LAB_SRC/samples.c" -o "$W/samples.o"
)
gcc -static -O2 -D_GNU_SOURCE -I"$REPO_TOP/lib" -o "$W/lab-linux-check" \
	"$W/linux-check.o" "$W/samples.o" "$VMCTX_A" -ldeflate -lz
# hot's text far from busybox's, so an IP tells whose code it is; churn is
# the same program elsewhere, so an IP also tells hot's code from churn's.
# hot is linked as Debian's programs are, against the shared C library
# (its libc.so.6 and ld.so go into the guest); churn statically, so that
# its 20 ms lives are spent in its own code rather than in the dynamic
# linker.
gcc -O1 -g -D_GNU_SOURCE -no-pie -Wl,-Ttext-segment=0x20000000 -o "$W/hot" "$G/hot.c"
gcc -static -O1 -g -D_GNU_SOURCE -Wl,-Ttext-segment=0x30000000 -o "$W/churn" "$G/hot.c"
# mark: CPUIDs between two readings of the guest's clock, the ground
# truth for perf-check's guest time
gcc -static -O2 -o "$W/mark" "$G/mark.c"
# the switch storm (two threads ping-ponging on pipes) that overruns
# guest2's switch ring in the perf run
gcc -static -O2 -pthread -o "$W/switch-storm" "$REPO_TOP/guest-agent/tests/switch-storm.c"
# tree and its libtree.so, with frame pointers and no sibling calls: every
# frame keeps its caller (tree.c)
fp=(-O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls)
gcc "${fp[@]}" -shared -fPIC -o "$W/libtree.so" "$G/tree-lib.c"
gcc "${fp[@]}" -o "$W/tree" "$G/tree.c" -L"$W" -ltree -Wl,-rpath,/usr/lib/tree
# tree-nofp and its libtree.so: the same program as Debian builds its
# archive, without frame pointers (the DWARF run: its chains come from
# the guest's stack and the objects' .eh_frame); still no sibling calls,
# which no unwinder can see
nofp=(-O1 -g -fomit-frame-pointer -fasynchronous-unwind-tables -fno-optimize-sibling-calls)
mkdir -p "$W/nofp"
gcc "${nofp[@]}" -shared -fPIC -o "$W/nofp/libtree.so" "$G/tree-lib.c"
gcc "${nofp[@]}" -o "$W/nofp/tree-nofp" "$G/tree.c" -L"$W/nofp" -ltree -Wl,-rpath,/usr/lib/tree-nofp
nm -S "$W/hot" > "$W/hot.syms"
nm -S "$W/churn" > "$W/churn.syms"
# Debian's own perl (perl-base: stripped, its functions in .dynsym only),
# run unmodified in the guests; binutils' nm is the ground truth for what
# its addresses are called
nm -D -S --defined-only /usr/bin/perl > "$W/perl.syms"

# pack_l2 SERIES DIR [dwarf]: Debian's SERIES kernel (debian-guest.sh) and its
# initramfs, as DIR/bzImage and DIR/initramfs.cpio.gz; with dwarf, the
# DWARF run's programs too: tree-nofp, Debian's xz and Debian's own perf
# (linux-perf), with their libraries
pack_l2() {
	local series=$1 out=$2 extra=${3:-} guest_env kver vmlinuz headers gmods root st m modlist
	guest_env=$("$G/debian-guest.sh" "$series")
	kver=$(echo "$guest_env" | sed -n 's/^kver=//p')
	vmlinuz=$(echo "$guest_env" | sed -n 's/^vmlinuz=//p')
	headers=$(echo "$guest_env" | sed -n 's/^headers=//p')
	gmods=$(echo "$guest_env" | sed -n 's/^modules=//p')
	root=$(echo "$guest_env" | sed -n 's/^root=//p')
	rm -rf "$W/kmod-$series"
	cp -r "$REPO_TOP/guest-agent/kmod" "$W/kmod-$series"
	log "building vmctx_guest.ko against Debian's linux-headers-$kver"
	# (no BTF for it: that needs pahole, and nothing reads it)
	make -s -C "$headers" M="$W/kmod-$series" CONFIG_DEBUG_INFO_BTF_MODULES= modules
	log "packing the L2 initramfs for Linux $kver"
	st=$out-stage
	rm -rf "$st"
	mkdir -p "$st"/{bin,lib,proc,sys,dev,tmp}
	cp /bin/busybox "$W/vmctx-agent" "$W/hot" "$W/churn" "$W/mark" "$W/switch-storm" "$st/bin/"
	cp "$W/hot" "$st/bin/blip"
	cp "$W/tree" "$st/bin/"
	mkdir -p "$st/usr/lib/tree"
	cp "$W/libtree.so" "$st/usr/lib/tree/"
	# hot's and perl's shared libraries (Debian 12's libc, as in the guest
	# distro), at their paths, with the dynamic linker
	mkdir -p "$st/usr/bin"
	cp /usr/bin/perl "$st/usr/bin/"
	if [ "$extra" = dwarf ]; then
		cp "$W/nofp/tree-nofp" "$st/bin/"
		mkdir -p "$st/usr/lib/tree-nofp"
		cp "$W/nofp/libtree.so" "$st/usr/lib/tree-nofp/"
		cp /usr/bin/xz /usr/bin/perf "$st/usr/bin/"
		cp "$G/dwarf-work.sh" "$G/dwarf.pl" "$st/lib/"
	fi
	{ ldd "$W/hot"; ldd /usr/bin/perl; [ "$extra" != dwarf ] || ldd /usr/bin/xz /usr/bin/perf; } | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' |
		sort -u | while read -r lib; do
			mkdir -p "$st$(dirname "$lib")"
			cp -L "$lib" "$st$lib"
		done
	cp "$W/kmod-$series/vmctx_guest.ko" "$st/lib/"
	# Debian's modules: virtio for the disk that carries the bundle back,
	# virtio-vsock, through which a serving guest's agent answers perf
	# record (vmctx.serve), and the generic crypto modules, loaded as a
	# distro guest loads dozens of modules; each with what it depends on
	# (modprobe --show-depends on the unpacked tree); what the kernel has
	# built in is left out (not tcrypt, the crypto self-test module, which
	# refuses to stay loaded by design, nor jitterentropy_rng, which finds
	# no usable timer jitter in TCG)
	modlist=
	for m in virtio_pci virtio_blk vmw_vsock_virtio_transport $(ls "$gmods/kernel/crypto" | sed -n 's/\.ko$//p' | tr - _ |
		grep -vx -e tcrypt -e jitterentropy_rng); do
		modprobe -d "$root" -S "$kver" --show-depends "$m" 2>/dev/null | grep -q '^insmod ' &&
			modlist="$modlist $m"
	done
	for m in $modlist; do
		modprobe -d "$root" -S "$kver" --show-depends "$m" 2>/dev/null |
			awk '$1 == "insmod" { print $2 }'
	done | sort -u | while read -r ko; do
		rel=${ko#"$root"}
		mkdir -p "$st$(dirname "$rel")"
		cp "$ko" "$st$rel"
	done
	cp "$gmods"/modules.dep "$gmods"/modules.alias "$gmods"/modules.builtin \
		"$gmods"/modules.order "$st/lib/modules/$kver/" 2>/dev/null || true
	echo "$modlist" > "$st/lib/vmctx-modules"
	sed -n 's/^guest //p' "$W/readme.cmds" > "$st/lib/vmctx-readme-guest"
	install_init "$G/guest-init.sh" "$st"
	mkdir -p "$out"
	pack_initramfs "$st" "$out/initramfs.cpio.gz" 6
	cp "$vmlinuz" "$out/bzImage"
}
# The readme run: the README's "On a real KVM host", steps 4 and 5, as
# written there: the guest's command (step 4, "# in the guest") in L2,
# the host's ("# on the host") and step 5's reports in L1.  One change,
# which the README itself offers: L1's emulated CPU has no PMU, so
# "-e cycles" becomes "-e cpu-clock".  A README whose section no longer
# has these lines fails the run here, before any boot.
readme_cmds() {
	awk -v n=4 -f "$LAB_SRC/readme-step.awk" "$REPO_TOP/README.md" |
		awk '/# in the guest/ { sub(/ +#.*$/, ""); print "guest " $0; next }
		     /# on the host/ { sub(/ +#.*$/, ""); print "host " $0 }'
	awk -v n=5 -f "$LAB_SRC/readme-step.awk" "$REPO_TOP/README.md" |
		awk '/^perf report / { print "report " $0 }'
}
readme_cmds > "$W/readme.cmds"
[ "$(grep -c '^guest vmctx-agent record ' "$W/readme.cmds")" = 1 ] &&
	[ "$(grep -c '^host perf record .*-e cycles .*--vmcs-ctx' "$W/readme.cmds")" = 1 ] &&
	grep -q '^report ' "$W/readme.cmds" ||
	die "README.md's \"On a real KVM host\" has not the commands the readme run takes (step 4: one in the guest, one on the host with -e cycles; step 5: perf report): $(tr '\n' ';' < "$W/readme.cmds")"
# guest1: Debian 12's kernel (6.1); guest2, in the perf run beside it:
# Debian 12's backported 6.12 (VMCTX_LINUX_SECOND=0 leaves it out)
pack_l2 6.1 "$W/l2"
# the DWARF run's guest: guest1's, with its programs
dwarf=0
case " ${VMCTX_LINUX_RUNS:-on off chains dwarf readme} " in *" dwarf "*) dwarf=1 ;; esac
[ "$dwarf" = 1 ] && pack_l2 6.1 "$W/l2d" dwarf
second=${VMCTX_LINUX_SECOND:-1}
[ "$second" = 1 ] && pack_l2 6.12 "$W/l2b"

log "packing the L1 initramfs (QEMU, its libraries and firmware)"
st=$W/l1-stage
rm -rf "$st"
mkdir -p "$st"/{bin,lab/l2,share/qemu,proc,sys,dev,tmp}
cp /bin/busybox "$TOOLS_DIR/lab-record" "$W/lab-linux-check" "$W/compare-bundles" "$st/bin/"
# (and tmux, for top-check.sh)
cp /usr/bin/qemu-system-x86_64 /usr/bin/tmux "$st/bin/"
ldd /usr/bin/qemu-system-x86_64 /usr/bin/tmux | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' |
	while read -r lib; do
		mkdir -p "$st$(dirname "$lib")"
		cp -L "$lib" "$st$lib"
	done
mkdir -p "$st/lib64"
cp -L /lib64/ld-linux-x86-64.so.2 "$st/lib64/"
cp -L /usr/share/seabios/bios-256k.bin /usr/share/qemu/kvmvapic.bin \
	/usr/share/qemu/linuxboot_dma.bin "$st/share/qemu/"
cp "$W/l2/bzImage" "$W/l2/initramfs.cpio.gz" "$st/lab/l2/"
if [ "$dwarf" = 1 ]; then
	mkdir -p "$st/lab/l2d"
	cp "$W/l2d/bzImage" "$W/l2d/initramfs.cpio.gz" "$st/lab/l2d/"
fi
if [ "$second" = 1 ]; then
	mkdir -p "$st/lab/l2b"
	cp "$W/l2b/bzImage" "$W/l2b/initramfs.cpio.gz" "$st/lab/l2b/"
fi
cp "$W/hot.syms" "$W/churn.syms" "$W/perl.syms" "$st/lab/"
install -m 755 "$G/perf-check.sh" "$G/top-check.sh" "$st/lab/"
# tmux's terminfo, of its client (TERM=screen) and of its panes
# (tmux-256color), and the UTF-8 locale it insists on
mkdir -p "$st/lab/terminfo/s" "$st/lab/terminfo/t" "$st/usr/lib/locale"
cp -L /lib/terminfo/s/screen "$st/lab/terminfo/s/"
cp -L /lib/terminfo/t/tmux-256color "$st/lab/terminfo/t/"
cp -rL /usr/lib/locale/C.utf8 "$st/usr/lib/locale/"
sed -n 's/^host //p' "$W/readme.cmds" | sed 's/ -e cycles / -e cpu-clock /' > "$st/lab/readme-host"
sed -n 's/^report //p' "$W/readme.cmds" > "$st/lab/readme-report"
stage_perf "$st"
install_init "$G/l1-init.sh" "$st"
pack_initramfs "$st" "$W/l1-initramfs.cpio.gz" 1
log "L1 initramfs: $(du -k "$W/l1-initramfs.cpio.gz" | cut -f1) KiB"

# check_handover: perf-check.sh, here, on what L1 wrote on its second
# serial port (l1-init.sh: the recording, the bundles, the guests' figures,
# L1's kallsyms and its guest-level view, a gzipped tar whose size and MD5
# L1's console gives), with the lab's perf (the one L1 ran) and busybox's
# tools (those of L1, so the checks read as they do there); prints the
# result line that L1 left to it
# unpack_handover DIR: what L1 wrote on its second serial port, into DIR,
# if it is what L1's console says it sent
unpack_handover() {
	local want got
	want=$(sed -n 's/^VMCTX-LAB: HANDOVER \([0-9]*\) bytes, md5 \([0-9a-f]*\).*/\1 \2/p' "$logf")
	got="$(stat -c %s "$W/handover.tgz") $(md5sum < "$W/handover.tgz" | cut -c1-32)"
	[ "$want" = "$got" ] ||
		{ echo "VMCTX-LAB: RESULT FAIL L1 sent '$want' (size, MD5) on its second serial port, the lab's host got '$got'"; return 1; }
	tar -xzf "$W/handover.tgz" -C "$1" 2>&1 ||
		{ echo "VMCTX-LAB: RESULT FAIL what L1 sent on its second serial port is not a tar"; return 1; }
}
check_handover() {
	local hc=$W/checks h n maps= bad= perf=$LAB_DIR/out/perf/perf
	rm -rf "$hc"
	mkdir -p "$hc/bin" "$hc/tmp"
	unpack_handover "$hc" || return
	h=$hc/handover
	/bin/busybox --install -s "$hc/bin"
	cat > "$hc/bin/perf" <<EOS
#!/bin/busybox sh
# the lab's perf, with L1's kernel symbols for report and script
case \$1 in
report|script) c=\$1; shift; exec "$perf" \$c --kallsyms="$h/kallsyms" "\$@" ;;
esac
exec "$perf" "\$@"
EOS
	chmod +x "$hc/bin/perf"
	for n in $(cat "$h/guests"); do maps="$maps,guest$n=$h/guest$n.vmctx"; done
	maps=${maps#,}
	# the user's report in L1 and the same command here, on the recording
	# it sent: one text (perf's numbers in the C locale, as in L1)
	local -x LC_ALL=C
	"$hc/bin/perf" report -i "$h/perf.data" --guest-maps="$maps" --guest-view=guest --stdio \
		> "$hc/view" 2> "$hc/view.err"
	if [ -s "$hc/view" ] && cmp -s "$h/l1-view" "$hc/view"; then
		echo "perf-check: perf report --guest-maps --guest-view=guest printed the same $(wc -l < "$hc/view") lines in L1 and on the lab's host"
	else
		echo "perf-check: FAIL perf report --guest-maps --guest-view=guest printed otherwise in L1 and on the lab's host:"
		diff "$h/l1-view" "$hc/view" | head -n 10
		tail -n 3 "$hc/view.err"
		bad=" (the guest-level view)"
	fi
	for n in $(cat "$h/guests"); do
		echo "perf-check: ==== guest$n ($(cat "$h/guest$n.up"))"
		PATH=$hc/bin PERF_CHECK_LAB=$W PERF_CHECK_TMP=$hc/tmp "$hc/bin/sh" "$G/perf-check.sh" \
			"$h/perf.data" "$maps" "guest$n" "$(cat "$h/guest$n.pid")" "$(cat "$h/guest$n.work")" \
			"$(cat "$h/guest$n.libc")" "$h/marks-$n" "$h/perl-$n" "$h/sched-$n" "$h/storm-$n" || bad="$bad guest$n"
	done
	# One clock on the host too: each CPU's cpu-clock time in perf report
	# (periods as perf counts them, a late sample for the ticks its timer
	# missed) is its span in perf script, within 0.1%: from its first
	# sample (less its period) to its last
	"$hc/bin/perf" report -i "$h/perf.data" --guest-maps="$maps" --sort cpu -F cpu,period --stdio \
		2>/dev/null | awk '/^# Samples: .* of event / { ev = $0 }
			ev ~ /event .cpu-clock/ && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { printf "%d %.3f\n", $1, $2 / 1e6 }' \
		> "$hc/cpu.time"
	"$hc/bin/perf" script -i "$h/perf.data" --guest-maps="$maps" -F cpu,time,period,event 2>/dev/null |
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) break
			if (i > NF || $(i + 3) != "cpu-clock:") next
			c = substr($i, 2, length($i) - 2) + 0; t = $(i + 1); sub(/:$/, "", t); t = t * 1e3; p = $(i + 2) / 1e6
			if (!(c in lo) || t - p < lo[c]) lo[c] = t - p
			if (!(c in hi) || t > hi[c]) hi[c] = t }
			END { for (c in lo) printf "%d %.3f\n", c, hi[c] - lo[c] }' > "$hc/cpu.span"
	local c ms span ncpu=0
	while read -r c ms; do
		span=$(awk -v c="$c" '$1 == c { print $2 }' "$hc/cpu.span")
		ncpu=$((ncpu + 1))
		echo "perf-check: host CPU $c: $ms ms of cpu-clock in perf report, ${span:-no} ms from its first sample to its last in perf script"
		awk -v a="$ms" -v b="${span:-0}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b / 1000) }' || {
			echo "perf-check: FAIL host CPU $c's time in perf report ($ms ms) is not its span (${span:-no} ms) within 0.1%"
			bad="$bad (host CPU $c's time)"
		}
	done < "$hc/cpu.time"
	[ "$ncpu" -gt 0 ] || { echo "perf-check: FAIL perf report --sort cpu gave no host CPU"; bad="$bad (host CPUs)"; }
	# perf inject --guest-maps writes the guests as perf machines, and
	# Debian's own perf (no --vmcs-ctx, no libvmctx) reads them: its guest
	# rows ([u] guest user, [g] guest kernel) of cpu-clock must be the
	# patched perf's, the top 20 by samples, counts and all (perf inject
	# leaves kvm:kvm_exit samples in the vCPU threads; perf report moves
	# them to the guest processes)
	if [ -x /usr/bin/perf ]; then
		# (no grep, no head: under pipefail a pipe that matches nothing, or
		# whose reader stops early, would end this script)
		local rows='awk "/^# Samples: .* of event / { ev = \$0 } !/^#/ && /\[[ug]\] / && ev ~ /event .cpu-clock/ && !/\\[unresolved\\]/" | sed "s/^ *[0-9.]*%//" | sort -k1,1nr -k2 | sed -n 1,20p'
		HOME=$hc/home "$perf" inject -i "$h/perf.data" --guest-maps="$maps" -o "$hc/inj.data" \
			> "$hc/inject.out" 2>&1 || { tail -n 3 "$hc/inject.out"; bad="$bad (perf inject)"; }
		"$hc/bin/perf" report -i "$h/perf.data" --guest-maps="$maps" --stdio -n \
			--sort comm,pid,dso,sym 2>/dev/null | eval "$rows" > "$hc/inject.want" || :
		HOME=$hc/home /usr/bin/perf --buildid-dir "$hc/inj.data/debug" report -i "$hc/inj.data" \
			--kallsyms="$h/kallsyms" --stdio -n \
			--sort comm,pid,dso,sym 2>/dev/null | eval "$rows" > "$hc/inject.got" || :
		if [ -s "$hc/inject.want" ] && cmp -s "$hc/inject.want" "$hc/inject.got"; then
			echo "perf-check: $(/usr/bin/perf --version) reads perf inject --guest-maps' output: its top $(wc -l < "$hc/inject.got") guest rows are the patched perf's"
			sed 's/^/perf-check:   /' "$hc/inject.got" | head -n 5
		else
			echo "perf-check: FAIL $(/usr/bin/perf --version) reads perf inject --guest-maps' output otherwise:"
			diff "$hc/inject.want" "$hc/inject.got" | head -n 10
			bad="$bad (stock perf on the injected file)"
		fi
		# and each host CPU's time as perf report gives it: the output's
		# samples carry the periods perf report weighs them by
		HOME=$hc/home /usr/bin/perf --buildid-dir "$hc/inj.data/debug" report -i "$hc/inj.data" \
			--kallsyms="$h/kallsyms" --sort cpu -F cpu,period --stdio 2>/dev/null |
			awk '/^# Samples: .* of event / { ev = $0 }
				ev ~ /event .cpu-clock/ && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { printf "%d %.3f\n", $1, $2 / 1e6 }' \
			> "$hc/cpu.inj"
		if [ -s "$hc/cpu.inj" ] && cmp -s "$hc/cpu.time" "$hc/cpu.inj"; then
			echo "perf-check: $(/usr/bin/perf --version) gives each host CPU the time perf report gives it in perf inject's output (CPU ms): $(tr '\n' ' ' < "$hc/cpu.inj")"
		else
			echo "perf-check: FAIL $(/usr/bin/perf --version) gives the host CPUs other times in perf inject's output (CPU ms): $(tr '\n' ' ' < "$hc/cpu.inj"), perf report $(tr '\n' ' ' < "$hc/cpu.time")"
			bad="$bad (the host CPUs' time in the injected file)"
		fi
	else
		echo "perf-check: skip stock perf on perf inject's output: no /usr/bin/perf (Debian's linux-perf)"
	fi
	# hotspot reads perf inject --guest-processes' output with its own
	# parser: the guest function perf report ranks first (by name and
	# object, both VMs summed) has the same share of cpu-clock there,
	# within 0.5 points (test/perf/perfparser-top.py reads what the parser
	# hands hotspot)
	local pp=/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser top got
	if [ -x "$pp" ]; then
		HOME=$hc/home "$perf" inject -i "$h/perf.data" --guest-maps="$maps" --guest-processes \
			-o "$hc/proc.data" > "$hc/proc.out" 2>&1 || { tail -n 3 "$hc/proc.out"; bad="$bad (perf inject --guest-processes)"; }
		"$pp" --input "$hc/proc.data/data" --debug "$hc/proc.data/debug" --kallsyms "$h/kallsyms" \
			--output "$hc/proc.pp" > "$hc/proc.pp.err" 2>&1 || :
		top=$("$perf" --buildid-dir "$hc/proc.data/debug" report -i "$hc/proc.data" --kallsyms="$h/kallsyms" \
			--stdio --no-children -g none --sort dso,sym -v 2>/dev/null |
			awk '/^# Samples: .* of event / { ev = $0 }
				ev ~ /event .cpu-clock/ && $2 ~ /^\/vmctx-guest\// { n = split($2, p, "/"); sym = $0
					sub(/^.*\[\.\] /, "", sym); sub(/ *$/, "", sym); s[sym "\t" p[n]] += $1 }
				END { for (k in s) printf "%.2f\t%s\n", s[k], k }' | sort -rn | sed -n 1p)
		got=$(python3 "$REPO_TOP/test/perf/perfparser-top.py" "$hc/proc.pp" 2>/dev/null |
			awk -F '\t' -v n="$(echo "$top" | cut -f2)" -v b="$(echo "$top" | cut -f3)" '$1 == n && $2 == b { print $4 }')
		if [ -n "$top" ] && [ -n "$got" ] &&
		   awk -v a="${top%%	*}" -v b="$got" 'BEGIN { d = a - b; exit !(d <= 0.5 && d >= -0.5) }'; then
			echo "perf-check: hotspot's parser on perf inject --guest-processes' output: $(echo "$top" | cut -f2,3 | tr '\t' ' ') $got% of cpu-clock, perf report ${top%%	*}%"
		else
			echo "perf-check: FAIL hotspot's parser on perf inject --guest-processes' output: '$(echo "$top" | cut -f2,3 | tr '\t' ' ')' ${got:-none}% of cpu-clock, perf report ${top%%	*}%"
			bad="$bad (hotspot's parser)"
		fi
	else
		echo "perf-check: skip hotspot's parser: $pp is not installed (apt-get install hotspot)"
	fi
	if [ -n "$bad" ]; then
		echo "VMCTX-LAB: RESULT FAIL Linux guest through perf (pti=off):$bad"
	else
		echo "VMCTX-LAB: RESULT PASS linux pti=off perf guests=$(wc -w < "$h/guests"), checked on the lab's host"
	fi
}

# check_dwarf: check-chains.sh on tree-nofp's stacks and check-dwarf.sh on
# xz's and perl's, here, on what the DWARF run handed back
check_dwarf() {
	local hc=$W/dwarf rc=0
	rm -rf "$hc"
	mkdir -p "$hc"
	unpack_handover "$hc" || return
	ln -sf dwarf/guest1.vmctx "$hc/handover/guest1.vmctx"
	ln -sf dwarf/tree.out "$hc/handover/tree.out"
	mkdir -p "$hc/tree"
	LC_ALL=C TREE=tree-nofp TREE_LIB=/usr/lib/tree-nofp/libtree.so \
		"$G/check-chains.sh" "$LAB_DIR/out/perf/perf" "$hc/handover" "$W/nofp" "$hc/tree" || rc=1
	cp "$hc"/tree/flame.png "$RESULTS_DIR/flame-nofp.png" 2> /dev/null || true
	cp "$hc"/tree/flame-leaf.png "$RESULTS_DIR/flame-nofp-leaf.png" 2> /dev/null || true
	LC_ALL=C "$G/check-dwarf.sh" "$LAB_DIR/out/perf/perf" "$hc/handover" "$W/l2d-stage" "$hc" || rc=1
	cp "$hc"/flame-perl.png "$RESULTS_DIR/" 2> /dev/null || true
	if [ $rc = 0 ]; then
		echo "VMCTX-LAB: RESULT PASS linux dwarf, checked on the lab's host"
	else
		echo "VMCTX-LAB: RESULT FAIL Linux guest DWARF stacks through perf"
	fi
}

# check_chains: check-chains.sh, here, on what the chains run handed back
check_chains() {
	local hc=$W/chains
	rm -rf "$hc"
	mkdir -p "$hc"
	unpack_handover "$hc" || return
	LC_ALL=C PERF_NO_LIBVMCTX=$LAB_DIR/out/perf-nolibvmctx/perf \
		"$G/check-chains.sh" "$LAB_DIR/out/perf/perf" "$hc/handover" "$W" "$hc"
	local rc=$?
	# the flame graph's pictures, beside the logs
	cp "$hc"/flame.png "$hc"/flame-leaf.png "$RESULTS_DIR/" 2> /dev/null || true
	if [ $rc = 0 ]; then
		echo "VMCTX-LAB: RESULT PASS linux chains, checked on the lab's host"
	else
		echo "VMCTX-LAB: RESULT FAIL Linux guest call chains through perf"
	fi
}

# boot_once LOGF TRY KEYS...: boot L1 (the kernel $l1) for one run, its
# console in LOGF, and say how the boot ended in $outcome:
#   ok        L1 printed a result line and no guest was reset or hung
#   l1-oops   L1's own kernel printed a BUG, Oops, WARNING, KASAN, UBSAN,
#             soft lockup or RCU stall report, or panicked, on its console
#             or in the log l1-init.sh's finish() reads: never the
#             emulator's alone, so never tried again
#   l1-died   L1 stopped with no result line and no oops (a reset or
#             triple fault of the emulated machine, or QEMU's exit)
#   l1-hung   L1 printed nothing for $VMCTX_L1_SILENCE_STOP s and was
#             stopped, its heartbeat silent too (for three of its longest
#             intervals, or 90 s): its kernel stopped
#   l1-stuck  L1's heartbeat went on but nothing else came for as long:
#             its kernel ran, the run did not move (its busy tasks shown)
#   l2-reset  an L2 guest's QEMU exited before the guest said DONE
#   l2-hung   an L2 guest's window did not close (GUEST-HUNG)
#   slow      the run was too slow to judge: RESULT SLOW (lab-linux-check's
#             clock fit agreed with under half of the samples), or the
#             boot's time (VMCTX_QEMU_TIMEOUT) ran out while L1's
#             heartbeat went on
# and in $splat L1's first oops line, in $verdict the emulator's verdict at
# the look (qemu-cpu-state.py), if it was the emulator's.  L1's own lines start at the
# beginning of a line; an L2 guest's, which L1 shows, begin with the
# guest's timestamp.  The emulator's CPU resets and triple faults go to
# LOGF.cpu-reset.TRY (QEMU's -d cpu_reset): $resets and $triples.
# impossible_rflags LOGF: "emulator: ..." if an L2 guest's kernel report
# in LOGF, or the look at a hung guest (l2-look.sh's registers), shows an
# RFLAGS that no x86 CPU can hold: a reserved bit set
# (3, 5, 15, 22 to 31) or bit 1 clear.  POPF, IRET and VMRUN's checks keep
# them so on hardware; QEMU 7.2's CMPXCHG8B/16B built RFLAGS from stale
# lazy flags (test/lab/qemu/cmpxchg-cc-op.patch, now applied), and double
# faults of the 6.12 guest had such an RFLAGS (0x81029246; 0x836253c2;
# 0x83329242, the low half of the RDI an ADD had just used) in a state
# that led to the fault (test/lab/guest/README).  Kept for an L1 emulator
# without the patch (VMCTX_L1_QEMU) and any fault of the same kind.
impossible_rflags() {
	local f

	for f in $(sed 's/\r$//' "$1" | grep -a '^\[ *[0-9.]*\] RSP: \|^VMCTX-LAB: L2 look guest[0-9]*: RIP=' |
		   sed -n 's/.* EFLAGS: \([0-9a-f]\{1,16\}\).*/\1/p; s/.* RFL=\([0-9a-f]\{1,16\}\) .*/\1/p' |
		   sort -u); do
		if [ $((0x$f & 0xffffffffffc08028)) != 0 ] || [ $((0x$f & 2)) = 0 ]; then
			echo "emulator: an L2 guest's RFLAGS $f has reserved bits (no x86 CPU holds that state)"
			return
		fi
	done
}
# where_l1 FILE PID: where a silent L1's CPUs are, before it is stopped: five
# rounds of QEMU's 'info registers -a', 'x/3i $pc', 'info jit' and
# 'info lapic', some seconds apart, through the
# monitor socket, into FILE; QEMU's own flags for the CPU (FILE.state:
# GIF, the saved host IF, the interrupt requested); and on the lab's log each CPU's RIP, named
# from L1's System.map when it lies in L1's kernel text (otherwise it is
# an L2 guest's or L1 user code: QEMU shows the nested guest's state
# while it runs)
where_l1() {
	local out=$1 map=${l1%/arch/x86/boot/bzImage}/System.map

	[ -S "$W/l1-monitor.sock" ] || return 0
	# the CPUs, the instructions at their PC, the translator's counts
	# (TBs flushed and invalidated: a storm of invalidations is
	# self-modifying code the emulator retranslates without end), and
	# L1's local APIC (its timer: armed or not, pending or not; a guest
	# must not keep its host from its timer), five rounds
	/usr/bin/python3 "$G/qemu_monitor.py" "$W/l1-monitor.sock" 5 'info registers -a' \
		'x/3i $pc' 'info jit' 'info lapic' > "$out" 2>&1 || true
	local vm
	vm=$(pgrep -P "$2" qemu-system-x86 | head -n 1) || true
	# what the monitor does not show: whether the CPU, in a nested guest,
	# may take L1's interrupt (GIF, and the IF that VMRUN saved) and
	# whether QEMU has one requested (qemu-cpu-state.py)
	if [ -n "$vm" ]; then
		/usr/bin/python3 "$G/qemu-cpu-state.py" "$vm" "$W/l1-monitor.sock" > "$out.state" 2>&1 || true
		log "QEMU's CPU state at the silent L1 ($out.state): $(tail -n 1 "$out.state")"
	fi
	# and where QEMU's threads are (its exported names; a vCPU thread
	# stuck in the emulator shows which helper it loops in)
	if [ -n "$vm" ] && command -v gdb >/dev/null; then
		# three looks, a second apart: one place each time is a loop
		for _ in 1 2 3; do
			timeout 60 gdb -p "$vm" -batch -ex 'thread apply all bt 40' 2>&1 || true
			sleep 1
		done > "$out.bt"
		log "QEMU's threads at the silent L1: $out.bt (the vCPU's, first look: $(awk '/^Thread .*CPU/ { t = 1; next } t && /^#[0-9]/ { f = $2; if (match($0, / in [^ ]+/)) f = substr($0, RSTART + 4, RLENGTH - 4); printf "%s%s", s, f; s = " < "; if (++n == 6) exit }' "$out.bt"))"
	fi
	[ -f "$map" ] || map=/dev/null
	log "the silent L1's CPUs (QEMU's registers in $out): $(awk '
		FILENAME == ARGV[1] { if ($3 == "_stext") lo = $1; if ($3 == "_etext") hi = $1
				      if ($2 ~ /^[Tt]$/) { n++; a[n] = $1; f[n] = $3 } next }
		/^RIP=/ { r = substr($1, 5); name = "not L1 kernel text"; v = tolower(r)
			  best = ""; if (lo != "" && v >= lo && v < hi) for (i = 1; i <= n; i++)
				if (a[i] <= v && a[i] > best) { best = a[i]; name = f[i] }
			  printf "%s%s (%s)", sep, r, name; sep = ", " }' "$map" "$out")"
}
L1_OOPS='^(BUG: |Oops: |WARNING: |general protection fault|Kernel panic - not syncing|UBSAN: |watchdog: BUG: |rcu: INFO: |INFO: task .* blocked|kernel BUG at|Unable to handle kernel)'
boot_once() {
	# (the budget only bounds a run that crawls: a silence of
	# VMCTX_L1_SILENCE_STOP s tells a hang.  PTI off takes 770 s of it on an
	# idle 2-core machine, over 900 with a build beside it, most of it
	# guest1's boot: 100 to 400 s.  It is in L1's time, as the silences
	# are: it stretches with L1's pace, below, up to VMCTX_L1_PACE_MAX (4)
	# times: a debug L1 beside a load runs at a third of the pace, and
	# ran out of 1800 s with its first guest half done)
	local logf=$1 try=$2 qemu panicked silent rc=0 budget=${VMCTX_QEMU_TIMEOUT:-1500}
	local pace_max=${VMCTX_L1_PACE_MAX:-4} start=$SECONDS over= limit
	shift 2
	: > "$logf"	# before the watcher below reads it
	rm -f "$W/handover.tgz"
	# VMCTX_L1_CPUS: L1's CPUs, one by default.  With two, QEMU 7.2's
	# multi-threaded TCG corrupts L1's memory now and then while L1 runs
	# KVM guests (stock and patched kernels alike: triple faults, guest
	# resets and hangs, an L1 oops; test/lab/guest/README).  VMCTX_TCG:
	# QEMU's accelerator options (tcg,thread=single: one host thread for
	# all of L1's CPUs)
	rm -f "$W/l1-monitor.sock"
	timeout "$((budget * pace_max))" "$L1_QEMU" -accel "${VMCTX_TCG:-tcg}" -cpu max -smp "${VMCTX_L1_CPUS:-1}" \
		-name l1,debug-threads=on -m 1536M -nographic -no-reboot -kernel "$l1" \
		-initrd "$W/l1-initramfs.cpio.gz" -d cpu_reset -D "$logf.cpu-reset.$try" \
		-serial mon:stdio -serial file:"$W/handover.tgz" \
		-monitor unix:"$W/l1-monitor.sock",server=on,wait=off \
		-append "console=ttyS0,115200 tsc=reliable panic=-1 quiet loglevel=4 $* vmctx.dump=${VMCTX_LINUX_DUMP:-0}" \
		</dev/null >"$logf" 2>&1 &
	qemu=$!
	# panic=-1 reboots, which -no-reboot turns into QEMU's exit; but
	# a panic that faults again on its way down hangs L1 until the
	# timeout: stop QEMU 20 s after a panic that did not end it.
	# L1 prints a line at least every few minutes (its phases, the
	# guests' progress).  One that has said nothing for
	# ${VMCTX_L1_SILENCE:-300} s is looked at (where_l1), and stopped
	# rather than left to the timeout once the silence reaches
	# ${VMCTX_L1_SILENCE_STOP:-600} s: a guest's quiet boot is silent for
	# 100 to 400 s on a loaded machine, and more under the debug L1,
	# and guests that were looked at and stopped at 300 s were found
	# still booting (their consoles grew during the look).
	# (L1's heartbeat lines, every 30 s, are not progress but for the
	# size of the guests' consoles they give: they say that its kernel
	# still schedules, so that a silence is told as L1's kernel stopping
	# or as the run stopping with L1 alive)
	local lines=0 grown= heard=$SECONDS beats=0 beat=$SECONDS n b g p looked= gap=0 pace look stop
	panicked= silent= verdict= stall=
	while kill -0 "$qemu" 2>/dev/null; do
		# one pass over the console: its lines but heartbeats, the
		# heartbeats, the guests' console size the last one gave, and
		# whether L1 panicked
		read -r n b g p < <(awk '
			/^VMCTX-LAB: heartbeat [0-9]/ { b++; if (match($0, /consoles [0-9]+ bytes/)) g = substr($0, RSTART + 9, RLENGTH - 15); next }
			/^VMCTX-LAB: heartbeat/ { next }
			{ n++ }
			/^Kernel panic - not syncing/ { p = 1 }
			END { print n + 0, b + 0, (g == "" ? "-" : g), p + 0 }' "$logf")
		if [ -z "$panicked" ] && [ "$p" = 1 ]; then
			panicked=$SECONDS
		elif [ -n "$panicked" ] && [ $((SECONDS - panicked)) -ge 20 ]; then
			kill "$qemu" 2>/dev/null || true  # timeout passes it on
		fi
		# the longest time between two heartbeats: a slow L1's beat
		# comes late, which is not a hang
		if [ "$b" != "$beats" ]; then
			[ "$beats" = 0 ] || [ $((SECONDS - beat)) -le "$gap" ] || gap=$((SECONDS - beat))
			beats=$b beat=$SECONDS
		fi
		# The silences scale with L1's pace: its heartbeat comes every
		# 30 s of its own time, and the longest gap between two says
		# how much slower than that it runs (a debug L1 beside a load:
		# 85 to 100 s), so that a slow L1's guest booting quietly is not
		# taken for one that stopped.
		pace=$((gap > 30 ? gap : 30))
		look=$((${VMCTX_L1_SILENCE:-300} * pace / 30))
		stop=$((${VMCTX_L1_SILENCE_STOP:-600} * pace / 30))
		limit=$((budget * (pace > 30 * pace_max ? 30 * pace_max : pace) / 30))
		if [ -z "$over" ] && [ $((SECONDS - start)) -ge "$limit" ]; then
			over=1
			kill "$qemu" 2>/dev/null || true  # timeout passes it on
		fi
		# (and the guests' consoles growing, which the heartbeat says)
		if [ "$n" != "$lines" ] || [ "$g" != "$grown" ]; then
			[ -z "$looked" ] || log "L1 and its guests went on after $((SECONDS - heard)) s of silence: the look was no hang"
			lines=$n grown=$g heard=$SECONDS looked=
		elif [ -z "$looked" ] && [ $((SECONDS - heard)) -ge "$look" ]; then
			looked=1
			log "L1 and its guests have printed nothing but heartbeats for $((SECONDS - heard)) s (its last heartbeat $((SECONDS - beat)) s ago, its longest gap $gap s): looking where it is, stopping it at $stop s"
			where_l1 "$logf.regs.$try" "$qemu"
			# proven lost (the request, the vector pending five
			# seconds, the CPU allowed to take it): nothing in L1
			# can raise it again, so the silence is not waited out
			verdict=$(sed -n 's/^qemu-cpu-state: verdict: \(emulator .*\)/\1/p' "$logf.regs.$try.state" 2>/dev/null) || verdict=
			if [ -n "$verdict" ]; then
				silent=1
				log "stopping it now: the emulator lost L1's interrupt request, which nothing in L1 can raise again"
				kill "$qemu" 2>/dev/null || true
			fi
		elif [ -z "$silent" ] && [ $((SECONDS - heard)) -ge "$stop" ]; then
			silent=1
			log "L1 and its guests have printed nothing but heartbeats for $((SECONDS - heard)) s (its last heartbeat $((SECONDS - beat)) s ago): stopping it"
			kill "$qemu" 2>/dev/null || true
		fi
		sleep 2
	done
	wait "$qemu" || rc=$?
	resets=$(grep -c 'CPU Reset' "$logf.cpu-reset.$try" 2>/dev/null) || true
	triples=$(grep -c 'Triple fault' "$logf.cpu-reset.$try" 2>/dev/null) || true
	splat=$(sed 's/\r$//' "$logf" | grep -aE -m 1 "$L1_OOPS|^VMCTX-LAB: splat: " || true)
	if [ -n "$splat" ]; then
		outcome=l1-oops
		log "L1's kernel complained: $(sed 's/\r$//' "$logf" | grep -aE -m 3 "$L1_OOPS|^RIP:" | tr '\n' ' ')"
	elif [ -n "$silent" ] && [ $((SECONDS - beat)) -lt $((gap > 30 ? 3 * gap : 90)) ]; then
		# its heartbeat went on, at its own pace (30 s of L1's time, up
		# to 85 s of ours under the debug L1 beside a load)
		outcome=l1-stuck
		log "L1 was alive but its run made no progress; its threads at the last beats (running, waiting uninterruptibly, and the L2 QEMUs' in any state): $(grep -a '^VMCTX-LAB: heartbeat task' "$logf" | tail -n 16 | sed 's/^VMCTX-LAB: heartbeat task //; s/\r$//' | tr '\n' ';')"
	elif [ -n "$silent" ]; then
		outcome=l1-hung
	elif { [ -n "$over" ] || [ "$rc" = 124 ]; } && [ $((SECONDS - beat)) -lt $((gap > 30 ? 3 * gap : 90)) ] &&
	     ! grep -aq '^VMCTX-LAB: RESULT' "$logf"; then
		# the budget ran out (at L1's pace, or timeout's cap), and L1
		# was alive
		outcome=slow
		log "the boot ran out of its $limit s ($budget s at L1's pace, its heartbeats up to $gap s apart for 30 s) with L1 alive (its last heartbeat $((SECONDS - beat)) s before): too slow to judge; its last line: $(grep -av '^VMCTX-LAB: heartbeat' "$logf" | tail -n 1 | sed 's/\r$//')"
	elif ! grep -aq '^VMCTX-LAB: RESULT' "$logf"; then
		outcome=l1-died
		log "L1 stopped with no result line (QEMU exit status $rc; $resets CPU resets and $triples triple faults logged in $logf.cpu-reset.$try)"
	elif grep -aq '^VMCTX-LAB: GUEST-HUNG' "$logf"; then
		# (before the resets: a hung guest is stopped, which tails
		# then names as reset too)
		outcome=l2-hung
		log "an L2 guest hung: $(grep -a -m1 '^VMCTX-LAB: GUEST-HUNG' "$logf" | sed 's/^VMCTX-LAB: GUEST-HUNG //; s/\r$//')"
		# its own word on the tasks of a window that did not close
		# (guest-init.sh's stall report), for the run's last line
		stall=$(sed 's/\r$//' "$logf" | sed -n 's/^VMCTX-L2: stall: blocked: /blocked: /p' | head -n 1 | cut -c1-300)
		[ -z "$stall" ] || log "the guest's tasks then: $stall"
	elif grep -aq '^VMCTX-LAB: GUEST-RESET' "$logf"; then
		outcome=l2-reset
		# and the first line of its kernel's report, which the run's
		# summary shows (a CI log keeps no console)
		log "an L2 guest stopped before it said DONE: $(grep -a '^VMCTX-LAB: GUEST-RESET' "$logf" | sed 's/.* //; s/\r$//' | tr '\n' ' ')$(grep -aq '^VMCTX-LAB: L2 SHUTDOWN' "$logf" && echo ', after a triple fault')$(sed 's/\r$//' "$logf" | sed -n '/^-- guest[0-9]*, its kernel.s first report:$/{n;s/^\[ *[0-9.]*\] /; its kernel: /p;q}' | LC_ALL=C tr -d '\000-\037\177' | cut -c1-200)"
	elif grep -aq '^VMCTX-LAB: RESULT SLOW' "$logf"; then
		outcome=slow
		log "$(grep -a -m1 '^lab-linux-check: SLOW' "$logf" | sed 's/\r$//')"
	else
		outcome=ok
	fi
	# a guest's state that no CPU can hold: the emulator's
	case $outcome in
	l2-hung|l2-reset)
		verdict=$(impossible_rflags "$logf")
		[ -z "$verdict" ] || log "the guest's state shows $verdict"
		;;
	esac
	# QEMU's own word that its CPU state went wrong, whatever the outcome
	# (test/lab/qemu/vmexit-outside-guest.patch)
	local fault
	fault=$(grep -a -m1 ': an emulator fault' "$logf" | sed 's/^qemu-system-x86_64: //; s/\r$//') ||
		fault=
	[ -z "$fault" ] || log "QEMU reported a fault of its own in this boot: $fault"
}

# soak: VMCTX_SOAK_BOOTS boots of the perf run's shape (both guests, one
# after the other, churn, both agent backends) under 'perf record -a',
# with --vmcs-ctx on a patched L1 and without on a stock one; none is
# tried again.  Prints how each ended and the counts, which soak.sh
# judges against the stock L1's.
soak() {
	local n=${VMCTX_SOAK_BOOTS:-3} i t keys l1_id emu_id vmcs=1 ok=0 failed=0 oops=0 died=0 hung=0 stuck=0 l2=0 l2h=0 slow=0
	case $flavour in stock*) vmcs=0 ;; esac
	# what was booted: the L1 kernel's and the emulator's SHA-256 (short)
	l1_id=l1:$(sha256sum < "$l1" | cut -c1-12)
	emu_id=qemu:$(sha256sum < "$L1_QEMU" | cut -c1-12)
	keys="vmctx.pti=off vmctx.host=soak vmctx.vmcs=$vmcs vmctx.churn=${VMCTX_LINUX_CHURN:-60} vmctx.guests=$((1 + second))"
	for i in $(seq 1 "$n"); do
		t=$SECONDS
		logf=$RESULTS_DIR/soak-$flavour-$i.log
		log "soak boot $i of $n: $flavour L1 (${VMCTX_TCG:-tcg}), $([ "$second" = 1 ] && echo 'two Linux guests' || echo 'one Linux guest') under perf record$([ $vmcs = 1 ] && echo ' --vmcs-ctx') -a"
		# a soak judges faults, not speed: two emulators at once took up
		# to 823 s to the end of the recording, so 1800 s by default
		VMCTX_QEMU_TIMEOUT=${VMCTX_QEMU_TIMEOUT:-1800} boot_once "$logf" 1 $keys
		# (a boot that ran to its end but whose perf record failed is
		# none of these: counted as failed)
		[ $outcome = ok ] && ! grep -aq '^VMCTX-LAB: RESULT SOAK ' "$logf" && outcome=failed
		case $outcome in
		ok) ok=$((ok + 1)) ;;
		failed) failed=$((failed + 1)) ;;
		l1-oops) oops=$((oops + 1)) ;;
		l1-died) died=$((died + 1)) ;;
		l1-hung) hung=$((hung + 1)) ;;
		l1-stuck) stuck=$((stuck + 1)) ;;
		l2-reset) l2=$((l2 + 1)) ;;
		l2-hung) l2h=$((l2h + 1)) ;;
		slow) slow=$((slow + 1)) ;;
		esac
		echo "soak: boot $i $flavour: $outcome${verdict:+ [$verdict]} in $((SECONDS - t)) s, $resets CPU resets, $triples triple faults; $(grep -a -m1 '^VMCTX-LAB: RESULT' "$logf" | sed 's/\r$//; s/^VMCTX-LAB: //')"
		# the ledger: every soak boot, with what was booted, so that
		# boots of the same L1, emulator and shape add up across runs
		printf '%s %s %s %s cpus=%s tcg=%s shape=%s %s %s\n' "$(date -u +%FT%TZ)" "$flavour" "$l1_id" "$emu_id" \
			"${VMCTX_L1_CPUS:-1}" "${VMCTX_TCG:-tcg}" "${VMCTX_SOAK_SHAPE:-alone}" "$outcome" "$((SECONDS - t))" \
			>> "$LAB_DIR/soak-ledger"
	done
	echo "soak: $flavour L1, ${VMCTX_TCG:-tcg}, $n boots: $ok passed, $failed failed otherwise, $oops L1 oops, $died L1 died, $hung L1 hung, $stuck L1 stuck, $l2 with an L2 reset, $l2h with an L2 hang, $slow too slow to judge"
}

failures=0 failed_runs=()
if [ "${VMCTX_LINUX_RUNS:-}" = soak ]; then
	soak
	exit 0
fi
for pti in ${VMCTX_LINUX_RUNS:-on off chains dwarf readme}; do
	t=$SECONDS
	case $pti in
	on) keys="vmctx.pti=on vmctx.host=lab-record" ;;
	chains) keys="vmctx.pti=off vmctx.host=chains vmctx.secs=${VMCTX_LINUX_TREE_SECS:-8}" ;;
	dwarf) keys="vmctx.pti=off vmctx.host=dwarf vmctx.period=${VMCTX_LINUX_DWARF_PERIOD:-2000000} vmctx.secs=${VMCTX_LINUX_DWARF_SECS:-5}" ;;
	readme) keys="vmctx.pti=off vmctx.host=readme" ;;
	*) keys="vmctx.pti=$pti vmctx.host=perf vmctx.churn=${VMCTX_LINUX_CHURN:-60} vmctx.guests=$((1 + second)) vmctx.together=${VMCTX_LINUX_TOGETHER:-0}"
	   [ "${VMCTX_LINUX_COST:-0}" = 1 ] || keys="$keys vmctx.cost=0" ;;
	esac
	# VMCTX_LINUX_KEYS: more keys for L1 (a run that must fail:
	# vmctx.period=-1, which perf record refuses)
	keys="$keys ${VMCTX_LINUX_KEYS:-}"
	tries=1 how= outcome=ok splat=
	if [ "${VMCTX_LINUX_VMX:-0}" = 1 ]; then
		# Intel VMX (bochs' Haswell has PCID, which TCG does not give L1)
		logf=$RESULTS_DIR/linux-vmx-pti-$pti.log
		log "VMX: patched L1 on bochs, Linux L2 with pti=$pti"
		VMCTX_BOCHS_INITRD=$W/l1-initramfs.cpio.gz VMCTX_BOCHS_MEGS=1024 \
			"$LAB_SRC/boot-bochs.sh" "$l1" "$logf" $keys \
			vmctx.dump="${VMCTX_LINUX_DUMP:-0}"
	else
		logf=$RESULTS_DIR/linux-pti-$pti.log
		[ "$pti" = chains ] && logf=$RESULTS_DIR/linux-chains.log
		[ "$pti" = dwarf ] && logf=$RESULTS_DIR/linux-dwarf.log
		# perf-check runs here, on what L1 hands back on its second
		# serial port (check_handover above): natively, its perf runs
		# take a second where each took tens under the emulator
		[ "$pti" = off ] && keys="$keys vmctx.checks=host"
		# A boot that the emulator reset or hung (l1-died, l1-hung,
		# l2-reset, l2-hung, slow) is tried again with
		# VMCTX_LINUX_TRIES=N, up to N boots in all, each console kept
		# ($logf.tryN); by default, and always for an oops of L1's
		# kernel or a check that missed, it is not: on one L1 CPU the
		# emulator has not been seen to reset L1 or its guests
		# (test/lab/guest/README).  Two exceptions: an L1 that hung because the emulator did not
		# give it an interrupt its CPU could take (qemu-cpu-state.py's
		# verdict at the look: "emulator"), and an L2 guest whose kernel
		# died with an RFLAGS no CPU can hold (impossible_rflags), are
		# tried again, as many times as VMCTX_LINUX_EMU_TRIES (3) allows
		# in a run, and said: that fault was proven the emulator's, at
		# that boot, from its own state (test/lab/guest/README).  Each costs about 11
		# minutes (the look at 300 s of silence, which stops it, then
		# the boot).
		local_tries=${VMCTX_LINUX_TRIES:-1} emu_left=${VMCTX_LINUX_EMU_TRIES:-3} try=0
		while [ "$try" -lt "$local_tries" ]; do
			try=$((try + 1))
			log "SVM: patched L1, Linux L2 with pti=$pti (boot $try)"
			boot_once "$logf" "$try" $keys
			tries=$try
			emu=
			case $outcome in l1-hung|l2-reset|l2-hung) emu=$verdict ;; esac
			how="$how $outcome${emu:+ [$emu]}${stall:+ [$stall]}"
			case $outcome in ok|l1-oops) break ;; esac
			tail -n 5 "$logf" | sed 's/\r$//'
			cp "$logf" "$logf.try$try"
			if [ "$try" = "$local_tries" ] && [ -n "$emu" ] && [ "$emu_left" -gt 0 ]; then
				emu_left=$((emu_left - 1)) local_tries=$((local_tries + 1))
				log "the emulator's fault, as the state it left shows ($emu): trying this boot once more (this one's console is in $logf.try$try)"
			elif [ "$try" != "$local_tries" ]; then
				log "trying this boot again (this one's console is in $logf.try$try)"
			fi
		done
	fi
	if grep -aq '^VMCTX-LAB: RESULT HANDED-OVER linux chains' "$logf"; then
		t2=$SECONDS
		check_chains >> "$logf" 2>&1
		log "the checks on the lab's host took $((SECONDS - t2)) s"
	elif grep -aq '^VMCTX-LAB: RESULT HANDED-OVER linux dwarf' "$logf"; then
		t2=$SECONDS
		check_dwarf >> "$logf" 2>&1
		log "the checks on the lab's host took $((SECONDS - t2)) s"
	elif grep -aq '^VMCTX-LAB: RESULT HANDED-OVER' "$logf"; then
		t2=$SECONDS
		check_handover >> "$logf" 2>&1
		log "the checks on the lab's host took $((SECONDS - t2)) s"
	fi
	log "pti=$pti run took $((SECONDS - t)) s"
	# the module's and BPF's bundles of a guest whose two differed: kept,
	# to read with compare-bundles and vmctx-dump
	if grep -aq 'module/BPF bundles' "$logf" && [ -s "$W/handover.tgz" ]; then
		rm -rf "$W/differ" && mkdir -p "$W/differ" &&
			unpack_handover "$W/differ" >/dev/null &&
			cp "$W"/differ/handover/guest*.vmctx "$RESULTS_DIR/" &&
			log "the bundles that differ: $(cd "$W/differ/handover" && ls guest*.vmctx | sed "s|^|$RESULTS_DIR/|" | tr '\n' ' ')"
	fi
	grep -aE '^(VMCTX-LAB|VMCTX-L2|lab-linux-check|lab-record|perf-check|check-chains|check-dwarf|flame-check|perf-report-cost|readme:|# guest|----|vCPU|vcpu[0-9]|Steal)|^ +[0-9]+ +[0-9.]+ |^Total|^ +Samples' "$logf" |
		grep -avE '^lab-linux-check: (bundle task|root 0x)' | sed 's/\r$//' || true
	if grep -aq "^VMCTX-LAB: RESULT PASS" "$logf" && [ "${outcome:-ok}" = ok ]; then
		log "pti=$pti: ok$([ "$tries" -gt 1 ] && echo " at boot $tries (boots:$how)")"
	else
		log "pti=$pti: FAILED; console tail:"
		tail -n 30 "$logf" | sed 's/\r$//'
		failures=$((failures + 1))
		# (the last result line: the host's checks add theirs after L1's)
		# (none where L1 stopped before printing one: under pipefail the
		# grep's 1 must not end the script, or the runs after this one
		# never run and the reason is never printed)
		why=$(grep -a '^VMCTX-LAB: RESULT' "$logf" | tail -n 1 | sed 's/\r$//; s/^VMCTX-LAB: RESULT //') || why=
		# (a check that missed is not tried again: say so, as for a reset)
		if [ "${outcome:-ok}" = ok ]; then
			why="${why:-no result line} (boot $tries of $tries: a missed check is not tried again)"
			if [ "$tries" -gt 1 ]; then why="$why; boots:$how"; fi
		else
			why="the last of $tries boot(s) ended: $outcome${splat:+ ($splat)}; boots:$how"
		fi
		failed_runs+=("pti=$pti: $why; console $logf")
	fi
done
if [ "$failures" != 0 ]; then
	for r in "${failed_runs[@]}"; do log "FAILED $r"; done
	die "$failures Linux-guest run(s) failed: ${failed_runs[*]}"
fi
log "Linux-guest lab passed"
