#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install what the lab needs on Debian 12 (run as root, noninteractive).
set -euo pipefail

pkgs=(linux-source-6.12 build-essential flex bison bc cpio ccache quilt
      libelf-dev libssl-dev busybox-static qemu-system-x86
      bochs bochsbios vgabios isolinux syslinux-common xorriso xz-utils
      seabios zlib1g-dev libdeflate-dev
      # build-qemu.sh: Debian's QEMU source (dpkg-dev unpacks it), built
      # with its fix for L1's lost timer interrupt
      dpkg-dev meson ninja-build libglib2.0-dev libpixman-1-dev libfdt-dev
      # build-perf.sh: perf (libdw for DWARF, Debian's libtraceevent 1.7,
      # pkg-config for both and libvmctx) and libvmctx (autotools, only
      # when its configure has to be generated); no python3, as perf is
      # built without libpython and without the JSON event tables
      libdw-dev libtraceevent-dev pkg-config autoconf automake libtool
      # a second perf with libunwind's unwinder, as Debian builds it
      libunwind-dev
      # test/perf/run-checks.sh writes its synthetic perf.data with python3
      python3
      # where_l1 (run-linux-lab.sh): where a silent L1's QEMU threads are
      gdb
      # experiment 6 records kvm_exit with trace-cmd too, for plugin_vmctx
      trace-cmd
      # the Linux guest runs Debian's kernel package: depmod and modprobe
      # index and pick its modules
      kmod
      # vmctx-agent's BPF backend in the Linux guests: the BPF program
      # (clang), its skeleton (bpftool) and libbpf, linked statically
      clang libbpf-dev bpftool
      # perf's TUI (libslang), driven under tmux by the machine checks;
      # Debian's own perf (linux-perf, 6.1), which must read what perf
      # inject --guest-maps writes
      libslang2-dev tmux linux-perf
      # hotspot's parser, which must read what perf inject
      # --guest-processes writes
      hotspot
      # the machine checks' hostile tenants: both perfs under valgrind and
      # strace (no perf opens a path a guest gave)
      valgrind strace
      # the chain run's flame graph: go tool pprof -http, drawn by headless
      # Chromium (with a font for its labels)
      golang-go chromium fonts-liberation)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#pkgs[@]} packages present"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
