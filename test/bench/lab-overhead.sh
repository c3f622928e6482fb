#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# lab-overhead.sh [ROUNDS [REPEATS]]: what profiling costs a guest, in the
# lab's L1 host (run by test/lab/init.sh with vmctx.bench=1, or alone with
# vmctx.mode=bench; run-lab.sh does it in the VMX boot, where bochs' clock
# follows its instruction count, so that the timings repeat).
#
# A fixed amount of guest work (lab-vmm -r ROUNDS: one vCPU pinned to CPU 0
# runs ROUNDS rounds of its busy loops, then stops) is timed
#   none     with no profiling,
#   stock    with stock-style guest sampling: perf record -e cpu-clock:HG -C 0
#            (what stock perf records of a guest: its IP and user/kernel
#            mode; -C 0 already gives it TIME, CPU and TID),
#   switch   stock + --switch-events,
#   wakeup   stock + -e kvm:kvm_vcpu_wakeup (the work never halts, so it
#            never fires: this is what having it on costs; perf record's
#            event syntax takes no per-event period for a tracepoint, and
#            --vmcs-ctx gives it period 1),
#   noblock  perf record --vmcs-ctx -e cpu-clock:H: all that --vmcs-ctx
#            adds but the block (:H keeps exclude_guest, so perf leaves the
#            bit out; a 6.12 kernel samples the guest for a software event
#            all the same),
#   vmcs     perf record --vmcs-ctx -e cpu-clock -C 0 (the guest context
#            block, switch events, kvm:kvm_vcpu_wakeup),
#   lrN, lr  lab-record -q -C 0 without (-N) and with the bit: the block
#            and KVM's callback alone, with a reader that only counts,
#   lrg      lab-record -q -g -T -C 0: the bit and guest call chains (each
#            guest sample asks KVM to walk the guest's stack before the
#            next entry, which writes the chain, the guest's frames then
#            the host's, to lab-record's ring as a
#            PERF_RECORD_CALLCHAIN_DEFERRED record; -T: without the
#            kvm:kvm_guest_callchain debugging tracepoint, as perf record
#            --vmcs-ctx -g records them), under
#            KVM's walk parameters as they are (printed; by default guest
#            kernel stacks are not walked, and at most 10,000 walks a
#            second per vCPU),
#   lrd      lab-record -q -g -T -G 8192 -X -C 0: what perf record --vmcs-ctx
#            --call-graph dwarf asks of KVM (its default 8 KiB): each guest
#            user sample's registers and up to 8 KiB of its stack copied
#            in a PERF_RECORD_GUEST_USER_STACK record, the chain the leaf
#            alone; its bytes per sample count the stack records too,
#   hnone, hN, h  no VM: a fixed host loop (lab-vmm -L) unprofiled and under
#            lab-record -N and lab-record: what the bit costs a sample with
#            no vCPU loaded (perf's part and the callback's early return:
#            the 8-byte size word, no block),
# at 1 ms and 0.1 ms periods, each REPEATS times, the modes interleaved so
# that drift in the emulator's speed hits them alike; the fastest run of
# each counts (noise only ever adds time).  At 0.1 ms a run gets one of two
# sample counts (about 9,630 or 9,380 in bochs, 1.3 ms apart), so the costs
# are also given per sample.
# Prints each run's time, each mode's slowdown over no profiling and its
# cost over stock in percentage points, the breakdown of --vmcs-ctx's extra
# cost into its parts, the profiler's own CPU time and the host's context
# switches in the timed window (lab-vmm's "host" truth line), and the bytes
# per cpu-clock sample record.  A benchmark: it prints figures and never
# fails on them.
set -u
rounds=${1:-400}
reps=${2:-5}
W=/tmp/bench
G=/lab/guest.elf
mkdir -p $W
cd $W || exit 2
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
grep -q tracefs /proc/mounts || mount -t tracefs tracefs /sys/kernel/tracing

ncpu=$(grep -c ^processor /proc/cpuinfo)
on1=
[ "$ncpu" -gt 1 ] && on1="taskset -c 1"
work="lab-vmm -g $G -o $W/truth -n 1 -P 1 -h 0 -c 0 -r $rounds"
# about as long as the guest work in bochs (some 6 instructions a loop)
hwork="lab-vmm -o $W/truth -c 0 -L $((rounds * 250000))"

