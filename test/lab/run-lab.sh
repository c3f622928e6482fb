#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run-lab.sh: the whole vmctx lab, from an empty Debian 12 machine (as root).
#
#   install packages -> unpack linux-source-6.12 and apply kernel-patches/ ->
#   tinyconfig + l1.config -> build (ccache) -> lab programs -> initramfs ->
#   build the patched perf and check it on synthetic perf.data ->
#   boot the patched L1 on AMD SVM (QEMU TCG) and Intel VMX (bochs), run the
#   test VMM under the recorder, check the samples against ground truth ->
#   boot it again on SVM for the paper's experiments 1-5 with the patched
#   perf (experiments.sh, lab-exp-check); the VMX boot also runs experiment
#   2, and with VMCTX_LAB_BENCH=1 the overhead benchmark
#   (test/bench/lab-overhead.sh: bochs' clock follows its instruction
#   count, so its timings repeat) ->
#   boot a stock L1 (SVM): the new bit must fail with EINVAL, and measure
#   stock perf's guest user/kernel mislabel ->
#   the Linux-guest lab (guest/run-linux-lab.sh): a real Linux L2 with
#   vmctx_guest.ko and vmctx-agent, resolved through its bundle: PTI off
#   (its second guest's on) and the call chains on SVM, PTI on with PCID
#   on VMX ->
#   with VMCTX_LAB_SOAK=N, the soak (guest/soak.sh): the perf run's shape
#   booted on a stock L1 and on the patched one at once, N boots each,
#   counted (make soak: ten).  Benchmarks and the soak are measurements,
#   not checks: make check-lab leaves them out.
#
# The VMX part (the bochs boot, then the Linux guest on VMX) runs beside
# the SVM part from the SVM experiments on: bochs takes one host thread.
#
# Exits 0 only if every check passed.  Its environment variables (which
# parts to run, where to build) are in the Knobs table of test/lab/README.
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

want_bochs=${VMCTX_LAB_BOCHS:-1}
want_stock=${VMCTX_LAB_STOCK:-1}
want_stock_bochs=${VMCTX_LAB_STOCK_BOCHS:-0}
failures=0
failed_parts=() failed_whys=()
# failed PART [WHY...]: count a failed part and remember its name for the
# last line, and why it failed (the lines that say so) for the lines before
# it: a log read from its end (CI's tail) shows them with no search
failed() {
	failures=$((failures + 1))
	failed_parts+=("$1")
	shift
	local w
	for w in "$@"; do failed_whys+=("$w"); done
}
# whys FILE: the lines of a part's output that say why it failed
whys() {
	grep -aE '\] FAILED |: RESULT FAIL|^perf-check: FAIL|^run-checks: FAIL|^machine-checks: FAIL|^not ok|: FAILED|: an emulator fault|an L2 guest stopped before' "$1" 2>/dev/null | sed 's/\r$//' | tail -n 20 || true
}
start=$SECONDS

mkdir -p "$LAB_DIR" "$RESULTS_DIR"

# report NAME LOG: show the L1's lab lines, return 0 if it passed
report() {
	local name=$1 logf=$2 want=$3

	echo "---- $name ($logf)"
	grep -aE '^(VMCTX-LAB|lab-check|lab-chain-check|lab-record|lab-leak|lab-vmm|lab-exp|lab-bench|# |Total samples|vCPU  |vcpu[0-9]|Steal by| +[0-9]+ +[0-9.]+  | +[0-9.]+%)|: an emulator fault' \
		"$logf" | sed 's/\r$//' || true
	if grep -aq "^VMCTX-LAB: RESULT $want" "$logf"; then
		echo "---- $name: ok"
		return 0
	fi
	echo "---- $name: FAILED (no 'RESULT $want' line; console tail follows)"
	tail -n 20 "$logf" | sed 's/\r$//'
	return 1
}

log "lab directory $LAB_DIR"
"$LAB_SRC/install-deps.sh"
"$LAB_SRC/build-qemu.sh"
"$LAB_SRC/build-kernel.sh" patched
"$LAB_SRC/build-tools.sh"
"$LAB_SRC/build-perf.sh"
"$LAB_SRC/build-initramfs.sh"
patched=$LAB_DIR/out/patched/arch/x86/boot/bzImage

