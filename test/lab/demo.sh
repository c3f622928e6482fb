#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# demo.sh: vmctx in one command (./run demo).  Builds the lab (the patched
# kernel, the patched perf, the test VMM), boots the patched kernel as a KVM
# host on emulated AMD SVM (QEMU TCG), and there runs the paper's
# experiment 4 (three VMs share one pCPU) and experiment 2 (two instances of
# one program in a VM) under
#
#   perf record --vmcs-ctx -e cpu-clock -C 0 ...
#   perf report --guest-maps=PID=guestN.vmctx,... --guest-view=host|guest|unified
#
# and prints perf's tables, with the checks of each experiment (see
# experiments.sh).  Then two real Linux guests, Debian's 6.1 and 6.12
# kernels (guest/run-linux-lab.sh, the user's path: vmctx-agent record in
# each guest, perf record --vmcs-ctx -a and perf report
# --guest-maps=guest1=FILE,guest2=FILE in the host) run two instances of
# a dynamically linked program each, and guest1 hundreds of 20 ms
# processes; each guest's guest-level table and checks are printed.  About 15 minutes on a fresh machine (kernel and perf builds),
# a few minutes once built.  Environment as in lab-env.sh, plus
# VMCTX_DEMO_EXPS (default "4,2"), VMCTX_EXP_SECS (default 8) and
# VMCTX_DEMO_LINUX (default 1; 0 leaves the Linux guest out).
set -euo pipefail
. "$(dirname "$0")/lab-env.sh"

mkdir -p "$LAB_DIR" "$RESULTS_DIR"
"$LAB_SRC/install-deps.sh"
"$LAB_SRC/build-qemu.sh"
"$LAB_SRC/build-kernel.sh" patched
"$LAB_SRC/build-tools.sh"
# (not the perf variants that only the lab's checks read, here nor in
# run-linux-lab.sh)
export VMCTX_PERF_VARIANTS=0
"$LAB_SRC/build-perf.sh"
"$LAB_SRC/build-initramfs.sh"
logf=$RESULTS_DIR/demo.log
log "booting the patched kernel as a KVM host (QEMU TCG, AMD SVM); experiments ${VMCTX_DEMO_EXPS:-4,2}"
"$LAB_SRC/boot-qemu.sh" "$LAB_DIR/out/patched/arch/x86/boot/bzImage" "$logf" \
	vmctx.mode=experiments vmctx.exps="${VMCTX_DEMO_EXPS:-4,2}" \
	vmctx.secs="${VMCTX_EXP_SECS:-8}" vmctx.period=1000000 vmctx.bench=0
# perf's tables and the checks, without the kernel's boot chatter
# (without the base64 of experiment 2's pprof export: pprof-check.sh's)
sed -n '/^lab-exp: ====/,/^VMCTX-LAB: RESULT/p' "$logf" | sed 's/\r$//' |
	sed '/^VMCTX-LAB-FILE-BEGIN/,/^VMCTX-LAB-FILE-END/d'
log "console log: $logf"
# missed: each part that failed, with where its console is; why: the
# same, short, for the last line
missed=() why=()
if ! grep -aq '^VMCTX-LAB: RESULT EXPERIMENTS-PASS' "$logf"; then
	w=$(grep -a -m1 '^VMCTX-LAB: RESULT' "$logf" | sed 's/\r$//; s/^VMCTX-LAB: RESULT //') || w='no result line'
	missed+=("the tiny-guest experiments: $w (console $logf)")
	why+=("the tiny-guest experiments: $w")
fi

if [ "${VMCTX_DEMO_LINUX:-1}" = 1 ]; then
	log "two real Linux guests under the same host (Debian's 6.1 and 6.12 kernels): vmctx-agent record in each, perf record --vmcs-ctx -a and perf report --guest-maps in the host, then perf top --vmcs-ctx live"
	linux_out=$RESULTS_DIR/demo-linux.out
	rc=0
	rm -f "$RESULTS_DIR/linux-pti-off.log"
	VMCTX_LINUX_RUNS=off "$LAB_SRC/guest/run-linux-lab.sh" >"$linux_out" 2>&1 || rc=$?
	# perf's clock line, the guest-level table (its top rows), the checks,
	# and perf top --vmcs-ctx's pane as it named a guest process live
	[ -f "$RESULTS_DIR/linux-pti-off.log" ] && tr -d '\r' <"$RESULTS_DIR/linux-pti-off.log" |
		awk '/^# guest clock of/ || /^perf-check:/ || /^top-check:/ { print; next }
		     /^# guest-level view/ { t = 1; n = 0 }
		     t { print; if (++n == 30 || $0 == "") t = 0 }' || :
	log "console log: $RESULTS_DIR/linux-pti-off.log"
	if [ $rc != 0 ]; then
		# run-linux-lab.sh's own last line says what failed and how
		# many boots it took
		w=$(sed -n 's/.*ERROR: //p' "$linux_out" | tail -n 1 | sed 's/; console [^;]*$//')
		missed+=("the Linux guests: $w (the lab's log $linux_out)")
		why+=("the Linux guests: ${w:-run-linux-lab.sh exited $rc}")
	fi
fi

# The last lines say whether the demo did what it shows, and if not, what
# failed and where its consoles are.
if [ ${#missed[@]} -ne 0 ]; then
	for m in "${missed[@]}"; do log "FAILED: $m"; done
	w=$(printf '%s; ' "${why[@]}")
	log "the demo FAILED: ${w%; } (consoles above)"
	exit 1
fi
log "the demo passed: every check of the experiments$([ "${VMCTX_DEMO_LINUX:-1}" = 1 ] && echo ' and of the Linux guests')"
