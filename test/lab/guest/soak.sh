#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# soak.sh: consecutive boots of the Linux-guest perf run, counted, on an
# unpatched L1 (the baseline) and on the patched one.
#
# Each boot is the shape that once crashed the patched L1 and that the
# emulator resets most: L1 (QEMU TCG, AMD SVM, 2 CPUs) runs Debian's 6.1
# guest (the module agent and BPF, 60 s of churn) then Debian's 6.12 guest
# (BPF), one after the other, under 'perf record -e cpu-clock -a', with
# --vmcs-ctx on the patched L1, and on the stock one with what --vmcs-ctx
# records besides the guest context.  No check of perf's output: only how
# each boot ended (run-linux-lab.sh's boot_once: ok, L1 oops, L1 died, L1
# hung, L2 reset, L2 hung).  No boot is tried again.
#
# Fails on any oops or splat of a patched L1 (a kernel's report is never
# the emulator's), on a perf record that failed, and on more boots in
# which L1 died, hung or stuck, or in which an L2 guest reset or hung,
# than the baseline had, by more than VMCTX_SOAK_SLACK (1): the emulator
# (QEMU 7.2's multi-threaded TCG, nested SVM, with two L1 CPUs) resets,
# triple-faults and hangs an unpatched L1 and its guests too, on a
# loaded machine in about one boot in two, and with one L1 CPU (the
# lab's default, VMCTX_L1_CPUS) has hung one L1 in six boots
# (test/lab/guest/README): a few boots cannot tell one such fault more
# from a bug.  The baseline is the same boots on the
# stock L1 (build-kernel.sh stock: the same tree and config without the
# series), whose figures are printed beside, not failed on.
#
# Environment (and lab-env.sh's):
#   VMCTX_SOAK_BOOTS     boots of each L1 (default 2; 'make soak' 10)
#   VMCTX_SOAK_L1        the L1s, the baseline first (default "stock
#                        patched"; "debug" is the patched L1 with lockdep
#                        and KASAN, "stock-debug" the stock one with the
#                        same: "stock-debug debug" compares those two; a
#                        stock flavour is the baseline of those after it)
#   VMCTX_SOAK_TOGETHER  1: the L1s boot at once, each the other's load
#                        (each in its own work directory)
#   VMCTX_SOAK_LOAD      1: a CPU-bound loop beside the emulators all along
#   VMCTX_SOAK_SLACK     boots of each kind of fault the patched L1 may
#                        have beyond the baseline's (default 1)
#   VMCTX_LINUX_SECOND   0: Debian's 6.1 guest alone, without the 6.12 one
#   VMCTX_LINUX_CHURN    the guests' seconds of churn (default 60)
#                        (these two make a lighter boot, for the debug L1,
#                        which runs at a fraction of the pace: a shape of
#                        its own in the ledger)
#   VMCTX_TCG            QEMU's -accel options (default tcg: multi-threaded)
#   VMCTX_L1_CPUS        L1's CPUs (default 1; 2 shows the emulator's faults)
#
# Every boot also goes into the ledger, $LAB_DIR/soak-ledger (one line a
# boot: when, the L1 flavour, the L1 kernel's and the emulator's SHA-256,
# L1's CPUs, the TCG mode, the soak's shape, the outcome, the seconds), so
# that boots of one L1 on one emulator in one shape add up over several
# runs (a boot of the Linux-guest lab takes 10 to 13 minutes beside
# another); the summary gives the ledger's totals for what this run
# booted, how many of its last boots in a row ended ok, and each L1's
# rates of boots with an L1 fault and with an L2 reset or hang.
set -euo pipefail
. "$(dirname "$0")/../lab-env.sh"

boots=${VMCTX_SOAK_BOOTS:-2}
l1s=${VMCTX_SOAK_L1:-stock patched}
together=${VMCTX_SOAK_TOGETHER:-0}
mkdir -p "$RESULTS_DIR"
load=
# the shape, for the ledger: the L1s at once or one after the other, and
# whether a loop ran beside
shape=alone
[ "$together" = 1 ] && shape=together
[ "${VMCTX_SOAK_LOAD:-0}" != 1 ] || shape=$shape+loop
[ "${VMCTX_LINUX_SECOND:-1}" = 1 ] || shape=$shape+one-guest
[ "${VMCTX_LINUX_CHURN:-60}" = 60 ] || shape=$shape+churn${VMCTX_LINUX_CHURN}
if [ "${VMCTX_SOAK_LOAD:-0}" = 1 ]; then
	sh -c 'while :; do :; done' &
	load=$!
	trap 'kill $load 2>/dev/null || true' EXIT
	log "a CPU-bound loop runs beside the emulator (pid $load)"
fi