# once MODE PERIOD: "seconds profiler_cpu_s context_switches interrupts" of
# the work
once() {
	rm -f $W/truth
	case $1 in
	none)
		$work 2>$W/err ;;
	stock)
		$on1 perf record -q -e cpu-clock:HG -c "$2" -C 0 -o $W/$1-$2.data \
			-- $work 2>$W/err ;;
	switch)
		$on1 perf record -q -e cpu-clock:HG --switch-events -c "$2" -C 0 \
			-o $W/$1-$2.data -- $work 2>$W/err ;;
	wakeup)
		$on1 perf record -q -e cpu-clock:HG -e kvm:kvm_vcpu_wakeup \
			-c "$2" -C 0 -o $W/$1-$2.data -- $work 2>$W/err ;;
	noblock)
		$on1 perf record -q --vmcs-ctx -e cpu-clock:H -c "$2" -C 0 \
			-o $W/$1-$2.data -- $work 2>$W/err ;;
	vmcs)
		$on1 perf record -q --vmcs-ctx -e cpu-clock -c "$2" -C 0 \
			-o $W/$1-$2.data -- $work 2>$W/err ;;
	hnone)
		$hwork 2>$W/err ;;
	lrN|lr|lrg|lrd|hN|h)
		# -N: without the bit; -g: with guest call chains; -G: with
		# guest user stacks; h*: the host loop instead of the guest work
		case $1 in *N) nobit=-N ;; lrg) nobit="-g -T" ;; lrd) nobit="-g -T -G 8192 -X" ;; *) nobit= ;; esac
		case $1 in h*) w=$hwork ;; *) w=$work ;; esac
		$on1 lab-record -q $nobit -C 0 -c "$2" -o /dev/null -- $w 2>$W/err
		cp $W/err $W/$1-$2.err ;;
	esac
	[ -f $W/truth ] || return 0
	awk '$1 == "vcpu" || $1 == "host_work" { for (i = 2; i < NF; i++) if ($i == "done_s") t = $(i + 1) }
	     $1 == "host" { c = $5; s = $7; n = $9 }
	     END { if (t != "") print t, c + 0, s + 0, n + 0 }' $W/truth
}

# median of the arguments
median() {
	echo "$@" | tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# bytes MODE PERIOD: "average cpu-clock sample record size, samples, switch
# records" of the mode's last recording
bytes() {
	if [ -f $W/$1-$2.err ]; then
		# lab-record: "guest-context samples: N, B bytes each" and
		# host-only; and "N guest user stacks (...), B bytes each"
		awk '/samples: [0-9]+, [0-9]+ bytes each/ {
			n += $4 + 0; s += ($4 + 0) * ($5 + 0) }
			/guest user stacks .*, [0-9]+ bytes each/ { s += ($2 + 0) * ($(NF - 2) + 0) }
			END { if (n) printf "%.1f %d 0", s / n, n; else print "0 0 0" }' $W/$1-$2.err
		return
	fi
	perf report -D -i $W/$1-$2.data 2>/dev/null |
		awk '/PERF_RECORD_SAMPLE\(/ {
			if (match($0, /\[0x[0-9a-f]+\]/)) {
				n++; s += ("0x" substr($0, RSTART + 3, RLENGTH - 4)) + 0
			}
		}
		/PERF_RECORD_SWITCH/ { w++ }
		END { if (n) printf "%.1f %d %d", s / n, n, w; else print "0 0 0" }'
}

# sample_type MODE PERIOD: the cpu-clock event's sample_type
sample_type() {
	perf evlist -v -i $W/$1-$2.data 2>/dev/null |
		awk -F'sample_type: ' '/^cpu-clock/ && NF > 1 { split($2, a, ","); print a[1]; exit }'
}

all="stock switch wakeup noblock vmcs lrN lr lrg lrd"
echo "lab-bench: overhead of guest sampling: $rounds rounds of guest work, $reps runs of each mode, interleaved; $ncpu CPU(s)${on1:+, the profiler on CPU 1}"
# what perf record --vmcs-ctx looks at besides the samples (patch 21 reads
# KVM's debugfs every 500 ms), and how many processes there are
echo "lab-bench: debugfs mounts: $(grep -c ' debugfs ' /proc/mounts); processes: $(ls -d /proc/[0-9]* | wc -l)"
# what lrg's walks may do (the series' KVM parameters, where it has them)
kvmp=/sys/module/kvm/parameters
[ -e $kvmp/perf_callchain_max_pages ] &&
	echo "lab-bench: guest call chains: kvm.perf_callchain_max_pages=$(cat $kvmp/perf_callchain_max_pages) max_rate=$(cat $kvmp/perf_callchain_max_rate) guest_kernel=$(cat $kvmp/perf_callchain_guest_kernel)"
