#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# lab-overhead.sh [ROUNDS [REPEATS]]: what profiling costs a guest, in the
# lab's L1 host (run by test/lab/init.sh with vmctx.bench=1; run-lab.sh does
# it in the VMX boot, where bochs' clock follows its instruction count, so
# that the timings repeat).
#
# A fixed amount of guest work (lab-vmm -r ROUNDS: one vCPU pinned to CPU 0
# runs ROUNDS rounds of its busy loops, then stops) is timed
#   - with no profiling,
#   - with stock-style guest sampling: perf record -e cpu-clock:HG -C 0
#     (what stock perf records of a guest: its IP and user/kernel mode),
#   - with perf record --vmcs-ctx -e cpu-clock -C 0 (the guest context block,
#     switch events, kvm:kvm_vcpu_wakeup),
# at 1 ms and 0.1 ms periods, each REPEATS times, the modes interleaved so
# that drift in the emulator's speed hits them alike; the fastest run of
# each counts (noise only ever adds time).
# Prints each run's time, the slowdown of each mode over no profiling, the
# extra cost of --vmcs-ctx over stock in percentage points (target: < 0.5 at
# 1 ms), and the bytes per cpu-clock sample record of both.  A benchmark:
# it prints figures and never fails on them.
set -u
rounds=${1:-400}
reps=${2:-5}
W=/tmp/bench
G=/lab/guest.elf
mkdir -p $W
cd $W || exit 2
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
grep -q tracefs /proc/mounts || mount -t tracefs tracefs /sys/kernel/tracing

on1=
[ "$(grep -c ^processor /proc/cpuinfo)" -gt 1 ] && on1="taskset -c 1"
work="lab-vmm -g $G -o $W/truth -n 1 -P 1 -h 0 -c 0 -r $rounds"

# once MODE PERIOD: seconds the work took
once() {
	case $1 in
	none)
		$work 2>$W/err ;;
	stock)
		$on1 perf record -q -e cpu-clock:HG -c "$2" -C 0 -o $W/stock-$2.data \
			-- $work 2>$W/err ;;
	vmcs)
		$on1 perf record -q --vmcs-ctx -e cpu-clock -c "$2" -C 0 \
			-o $W/vmcs-$2.data -- $work 2>$W/err ;;
	esac
	awk '$1 == "vcpu" { for (i = 2; i < NF; i++) if ($i == "done_s") print $(i + 1) }' $W/truth
}

# median of the arguments
median() {
	echo "$@" | tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# bytes FILE: average size of the cpu-clock PERF_RECORD_SAMPLE records
bytes() {
	perf report -D -i "$1" 2>/dev/null |
		awk '/PERF_RECORD_SAMPLE\(/ {
			if (match($0, /\[0x[0-9a-f]+\]/)) {
				n++; s += ("0x" substr($0, RSTART + 3, RLENGTH - 4)) + 0
			}
		} END { if (n) printf "%.1f %d", s / n, n; else print "0 0" }'
}

echo "lab-bench: overhead of guest sampling: $rounds rounds of guest work, $reps runs of each mode, interleaved"
modes="none:1000000 stock:1000000 vmcs:1000000 stock:100000 vmcs:100000"
for mp in $modes; do
	eval "ts_${mp%:*}_${mp#*:}="
done
i=0
while [ $i -lt "$reps" ]; do
	for mp in $modes; do
		m=${mp%:*}
		p=${mp#*:}
		t=$(once $m $p)
		[ -n "$t" ] || { echo "lab-bench: $m $p: run failed"; cat $W/err; t=0; }
		eval "ts_${m}_$p=\"\$ts_${m}_$p $t\""
	done
	i=$((i + 1))
done
# the fastest run is the one least disturbed by the emulator's host
for mp in $modes; do
	m=${mp%:*}
	p=${mp#*:}
	eval "ts=\$ts_${m}_$p"
	min=$(echo $ts | tr ' ' '\n' | sort -n | head -n 1)
	eval "t_${m}_$p=$min"
	echo "lab-bench:   $m period $p ns: runs$ts s, fastest $min s, median $(median $ts) s"
done
base=$t_none_1000000
for p in 1000000 100000; do
	eval "st=\$t_stock_$p; vm=\$t_vmcs_$p"
	awk -v b="$base" -v s="$st" -v v="$vm" -v p="$p" 'BEGIN {
		ss = 100 * (s / b - 1); vs = 100 * (v / b - 1);
		printf "lab-bench: period %.1f ms: slowdown over no profiling: stock sampling %+.2f%%, --vmcs-ctx %+.2f%%, difference %+.2f pp", p / 1e6, ss, vs, vs - ss
		if (p == 1000000) printf " (target < 0.5 pp: %s)", vs - ss < 0.5 ? "met" : "missed"
		printf "\n" }'
done
# the record size does not depend on the period: count it in the 1 ms runs
sb=$(bytes $W/stock-1000000.data)
vb=$(bytes $W/vmcs-1000000.data)
echo "lab-bench: bytes per sample record: stock ${sb% *} (${sb#* } samples), --vmcs-ctx ${vb% *} (${vb#* } samples)"