log "the perf patches on synthetic perf.data, on this machine (test/perf/run-checks.sh)"
PERF=$LAB_DIR/out/perf/perf PERF_NO_LIBVMCTX=$LAB_DIR/out/perf-nolibvmctx/perf \
	PERF_LIBUNWIND=$LAB_DIR/out/perf-libunwind/perf \
	PKG_CONFIG_PATH=$LAB_DIR/vmctx/lib/pkgconfig \
	LD_LIBRARY_PATH=$LAB_DIR/vmctx/lib sh "$REPO_TOP/test/perf/run-checks.sh" ||
	failed "perf checks"
log "guests as perf machines: filters, script, TUI, perf inject and Debian's perf (test/perf/machine-checks.sh)"
PERF=$LAB_DIR/out/perf/perf PKG_CONFIG_PATH=$LAB_DIR/vmctx/lib/pkgconfig \
	LD_LIBRARY_PATH=$LAB_DIR/vmctx/lib sh "$REPO_TOP/test/perf/machine-checks.sh" ||
	failed "perf machine checks"

# The L1 emulator first (test/lab/README, "The L1 emulator"): the first
# recording ten times with its vCPUs on CPU 0 and FLDENV in a loop on
# CPU 1 (lab-fpu-load).  A QEMU without ignne-atomic.patch loses a vCPU's
# state in the first runs, or hangs (the timeout); every part after this
# would then fail now and then for the emulator's sake, not vmctx's.
log "SVM: the L1 emulator, the first recording beside an FLDENV loop"
t=$SECONDS
VMCTX_QEMU_TIMEOUT=${VMCTX_EMU_TIMEOUT:-300} "$LAB_SRC/boot-qemu.sh" "$patched" \
	"$RESULTS_DIR/svm-emulator.log" vmctx.mode=repeat vmctx.reps=10 vmctx.fpu_load=1
log "emulator check took $((SECONDS - t)) s"
report "L1 emulator" "$RESULTS_DIR/svm-emulator.log" "REPEAT-DONE isa=svm failed=0" ||
	failed "L1 emulator"

log "SVM: patched L1 on $L1_QEMU -accel tcg -cpu max"
t=$SECONDS
"$LAB_SRC/boot-qemu.sh" "$patched" "$RESULTS_DIR/svm-patched.log" \
	vmctx.mode=patched vmctx.secs="${VMCTX_LAB_SECS:-3}"
log "SVM boot took $((SECONDS - t)) s"
report "SVM patched" "$RESULTS_DIR/svm-patched.log" PASS || failed "SVM patched"

# Experiments 1 and 2 check perf's shares against the time the guest
# measured its functions to take (TSC ticks in each busy loop), which under
# TCG strays from the mix the guest was built with by up to 6 points from
# boot to boot.  A boot that misses is tried again, up to VMCTX_EXP_TRIES
# times (3), each try's console kept (svm-experiments.log.tryN): the
# emulator has triple-faulted or hung a boot now and then, and a check may
# miss by chance; an error of vmctx's own would miss in every try.
log "SVM: the paper's experiments with the patched perf"
exp_ok=0 exp_tries=${VMCTX_EXP_TRIES:-3}
for try in $(seq "$exp_tries"); do
	t=$SECONDS
	"$LAB_SRC/boot-qemu.sh" "$patched" "$RESULTS_DIR/svm-experiments.log" \
		vmctx.mode=experiments vmctx.secs="${VMCTX_EXP_SECS:-8}" vmctx.period=1000000
	log "experiments boot took $((SECONDS - t)) s (try $try of $exp_tries)"
	if report "SVM experiments" "$RESULTS_DIR/svm-experiments.log" EXPERIMENTS-PASS; then
		exp_ok=1
		break
	fi
	cp "$RESULTS_DIR/svm-experiments.log" "$RESULTS_DIR/svm-experiments.log.try$try"
	[ "$try" -lt "$exp_tries" ] &&
		log "the experiments failed in try $try (console in svm-experiments.log.try$try); trying again"
done
[ $exp_ok = 1 ] || failed "SVM experiments"
log "experiment 2's pprof export, read by go tool pprof here"
"$LAB_SRC/pprof-check.sh" "$RESULTS_DIR/svm-experiments.log" exp2 || failed "pprof export"