# run_one FLAVOUR: its boots, its log in $RESULTS_DIR/soak-FLAVOUR.out
run_one() {
	local f=$1 work=
	[ "$together" = 1 ] && work=$LAB_DIR/linux-soak-$f
	log "the $f L1: $boots boots (its log: $RESULTS_DIR/soak-$f.out)"
	VMCTX_LINUX_RUNS=soak VMCTX_LINUX_L1=$f VMCTX_SOAK_BOOTS=$boots VMCTX_SOAK_SHAPE=$shape \
		VMCTX_LINUX_WORK=$work "$LAB_SRC/guest/run-linux-lab.sh" > "$RESULTS_DIR/soak-$f.out" 2>&1 || :
	grep -aE '^soak:|kernel complained|ERROR' "$RESULTS_DIR/soak-$f.out" || :
}
pids=()
for f in $l1s; do
	if [ "$together" = 1 ]; then
		run_one "$f" &
		pids+=($!)
		sleep 60	# (their builds and packing one after the other)
	else
		run_one "$f"
	fi
done
# each L1 on its own: one stopped from outside (killed) still leaves the
# others' counts and the ledger's summary below
for p in "${pids[@]}"; do
	wait "$p" || log "the soak of one L1 (pid $p) ended with status $?"
done

# count N WHAT LINE: the number before WHAT in a summary line
count() { sed -n "s/.* \([0-9]*\) $1.*/\1/p" <<<"$2"; }
slack=${VMCTX_SOAK_SLACK:-1}
base_l1= base_l2= bad=0 lines=()
for f in $l1s; do
	# (a stopped L1's log has no such line: under pipefail, no exit here)
	sum=$(grep -a '^soak: .* boots: ' "$RESULTS_DIR/soak-$f.out" | tail -n 1) || sum=
	if [ -z "$sum" ]; then
		log "the $f soak printed no counts; see $RESULTS_DIR/soak-$f.out"
		bad=1
		continue
	fi
	lines+=("$sum")
	l1=$(( $(count 'L1 died' "$sum") + $(count 'L1 hung' "$sum") + $(count 'L1 stuck' "$sum") ))
	l2=$(( $(count 'with an L2 reset' "$sum") + $(count 'with an L2 hang' "$sum") ))
	if [ "${f#stock}" != "$f" ]; then
		base_l1=$l1 base_l2=$l2 base_f=$f	# the baseline: the emulator's rate
		continue
	fi
	if [ "$(count 'L1 oops' "$sum")" != 0 ]; then
		bad=1
		log "FAILED: the $f L1's kernel complained in $(count 'L1 oops' "$sum") of $boots boots"
	fi
	if [ "$(count 'failed otherwise' "$sum")" != 0 ]; then
		bad=1
		log "FAILED: perf record failed on the $f L1 in $(count 'failed otherwise' "$sum") of $boots boots"
	fi
	if [ -z "$base_l1" ]; then
		[ $((l1 + l2)) = 0 ] || log "no stock baseline: the $f L1's $l1 deaths or hangs and $l2 guest faults are not judged"
		continue
	fi
	if [ "$l1" -gt $((base_l1 + slack)) ]; then
		bad=1
		log "FAILED: the $f L1 died, hung or stuck in $l1 of $boots boots, the $base_f L1 in $base_l1"
	fi
	if [ "$l2" -gt $((base_l2 + slack)) ]; then
		bad=1
		log "FAILED: an L2 guest reset or hung in $l2 of $boots boots of the $f L1, of the $base_f L1 in $base_l2"
	fi
done
echo "soak: summary ($boots boots each, slack $slack$([ "$together" = 1 ] && echo ', the L1s at once')$([ -n "$load" ] && echo ', a second CPU load beside'), ${VMCTX_TCG:-tcg}):"
for l in "${lines[@]}"; do echo "  $l"; done
# the ledger's totals for what this run booted, and its rates of L1 and
# L2 faults, a stock flavour's the baseline of those after it
for f in $l1s; do
	k=$LAB_DIR/out/$f/arch/x86/boot/bzImage
	[ -f "$k" ] || continue
	id="$f l1:$(sha256sum < "$k" | cut -c1-12) qemu:$(sha256sum < "$L1_QEMU" | cut -c1-12) cpus=${VMCTX_L1_CPUS:-1} tcg=${VMCTX_TCG:-tcg} shape=$shape"
	awk -v id="$id" -v f="$f" '{ k = $2 " " $3 " " $4 " " $5 " " $6 " " $7 }
		k == id { n++; c[$8]++; run = ($8 == "ok") ? run + 1 : 0; if (!first) first = $1; last = $1 }
		END { if (!n) exit
		      s = ""; for (o in c) s = s (s == "" ? "" : ", ") c[o] " " o
		      printf "  ledger: %s: %d boots from %s to %s: %s; the last %d in a row ok\n", id, n, first, last, s, run
		      l1 = c["l1-oops"] + c["l1-died"] + c["l1-hung"] + c["l1-stuck"]
		      l2 = c["l2-reset"] + c["l2-hung"]
		      printf "  rates: %s L1: an L1 oops, death or hang in %d of %d boots (%.1f%%), an L2 reset or hang in %d (%.1f%%)\n",
			     f, l1, n, 100 * l1 / n, l2, 100 * l2 / n }' \
		"$LAB_DIR/soak-ledger" 2>/dev/null || :
done
[ $bad = 0 ] || die "the soak failed; consoles in $RESULTS_DIR/soak-*.log"
log "the soak passed"
