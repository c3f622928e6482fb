#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# check-exp4.sh: lab-exp-check's experiment 4 (three VMs on one pCPU) on a
# schedule built here, whose truth is known by construction.
#
# Three VMs (pids 101-103, vCPU threads 201-203) take turns on pCPU 0 for
# ROUNDS rounds: each runs SLICE ms, then the scheduler switches for GAP ms
# (between one's OUT and the next one's IN).  Every tenth round a kworker
# (pid 7) runs KW ms after the third VM: no VM's time.  VM 101's vCPU runs
# without a guest-mode sample in its first SETUP rounds (the host work of
# a vCPU that is setting up: its waits then are steal all the same).  So
# each wait of VM 101's vCPU holds the other two VMs' slices (2 SLICE, and
# their time from IN to OUT) and the three switches next to them (3 GAP;
# in a kworker round the third is to the kworker, the fourth, from the
# kworker, is nobody's of theirs): the lower
# and upper bounds of its steal by the other VMs that the checker must
# accept, within 1 point of the VM's time.  The rows then claim a steal
# inside the bounds (must pass), past each bound by 1.5 points (must
# fail), and without the setup rounds' waits (must fail: what a window
# from the first guest-mode sample would have wanted).
#
# Usage: check-exp4.sh [LAB-EXP-CHECK]  (default: test/lab/exp-check.c,
# built here with $CC, as the lab builds it for L1)
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chk=${1:-}
if [ -z "$chk" ]; then
	chk=$dir/lab-exp-check
	${CC:-cc} -O2 -Wall -Wextra -o "$chk" "${top_srcdir:-.}/test/lab/exp-check.c" -lm ||
		{ echo "cannot build test/lab/exp-check.c" >&2; exit 99; }
fi

ROUNDS=300 SETUP=30 SLICE=3 GAP=0.05 KW=0.5
# The script's lines (perf script --show-switch-events -F
# pid,tid,cpu,time,guest_cpl) and, on stderr of awk, the truth of VM 101.
awk -v rounds=$ROUNDS -v setup=$SETUP -v slice=$SLICE -v gap=$GAP -v kw=$KW '
function sw(pid, tid, dir) {
	printf "%7d/%-7d [000] %12.6f: PERF_RECORD_SWITCH_CPU_WIDE %s\n", pid, tid, t / 1000, dir
}
# run PID TID MS GUEST: IN, guest-mode samples each ms if GUEST, OUT, the gap
function run(pid, tid, ms, guest,   s) {
	sw(pid, tid, "IN")
	if (guest)
		for (s = t + 0.5; s < t + ms; s += 1)
			printf "%7d/%-7d [000] %12.6f:  cpl:3\n", pid, tid, s / 1000
	t += ms
	sw(pid, tid, "OUT")
	t += gap
}
BEGIN {
	t = 1000
	for (r = 0; r < rounds; r++) {
		run(101, 201, slice, r >= setup)
		if (r < rounds - 1) {
			# a wait of 101s vCPU: the other two and three switches
			lo += 2 * slice
			hi += 2 * slice + 3 * gap
		}
		run(102, 202, slice, 1)
		run(103, 203, slice, 1)
		# (a kworker round has three such switches too: 103 to the
		# kworker is one, the kworker to 101 is not)
		if (r % 10 == 9)
			run(7, 7, kw, 0)
		if (r < setup)
			slo += 2 * slice
		if (r == rounds - 1)
			life = t - 1000
	}
	printf "%.6f %.6f %.6f %.6f\n", lo, hi, slo, life > "/dev/stderr"
}' >"$dir/script" 2>"$dir/truth"
read -r lo hi slo life <"$dir/truth"

# rows VM101-STEAL-MS: the guest view header and rows, VM 101 claiming that
# steal by the other VMs (the others theirs, within bounds of their own)
rows() {
	{
		for v in 101 102 103; do
			echo "# VM pid $v: $life ms  OS:USER:steal:idle = 10.00%:23.33%:66.67%:0.00%"
		done
	} >"$dir/guest"
	awk -v s101="$1" -v lo="$lo" -v hi="$hi" 'BEGIN {
		print "# Samples: 17  of event '\''vcpu-blank'\''"
		print "#"
		print "#      Samples;      Period;VM pid ;vCPU;    Pid:Command;Shared Object;Symbol"
		printf " 1;%.0f;101;0;-2:[steal];(VM2);[u] [steal]\n", s101 / 2 * 1e6
		printf " 1;%.0f;101;0;-2:[steal];(VM3);[u] [steal]\n", s101 / 2 * 1e6
		printf " 1;%.0f;101;0;-2:[steal];(outside);[u] [steal]\n", 20e6
		for (v = 102; v <= 103; v++) {
			printf " 1;%.0f;%d;0;-2:[steal];(VM1);[u] [steal]\n", (lo + hi) / 4 * 1e6, v
			printf " 1;%.0f;%d;0;-2:[steal];(VM%d);[u] [steal]\n", (lo + hi) / 4 * 1e6, v, v == 102 ? 3 : 2
		}
	}' >"$dir/rows"
}

fails=0
# expect pass|fail WHAT STEAL-MS
expect() {
	rows "$3"
	if "$chk" 4 "$dir/guest" "$dir/rows" "$dir/script" >"$dir/out" 2>&1; then got=pass; else got=fail; fi
	line=$(grep 'VM pid 101: \[steal\] by' "$dir/out" || tail -n 1 "$dir/out")
	if [ "$got" = "$1" ]; then
		echo "ok   $2: $got: $line"
	else
		echo "FAIL $2: want $1, got $got: $line"
		sed 's/^/     /' "$dir/out" | grep -v '^     #' | tail -n 12
		fails=$((fails + 1))
	fi
}
pt=$(awk -v l="$life" 'BEGIN { print l / 100 }')	# one point of the VM's time
expect pass "between the bounds" "$(awk -v a="$lo" -v b="$hi" 'BEGIN { print (a + b) / 2 }')"
expect pass "at the lower bound" "$lo"
expect pass "at the upper bound" "$hi"
expect fail "1.5 points under the lower bound" "$(awk -v a="$lo" -v p="$pt" 'BEGIN { print a - 1.5 * p }')"
expect fail "1.5 points over the upper bound" "$(awk -v a="$hi" -v p="$pt" 'BEGIN { print a + 1.5 * p }')"
expect fail "without the setup rounds' waits" "$(awk -v a="$lo" -v b="$hi" -v s="$slo" 'BEGIN { print (a + b) / 2 - s }')"
# and the script without tids is refused, not misread
sed 's#/[0-9-]* *\[# [#' "$dir/script" >"$dir/script.old"
rows "$lo"
if "$chk" 4 "$dir/guest" "$dir/rows" "$dir/script.old" >"$dir/out" 2>&1; then
	echo "FAIL a script without tids passed"
	fails=$((fails + 1))
else
	echo "ok   a script without tids: $(grep -v "^#" "$dir/out" | tail -n 1)"
fi
[ $fails = 0 ]
