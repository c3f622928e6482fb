#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# soak.sh: consecutive boots of the Linux-guest perf run, counted, on an
# unpatched L1 (the baseline) and on the patched one.
#
# Each boot is the shape that once crashed the patched L1 and that the
# emulator resets most: L1 (QEMU TCG, AMD SVM, 2 CPUs) runs Debian's 6.1
# guest (the module agent and BPF, 60 s of churn) then Debian's 6.12 guest
# (BPF), one after the other, under 'perf record -e cpu-clock -a', with
# --vmcs-ctx on the patched L1.  No check of perf's output: only how each
# boot ended (run-linux-lab.sh's boot_once: ok, L1 oops, L1 died, L1 hung,
# L2 reset, L2 hung).  No boot is tried again.
#
# Fails on any L1 oops, splat, death or hang of a patched L1, and on more
# boots with an L2 reset or hang than the baseline had, scaled to as many
# boots.  The baseline is the same boots on the stock L1 (build-kernel.sh
# stock: the same tree and config without the series), whose figures are
# printed beside; its own L1 deaths are the emulator's, and are printed,
# not failed on.
#
# Environment (and lab-env.sh's):
#   VMCTX_SOAK_BOOTS   boots of each L1 (default 2; 'make soak' 10)
#   VMCTX_SOAK_L1      the L1s, baseline first (default "stock patched";
#                      "debug" is the patched L1 with lockdep and KASAN)
#   VMCTX_SOAK_LOAD    1: a CPU-bound loop beside the emulator all along,
#                      as a loaded machine has
#   VMCTX_TCG          QEMU's -accel options (default tcg: multi-threaded)
set -euo pipefail
. "$(dirname "$0")/../lab-env.sh"

boots=${VMCTX_SOAK_BOOTS:-2}
l1s=${VMCTX_SOAK_L1:-stock patched}
mkdir -p "$RESULTS_DIR"
load=
if [ "${VMCTX_SOAK_LOAD:-0}" = 1 ]; then
	sh -c 'while :; do :; done' &
	load=$!
	trap 'kill $load 2>/dev/null || true' EXIT
	log "a CPU-bound loop runs beside the emulator (pid $load)"
fi

base_l2= base_boots= bad=0 lines=()
for f in $l1s; do
	out=$RESULTS_DIR/soak-$f.out
	max=$boots
	if [ "$f" != stock ] && [ -n "$base_l2" ]; then
		# the baseline's rate of boots with an L2 reset or hang, in
		# as many boots, rounded up
		max=$(( (base_l2 * boots + base_boots - 1) / base_boots ))
	fi
	rc=0
	log "the $f L1: $boots boots (its log: $out)"
	VMCTX_LINUX_RUNS=soak VMCTX_LINUX_L1=$f VMCTX_SOAK_BOOTS=$boots VMCTX_SOAK_MAX_L2=$max \
		"$LAB_SRC/guest/run-linux-lab.sh" > "$out" 2>&1 || rc=$?
	grep -aE '^soak:|L1.s kernel complained|ERROR' "$out" || :
	sum=$(grep -a '^soak: .* boots: ' "$out" | tail -n 1)
	[ -n "$sum" ] || { log "the $f soak printed no counts; see $out"; bad=1; continue; }
	lines+=("$sum")
	l2=$(echo "$sum" | sed -n 's/.* \([0-9]*\) with an L2 reset, \([0-9]*\) with an L2 hang$/\1 \2/p')
	if [ "$f" = stock ]; then
		base_l2=$(( ${l2% *} + ${l2#* } )) base_boots=$boots
		continue	# the baseline: the emulator's rate, not a verdict
	fi
	if [ "$rc" != 0 ]; then
		bad=1
		log "the $f L1 failed the soak (at most $max boots with an L2 reset or hang allowed)"
	fi
done
echo "soak: summary ($boots boots each$([ -n "$load" ] && echo ', a second CPU load beside'), ${VMCTX_TCG:-tcg}):"
for l in "${lines[@]}"; do echo "  $l"; done
[ $bad = 0 ] || die "the soak failed; consoles in $RESULTS_DIR/soak-*.log"
log "the soak passed"