[ -n "$on1" ] || echo "lab-bench: one CPU: the profiler's reader shares CPU 0 with the guest work, so its CPU time is in the figures"
modes="none:1000000"
for p in 1000000 100000; do
	for m in $all; do
		modes="$modes $m:$p"
	done
done
modes="$modes hnone:1000000 hN:1000000 h:1000000 hN:100000 h:100000"
for mp in $modes; do
	eval "ts_${mp%:*}_${mp#*:}= cpu_${mp%:*}_${mp#*:}= cs_${mp%:*}_${mp#*:}= irq_${mp%:*}_${mp#*:}="
done
i=0
while [ $i -lt "$reps" ]; do
	for mp in $modes; do
		m=${mp%:*}
		p=${mp#*:}
		r=$(once $m $p)
		[ -n "$r" ] || { echo "lab-bench: $m $p: run failed"; tail -n 5 $W/err; r="0 0 0 0"; }
		set -- $r
		eval "ts_${m}_$p=\"\$ts_${m}_$p $1\" cpu_${m}_$p=\"\$cpu_${m}_$p $2\""
		eval "cs_${m}_$p=\"\$cs_${m}_$p $3\" irq_${m}_$p=\"\$irq_${m}_$p $4\""
	done
	i=$((i + 1))
	echo "lab-bench: pass $i of $reps done"
done
# the fastest run is the one least disturbed by the emulator's host
for mp in $modes; do
	m=${mp%:*}
	p=${mp#*:}
	eval "ts=\$ts_${m}_$p cpu=\$cpu_${m}_$p cs=\$cs_${m}_$p irq=\$irq_${m}_$p"
	# the fastest run, and its interrupts
	set -- $(awk -v t="$ts" -v q="$irq" 'BEGIN { n = split(t, a, " "); split(q, b, " "); m = 1
		for (i = 2; i <= n; i++) if (a[i] < a[m]) m = i; print a[m], b[m] }')
	min=$1
	eval "t_${m}_$p=$min i_${m}_$p=$2 c_${m}_$p=$(median $cpu) s_${m}_$p=$(median $cs)"
	echo "lab-bench:   $m period $p ns: runs$ts s, fastest $min s, median $(median $ts) s; profiler CPU$cpu s; context switches$cs; interrupts$irq"
done
base=$t_none_1000000
# the record sizes, of the 1 ms recordings (perf report -D of a 0.1 ms one
# takes long in bochs, and the size does not depend on the period)
for m in $all; do
	b=$(bytes $m 1000000)
	eval "b_$m=\"$b\""
done
echo "lab-bench: mode     period  slowdown  over stock  profiler CPU  ctx switches  bytes/sample  samples  switch records"
for p in 1000000 100000; do
	eval "st=\$t_stock_$p"
	for m in $all; do
		eval "t=\$t_${m}_$p c=\$c_${m}_$p s=\$s_${m}_$p"
		eval "set -- \$b_$m"
		[ $p = 1000000 ] || set -- $1 - -
		awk -v m="$m" -v p="$p" -v b="$base" -v st="$st" -v t="$t" -v c="$c" -v s="$s" \
		    -v sz="$1" -v n="$2" -v w="$3" 'BEGIN {
			printf "lab-bench: %-8s %4.1f ms  %+7.2f%%  %+7.2f pp  %9.2f s  %12d  %12.1f  %7s  %14s\n",
				m, p / 1e6, 100 * (t / b - 1), 100 * (t - st) / b, c, s, sz, n, w }'
	done
done
# the parts of --vmcs-ctx's extra cost, in points of the unprofiled time,
# and per sample (samples: the run's interrupts less those of the
# unprofiled run, scaled to the run's length), in ns of the L1's clock (in
# bochs, 200 instructions a microsecond: ips=200000000)
for p in 1000000 100000; do
	eval "st=\$t_stock_$p sw=\$t_switch_$p wk=\$t_wakeup_$p nb=\$t_noblock_$p vm=\$t_vmcs_$p ln=\$t_lrN_$p lr=\$t_lr_$p"
	eval "ivm=\$i_vmcs_$p ilr=\$i_lr_$p ist=\$i_stock_$p hb=\$t_hnone_1000000 ihb=\$i_hnone_1000000 hn=\$t_hN_$p h=\$t_h_$p ih=\$i_h_$p"
	awk -v b="$base" -v ib="$i_none_1000000" -v st="$st" -v sw="$sw" -v wk="$wk" -v nb="$nb" -v vm="$vm" \
	    -v ln="$ln" -v lr="$lr" -v p="$p" -v ivm="$ivm" -v ilr="$ilr" -v ist="$ist" \
	    -v hb="$hb" -v ihb="$ihb" -v hn="$hn" -v h="$h" -v ih="$ih" '
	function per(dt, t, i, tb, ib,   n) { n = i - ib * t / tb; return n > 0 ? 1e9 * dt / n : 0 }
	BEGIN {
		pp = 100 / b
		printf "lab-bench: period %.1f ms: --vmcs-ctx %+.2f pp over stock = block and callback %+.2f (vmcs - noblock) + the rest %+.2f (noblock - stock): switch events %+.2f, kvm_vcpu_wakeup %+.2f, other %+.2f\n",
			p / 1e6, (vm - st) * pp, (vm - nb) * pp, (nb - st) * pp, (sw - st) * pp,
			(wk - st) * pp, (nb - sw - wk + st) * pp
		printf "lab-bench: period %.1f ms: per sample: stock sampling %.0f ns, --vmcs-ctx over stock %+.0f ns, block and callback %+.0f ns (perf), %+.0f ns (lab-record, %+.2f pp); with no vCPU loaded the bit costs %+.0f ns (%+.2f pp of the host work)\n",
			p / 1e6, per(st - b, st, ist, b, ib), per(vm - st, vm, ivm, b, ib),
			per(vm - nb, vm, ivm, b, ib), per(lr - ln, lr, ilr, b, ib), (lr - ln) * pp,
			per(h - hn, h, ih, hb, ihb), 100 * (h - hn) / hb }'
done
# guest call chains: lab-record -g over lab-record, the same sampling
for p in 1000000 100000; do
	eval "st=\$t_stock_$p lr=\$t_lr_$p lg=\$t_lrg_$p ilg=\$i_lrg_$p"
	awk -v b="$base" -v ib="$i_none_1000000" -v st="$st" -v lr="$lr" -v lg="$lg" -v ilg="$ilg" \
	    -v p="$p" 'BEGIN {
		n = ilg - ib * lg / b
		printf "lab-bench: period %.1f ms: guest call chains %+.2f pp over the bit alone (lrg - lr), %+.2f pp over stock sampling (target < 1 pp at 1 ms), %.0f ns per sample\n",
			p / 1e6, 100 * (lg - lr) / b, 100 * (lg - st) / b, (n > 0 ? 1e9 * (lg - lr) / n : 0) }'