# The VMX part: the patched L1 on bochs, then (the Linux-guest lab) a
# Linux guest with PTI on and PCID under it.  bochs runs on one host
# thread, so it runs beside the SVM part below, in the background, its
# output in vmx-part.out, shown at the end; its status bits: 1 the VMX
# boot failed, 2 the Linux guest on VMX.
vmx_part() {
	local rc=0 t=$SECONDS

	log "VMX: patched L1 on bochs corei7_haswell_4770"
	# VMCTX_LAB_BENCH=1: the benchmark's 20 runs once each (about 5 minutes
	# more; bochs' times repeat, so the fastest of several runs adds little)
	VMCTX_BOCHS_TIMEOUT=${VMCTX_BOCHS_TIMEOUT:-1200} "$LAB_SRC/boot-bochs.sh" "$patched" "$RESULTS_DIR/vmx-patched.log" \
		vmctx.mode=patched vmctx.secs="${VMCTX_LAB_SECS:-2}" vmctx.also=2,6 vmctx.exp_secs=2 \
		vmctx.bench="${VMCTX_LAB_BENCH:-0}" vmctx.bench_rounds=100 vmctx.bench_reps=1
	log "VMX boot took $((SECONDS - t)) s"
	report "VMX patched" "$RESULTS_DIR/vmx-patched.log" PASS || rc=1
	[ "${VMCTX_LAB_LINUX:-1}" = 1 ] || return $rc
	# the Linux guest once more on Intel VMX, whose Haswell gives the
	# guest PCID; in its own work directory, beside the SVM runs'
	t=$SECONDS
	log "the Linux-guest lab on VMX"
	VMCTX_LINUX_WORK=$LAB_DIR/linux-vmx VMCTX_LINUX_VMX=1 VMCTX_LINUX_RUNS=on \
		"$LAB_SRC/guest/run-linux-lab.sh" || rc=$((rc | 2))
	log "Linux-guest lab on VMX took $((SECONDS - t)) s"
	return $rc
}
vmx_pid=
if [ "$want_bochs" = 1 ]; then
	log "the VMX part runs beside, on bochs (its output: $RESULTS_DIR/vmx-part.out, shown at the end)"
	vmx_part > "$RESULTS_DIR/vmx-part.out" 2>&1 &
	vmx_pid=$!
fi

if [ "${VMCTX_LAB_DEBUG:-0}" = 1 ]; then
	"$LAB_SRC/build-kernel.sh" debug
	log "SVM: debug L1 (lockdep, KASAN, UBSAN)"
	t=$SECONDS
	VMCTX_QEMU_TIMEOUT=900 "$LAB_SRC/boot-qemu.sh" "$LAB_DIR/out/debug/arch/x86/boot/bzImage" \
		"$RESULTS_DIR/svm-debug.log" vmctx.mode=patched vmctx.secs="${VMCTX_LAB_SECS:-3}"
	log "debug boot took $((SECONDS - t)) s"
	if report "SVM debug" "$RESULTS_DIR/svm-debug.log" PASS &&
	   grep -aq '^VMCTX-LAB: kernel splats: 0' "$RESULTS_DIR/svm-debug.log"; then
		:
	else
		grep -aE -B2 -A12 'WARNING:|BUG:|KASAN:|UBSAN:|possible circular|inconsistent lock|suspicious RCU' \
			"$RESULTS_DIR/svm-debug.log" | head -n 60
		failed "SVM debug"
	fi
fi

