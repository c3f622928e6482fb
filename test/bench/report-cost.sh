#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# report-cost.sh [DIR]: what --guest-maps costs a report of a real
# recording, on this machine.  DIR is what the Linux-guest lab's L1 handed
# back (default: $VMCTX_LAB_DIR/linux/checks/handover, left by
# test/lab/guest/run-linux-lab.sh): perf.data of 'perf record --vmcs-ctx
# -a' while two Debian guests ran, each guest's bundle, L1's kallsyms.
# Times, each the best of three runs:
#   base    the lab's perf: perf report --stdio, no bundles (what a perf
#           does with the recording alone)
#   maps    perf report --stdio --guest-maps (guests as perf machines)
#   inject  perf inject --guest-maps, then Debian's perf (linux-perf)
#           report --stdio of its output
#   stock   Debian's perf report --stdio of that output, alone
# and the ratios to base (issue #24's target: 1.2x).  Figures, not
# checks: a loaded machine is slow.
set -euo pipefail
lab=${VMCTX_LAB_DIR:-$HOME/.cache/vmctx-lab}
h=${1:-$lab/linux/checks/handover}
perf=${PERF:-$lab/out/perf/perf}
stock=${STOCK_PERF:-/usr/bin/perf}
[ -f "$h/perf.data" ] || { echo "report-cost: no $h/perf.data: run test/lab/guest/run-linux-lab.sh first" >&2; exit 2; }
[ -x "$perf" ] || { echo "report-cost: no perf at $perf" >&2; exit 2; }
maps=
for n in $(cat "$h/guests"); do maps="$maps,guest$n=$h/guest$n.vmctx"; done
maps=${maps#,}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME=$work LC_ALL=C
export LD_LIBRARY_PATH=$lab/vmctx/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# best SECONDS of three runs of CMD...
best() {
	local i t b=
	for i in 1 2 3; do
		t=$(TIMEFORMAT=%R; { time "$@" > /dev/null 2>&1; } 2>&1)
		b=$(awk -v a="${b:-$t}" -v t="$t" 'BEGIN { print (t < a ? t : a) }')
	done
	echo "$b"
}
k=--kallsyms=$h/kallsyms
base=$(best "$perf" report -i "$h/perf.data" $k --stdio)
mapped=$(best "$perf" report -i "$h/perf.data" $k --stdio --guest-maps="$maps")
inject_only=$(best sh -c "rm -rf '$work/inj.data'; '$perf' inject -i '$h/perf.data' --guest-maps='$maps' -o '$work/inj.data'")
stock_only=
if [ -x "$stock" ]; then
	stock_only=$(best "$stock" report -i "$work/inj.data" $k --stdio)
fi
awk -v b="$base" -v m="$mapped" -v i="$inject_only" -v s="${stock_only:-0}" -v st="$stock" 'BEGIN {
	printf "report-cost: base (perf report --stdio, no bundles) %.2f s\n", b
	printf "report-cost: perf report --stdio --guest-maps %.2f s, %.2fx\n", m, m / b
	if (s > 0) {
		printf "report-cost: perf inject --guest-maps %.2f s + %s report --stdio %.2f s = %.2f s, %.2fx\n",
			i, st, s, i + s, (i + s) / b
		printf "report-cost: %s report --stdio of the injected file alone %.2f s, %.2fx\n", st, s, s / b
	} else
		printf "report-cost: perf inject --guest-maps %.2f s (no %s to read it)\n", i, st
}'