done
# guest user stacks (dwarf): lab-record -g -G 8192 -X over lab-record -g
for p in 1000000 100000; do
	eval "st=\$t_stock_$p lg=\$t_lrg_$p ld=\$t_lrd_$p ild=\$i_lrd_$p"
	awk -v b="$base" -v ib="$i_none_1000000" -v st="$st" -v lg="$lg" -v ld="$ld" -v ild="$ild" \
	    -v p="$p" -v bytes="${b_lrd%% *}" 'BEGIN {
		n = ild - ib * ld / b
		printf "lab-bench: period %.1f ms: guest user stacks of 8 KiB (dwarf) %+.2f pp over guest call chains (lrd - lrg), %+.2f pp over stock sampling, %.0f ns per sample, %s bytes per sample with its stack record\n",
			p / 1e6, 100 * (ld - lg) / b, 100 * (ld - st) / b, (n > 0 ? 1e9 * (ld - lg) / n : 0), bytes }'
done
for p in 1000000 100000; do
	eval "st=\$t_stock_$p; vm=\$t_vmcs_$p"
	awk -v b="$base" -v s="$st" -v v="$vm" -v p="$p" 'BEGIN {
		ss = 100 * (s / b - 1); vs = 100 * (v / b - 1);
		printf "lab-bench: period %.1f ms: slowdown over no profiling: stock sampling %+.2f%%, --vmcs-ctx %+.2f%%, difference %+.2f pp (target < 0.5 pp: %s)\n",
			p / 1e6, ss, vs, vs - ss, vs - ss < 0.5 ? "met" : "missed" }'
done
set -- $b_stock
s1=$1
set -- $b_vmcs
h0=$(bytes h 1000000)
echo "lab-bench: bytes per sample record: stock $s1, --vmcs-ctx $1, lab-record with no vCPU loaded ${h0%% *}; sample_type: stock $(sample_type stock 1000000), --vmcs-ctx $(sample_type vmcs 1000000)"