# stock_l1: boot Debian's own 6.12 kernel package as the stock L1 (no build);
# where it cannot be had or does not boot, build a stock 6.12 and boot that
stock_initrd=$LAB_DIR/initramfs.cpio.gz
stock_l1() {
	local files

	if [ "${VMCTX_LAB_STOCK_BUILD:-0}" != 1 ] && files=$("$LAB_SRC/stock-debian.sh"); then
		stock=$(sed -n 1p <<<"$files")
		stock_initrd=$(sed -n 2p <<<"$files")
		log "SVM: stock L1, Debian's $(basename "$stock") (EINVAL probe, CPL label figure)"
		VMCTX_QEMU_INITRD=$stock_initrd "$LAB_SRC/boot-qemu.sh" "$stock" \
			"$RESULTS_DIR/svm-stock.log" vmctx.mode=stock vmctx.secs="${VMCTX_LAB_SECS:-3}"
		report "SVM stock" "$RESULTS_DIR/svm-stock.log" STOCK-DONE && return 0
		log "Debian's kernel did not pass as the stock L1; building a stock 6.12 instead"
	fi
	"$LAB_SRC/build-kernel.sh" stock
	stock=$LAB_DIR/out/stock/arch/x86/boot/bzImage
	stock_initrd=$LAB_DIR/initramfs.cpio.gz
	log "SVM: stock L1, built from linux-source-6.12 (EINVAL probe, CPL label figure)"
	"$LAB_SRC/boot-qemu.sh" "$stock" "$RESULTS_DIR/svm-stock.log" \
		vmctx.mode=stock vmctx.secs="${VMCTX_LAB_SECS:-3}"
	report "SVM stock" "$RESULTS_DIR/svm-stock.log" STOCK-DONE
}

if [ "$want_stock" = 1 ]; then
	stock_l1 || failed "SVM stock"
	if [ "$want_stock_bochs" = 1 ]; then
		VMCTX_BOCHS_INITRD=$stock_initrd "$LAB_SRC/boot-bochs.sh" "$stock" "$RESULTS_DIR/vmx-stock.log" \
			vmctx.mode=stock vmctx.secs="${VMCTX_LAB_SECS:-2}"
		report "VMX stock" "$RESULTS_DIR/vmx-stock.log" STOCK-DONE ||
			failed "VMX stock"
	fi
fi

if [ "${VMCTX_LAB_LINUX:-1}" = 1 ]; then
	log "the Linux-guest lab"
	t=$SECONDS
	# PTI on is the VMX run's (below, with PCID) and the PTI-off run's
	# second guest's (without): SVM's own PTI-on run only without bochs
	svm_runs="off chains dwarf readme"
	[ "$want_bochs" = 1 ] || svm_runs="on off chains dwarf readme"
	VMCTX_LINUX_RUNS=${VMCTX_LINUX_RUNS:-$svm_runs} "$LAB_SRC/guest/run-linux-lab.sh" 2>&1 |
		tee "$RESULTS_DIR/linux-svm.out" ||
		{ mapfile -t w < <(whys "$RESULTS_DIR/linux-svm.out"); failed "Linux guest (SVM)" "${w[@]}"; }
	log "Linux-guest lab took $((SECONDS - t)) s"
	# VMCTX_LAB_SOAK=N: N boots of the perf run's shape on a stock L1 and
	# on the patched one at once, counted (guest/soak.sh)
	if [ "${VMCTX_LAB_SOAK:-0}" != 0 ]; then
		t=$SECONDS
		VMCTX_SOAK_BOOTS=$VMCTX_LAB_SOAK VMCTX_SOAK_TOGETHER=1 "$LAB_SRC/guest/soak.sh" ||
			failed "soak"
		log "the soak took $((SECONDS - t)) s"
	fi
fi

if [ -n "$vmx_pid" ]; then
	vmx_rc=0
	wait "$vmx_pid" || vmx_rc=$?
	echo "---- the VMX part, which ran beside ($RESULTS_DIR/vmx-part.out):"
	cat "$RESULTS_DIR/vmx-part.out"
	# (the part's lines once, with its first failure)
	mapfile -t w < <(whys "$RESULTS_DIR/vmx-part.out")
	[ $((vmx_rc & 1)) = 0 ] || { failed "VMX patched" "${w[@]}"; w=(); }
	[ $((vmx_rc & 2)) = 0 ] || failed "Linux guest (VMX)" "${w[@]}"
	[ "$vmx_rc" -lt 4 ] || failed "the VMX part (status $vmx_rc)"
fi

[ ${#failed_whys[@]} = 0 ] || { log "why the failed parts failed (their lines above):"; printf '    %s\n' "${failed_whys[@]}"; }
log "lab finished in $((SECONDS - start)) s with $failures failure(s)${failed_parts:+: $(IFS=,; echo "${failed_parts[*]}" | sed 's/,/, /g')}"
[ "$failures" -eq 0 ]
