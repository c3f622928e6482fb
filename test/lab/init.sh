#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# /init of the lab's L1 host.  vmctx.mode=patched runs the VMM under the
# recorder and checks the samples; vmctx.mode=stock checks that the kernel
# refuses PERF_SAMPLE_GUEST_CTX and measures perf's guest user/kernel label;
# vmctx.mode=experiments runs the paper's experiments with the patched perf
# (/lab/experiments.sh: vmctx.exps=1,2,... vmctx.secs vmctx.period) and,
# with vmctx.bench=1, the overhead benchmark (/lab/lab-overhead.sh);
# vmctx.also=N,... runs those experiments after the patched checks, and
# vmctx.bench=1 the benchmark (one boot for all on the slow VMX emulator,
# whose clock follows its instruction count, so its timings repeat;
# vmctx.exp_secs, vmctx.bench_rounds, vmctx.bench_reps); vmctx.mode=bench
# runs the benchmark alone (a VMX boot of a few minutes instead of the
# patched checks and experiments first).  vmctx.mode=repeat runs the
# first recording vmctx.reps times on either kernel (stock or patched:
# lab-record with or without the block) and counts the runs in which
# lab-vmm found a vCPU's state lost at the end (test/lab/README);
# vmctx.fpu_load=1 runs them on CPU 0 beside lab-fpu-load on CPU 1;
# lab-cmpxchg-flags checks the emulator's CMPXCHG8B/16B flags first.
# Results go to the console as "VMCTX-LAB: ..." lines, then the VM powers off.
. /lib/vmctx-init-common.sh

mode=patched secs=3 period=100000 vcpus=2 halt_us=1000 exps=1,2,3,4,5,6 bench=0 also= exp_secs= bench_rounds=400 bench_reps=5 reps=20 fpu_load=0
lab_args mode secs period vcpus halt_us exps bench bench_rounds bench_reps also exp_secs reps fpu_load

isa=none
grep -qw svm /proc/cpuinfo && isa=svm
grep -qw vmx /proc/cpuinfo && isa=vmx
# Debian's stock kernel (stock-debian.sh) has KVM as modules
if [ -d /lib/vmctx-stock ]; then
	vendor=amd
	[ "$isa" = vmx ] && vendor=intel
	for m in irqbypass kvm kvm-$vendor; do
		insmod /lib/vmctx-stock/$m.ko || echo "VMCTX-LAB: insmod $m.ko failed"
	done
fi
echo "VMCTX-LAB: L1 up: mode=$mode isa=$isa cpus=$(grep -c ^processor /proc/cpuinfo) kernel=$(uname -r)"
dmesg | grep -iE 'kvm|svm|vmx' | tail -5

finish() {
	kernel_splats
	echo "VMCTX-LAB: RESULT $1"
	# reboot -f does not wait for the serial port to drain
	sleep 2
	reboot -f
}

[ -c /dev/kvm ] || finish "FAIL no /dev/kvm (isa=$isa)"
vmm="lab-vmm -g /lab/guest.elf -o /tmp/truth.txt -n $vcpus -t $secs -H $halt_us"

if [ "$mode" = bench ]; then
	[ -x /bin/perf ] || finish "FAIL no perf in the initramfs"
	/lab/lab-overhead.sh "$bench_rounds" "$bench_reps"
	finish "BENCH-DONE isa=$isa"
fi

if [ "$mode" = repeat ]; then
	# first the emulator's CMPXCHG8B/16B flags (cmpxchg-flags.c): QEMU
	# 7.2 without cmpxchg-cc-op.patch sets RFLAGS bits that no CPU sets
	flags=ok
	lab-cmpxchg-flags > /tmp/flags.txt 2>&1 || flags=bad
	sed 's/^/VMCTX-LAB: /' /tmp/flags.txt
	[ $flags = ok ] ||
		finish "FAIL emulator: CMPXCHG8B/16B flags (test/lab/qemu/cmpxchg-cc-op.patch)"
	blk=with
	lab-record -p > /dev/null 2>&1 || blk=without
	nb=-N
	[ $blk = with ] && nb=
	# vmctx.fpu_load=1: the vCPUs on CPU 0 and FLDENVs on CPU 1 (fpu-load.c)
	rvmm=$vmm load=
	if [ "$fpu_load" = 1 ]; then
		rvmm="$vmm -c 0"
		lab-fpu-load -c 1 -t 100000 > /tmp/fpu-load.txt 2>&1 &
		load=$!
	fi
	bad=0 i=0
	while [ $i -lt "$reps" ]; do
		i=$((i + 1))
		if lab-record $nb -c "$period" -o /tmp/r.txt -- $rvmm 2> /tmp/r.err; then
			echo "VMCTX-LAB: repeat $i of $reps: ok"
		else
			bad=$((bad + 1))
			echo "VMCTX-LAB: repeat $i of $reps: FAIL"
			grep '^lab-' /tmp/r.err | sed 's/^/VMCTX-LAB:   /'
		fi
	done
	[ -n "$load" ] && kill "$load"
	echo "VMCTX-LAB: repeat: $bad of $reps runs failed, sampling every $period ns ($blk PERF_SAMPLE_GUEST_CTX${load:+, FLDENV load on CPU 1})"
	finish "REPEAT-DONE isa=$isa failed=$bad"
fi

if [ "$mode" = experiments ]; then
	[ -x /bin/perf ] || finish "FAIL no perf in the initramfs"
	perf version --build-options | grep -q 'libvmctx: \[ on' || finish "FAIL perf lacks libvmctx"
	/lab/experiments.sh "$secs" "$period" "$(echo "$exps" | tr , ' ')"
	rc=$?
	[ "$bench" = 1 ] && /lab/lab-overhead.sh "$bench_rounds" "$bench_reps"
	[ $rc -eq 0 ] || finish "FAIL experiments isa=$isa"
	finish "EXPERIMENTS-PASS isa=$isa"
fi

if [ "$mode" = stock ]; then
	lab-record -p
	rc=$?
	[ $rc -eq 3 ] || finish "FAIL probe on the stock kernel returned $rc, expected 3 (EINVAL)"
	echo "VMCTX-LAB: probe EINVAL ok"
	lab-record -N -c "$period" -o /tmp/samples.txt -- $vmm || finish "FAIL stock recording"
	lab-check -S -t /tmp/truth.txt -s /tmp/samples.txt -i "$isa" || finish "FAIL stock check"
	finish "STOCK-DONE isa=$isa"
fi

lab-record -p || finish "FAIL kernel lacks PERF_SAMPLE_GUEST_CTX"
lab-record -c "$period" -o /tmp/samples.txt -- $vmm || finish "FAIL recording"
cat /tmp/truth.txt
lab-check -t /tmp/truth.txt -s /tmp/samples.txt -i "$isa" || finish "FAIL checks isa=$isa"

# the bit is hypervisor state: EOPNOTSUPP with exclude_guest (EINVAL is
# an unknown bit's), EACCES for an
# unprivileged user at perf_event_paranoid 2, allowed for root
# (and perf record, run as that user, says so in one sentence)
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
cmd=
[ -x /bin/perf ] && cmd="perf record --vmcs-ctx -e cpu-clock -a -o /tmp/u.data -- true"
out=$(cd /tmp && lab-record -P -- $cmd 2>&1) || { echo "$out"; finish "FAIL the bit's privilege rules isa=$isa"; }
echo "$out" | grep '^lab-record'
echo "$paranoid" > /proc/sys/kernel/perf_event_paranoid
if [ -n "$cmd" ]; then
	echo "VMCTX-LAB: unprivileged perf record --vmcs-ctx said: $(echo "$out" | grep 'vmcs-ctx reads')"
	echo "$out" | grep -q 'vmcs-ctx reads hypervisor state, which needs CAP_PERFMON' ||
		finish "FAIL perf record's privilege message isa=$isa"
fi

# the series' KVM selftest (tools/testing/selftests/kvm/x86_64/guest_ctx_test),
# where the series has one: every sample of its own vCPU thread checked
# against a CPL-0 loop, a CPUID loop and a CPL-3 loop; its counts per
# phase and its TAP lines go to the console
if [ -x /bin/guest_ctx_test ]; then
	t0=$(cut -d' ' -f1 /proc/uptime)
	/bin/guest_ctx_test > /tmp/selftest.txt 2>&1
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	sed 's/^/VMCTX-LAB: selftest /' /tmp/selftest.txt
	echo "VMCTX-LAB: selftest guest_ctx_test exit $rc in $(awk "BEGIN { print $t1 - $t0 }") s of L1 time"
	[ $rc -eq 0 ] || finish "FAIL selftest guest_ctx_test isa=$isa"
else
	echo "VMCTX-LAB: selftest guest_ctx_test not in the initramfs (not in the series)"
fi

# kvm:kvm_exit must carry the guest's CR3: one of the two roots
tr=/sys/kernel/tracing
mount -t tracefs tracefs $tr || finish "FAIL no tracefs"
echo 1 > $tr/events/kvm/kvm_exit/enable || finish "FAIL no kvm:kvm_exit"
lab-vmm -g /lab/guest.elf -o /tmp/truth2.txt -n 1 -t 0.3 -H $halt_us || finish "FAIL vmm (trace)"
echo 0 > $tr/events/kvm/kvm_exit/enable
grep kvm_exit $tr/trace > /tmp/exits.txt
total=$(grep -c . /tmp/exits.txt || true)
roots=$(grep -cE 'guest_cr3 0x1(0|4)00[0-2]$' /tmp/exits.txt || true)
grep -m 2 kvm_exit /tmp/exits.txt
echo "VMCTX-LAB: kvm_exit events: $roots/$total carry guest_cr3 = one of the guest's roots"
[ "$total" -gt 0 ] && [ "$roots" -eq "$total" ] || finish "FAIL kvm_exit guest_cr3 isa=$isa"
# guest call chains, where the series has them (kvm:kvm_guest_callchain,
# now a debugging aid beside the deferred records): each guest-mode sample
# of lab-record -g paired by cookie with the PERF_RECORD_CALLCHAIN_DEFERRED
# record KVM wrote before the vCPU's next entry, and checked against
# guest.S's call graph; then process B on each hostile stack (one vCPU),
# and a walk that may translate no page
chains() {	# chains NAME CHECK-OPTIONS -- VMM-OPTIONS (lab-record's in $ropts)
	name=$1 copts=$2
	shift 3
	lab-record -g $ropts -c "$period" -o /tmp/chain-$name.txt -- \
		lab-vmm -g /lab/guest.elf -o /tmp/truth-$name.txt -H $halt_us "$@" ||
		finish "FAIL recording guest call chains ($name) isa=$isa"
	echo "VMCTX-LAB: guest call chains: $name"
	lab-chain-check -t /tmp/truth-$name.txt -s /tmp/chain-$name.txt $copts ||
		finish "FAIL guest call chains ($name) isa=$isa"
}
kvmp=/sys/module/kvm/parameters
if [ -d $tr/events/kvm/kvm_guest_callchain ]; then
	[ -w $kvmp/perf_callchain_max_pages ] ||
		finish "FAIL kvm:kvm_guest_callchain but no kvm.perf_callchain_max_pages (a series from before deferred guest call chains) isa=$isa"
	# the tiny guest's ring 0 has frame pointers too, and it is sampled
	# faster than KVM's default rate allows (10,000 walks a second per
	# vCPU): walk its kernel stacks, with no limit
	echo Y > $kvmp/perf_callchain_guest_kernel
	echo 0 > $kvmp/perf_callchain_max_rate
	echo "VMCTX-LAB: guest call chains: kvm.perf_callchain_max_pages=$(cat $kvmp/perf_callchain_max_pages) max_rate=$(cat $kvmp/perf_callchain_max_rate) guest_kernel=$(cat $kvmp/perf_callchain_guest_kernel)"
	# the series' selftest of guest chains, where it has one: frame chains
	# of known shapes (whole, a loop, into an unmapped page, deeper than
	# sample_max_stack for two events), no A/D bit or dirty page from the
	# walks, and no chain for a VM whose memory KVM cannot read
	if [ -x /bin/guest_chain_test ]; then
		/bin/guest_chain_test > /tmp/chain-selftest.txt 2>&1
		rc=$?
		sed 's/^/VMCTX-LAB: selftest /' /tmp/chain-selftest.txt
		[ $rc -eq 0 ] || finish "FAIL selftest guest_chain_test isa=$isa"
	fi
	chains graph "" -- -n $vcpus -t $secs
	# the walk is the same code on both vendors: its bounds are tried where
	# the emulator is fast (bochs runs all of this at a tenth of the speed).
	# 2 s each: lab-chain-check wants 20 chains that end with the stack's
	# reason, and in 1 s an idle machine gave 40 to 73 of them, a cold CI
	# run beside a CPU-bound loop 27 and another 18 (30 November)
	if [ "$isa" = svm ]; then
		for kind in loop kernel unmapped deep; do
			chains $kind "-m 40" -- -n 1 -t 2 -Z $kind
		done
		echo 0 > $kvmp/perf_callchain_max_pages
		chains pages "-B -m 40" -- -n 1 -t 1
		echo 32 > $kvmp/perf_callchain_max_pages
		# guest user stacks (PERF_RECORD_GUEST_USER_STACK): KVM copies
		# 512 bytes of the guest's user stack where it walks the chain;
		# each copy must hold its walk's frames; with user chains
		# excluded, as perf record --call-graph dwarf asks, a user-mode
		# chain record is the IP alone and the copy still comes
		ropts="-G 512"
		chains stack "-u 512" -- -n $vcpus -t 2
		ropts="-G 512 -X"
		chains stack-nochain "-u 512 -X" -- -n $vcpus -t 2
		ropts=
	fi
	# through perf: perf record --vmcs-ctx -g asks for the guest's chains,
	# perf script --guest-maps joins each chain to its sample: the guest's
	# frames named from the bundle, then the host's, KVM and lab-vmm.
	# With KVM's default of no guest kernel stacks, as a user gets it: a
	# ring-0 sample's chain is its leaf alone
	echo N > $kvmp/perf_callchain_guest_kernel
	if [ -x /bin/perf ]; then
		# (at 1 ms on VMX: perf report -g of 0.1 ms samples is slow in bochs)
		gperiod=$period
		[ "$isa" = vmx ] && gperiod=1000000
		perf record -q --vmcs-ctx -g -e cpu-clock -c "$gperiod" -a -o /tmp/g.data -- \
			lab-vmm -g /lab/guest.elf -o /tmp/truth-g.txt -b /tmp/g.vmctx -n $vcpus \
			-t $secs -H $halt_us 2>/tmp/g.err || { cat /tmp/g.err; finish "FAIL perf record -g isa=$isa"; }
		perf script -i /tmp/g.data --guest-maps=/tmp/g.vmctx -F comm,tid,ip,sym,dso \
			> /tmp/g.script 2>/tmp/g.script.err ||
			{ cat /tmp/g.script.err; finish "FAIL perf script of guest call chains isa=$isa"; }
		echo "VMCTX-LAB: guest call chains: perf script, first sample of a_compute:"
		awk '/^[^\t]/ && !/^$/ { s = $0; n = 0; next } /^$/ { if (f) exit; next }
		     { if (!n++ && $2 == "a_compute") { f = 1; print s } if (f) print }' /tmp/g.script | head -24
		lab-chain-check -t /tmp/truth-g.txt -p /tmp/g.script ||
			finish "FAIL perf script guest call chains isa=$isa"
		# and perf report -g, whose folded export holds the same stacks
		perf report -i /tmp/g.data --guest-maps=/tmp/g.vmctx --stdio -g \
			--guest-export=folded:/tmp/g.folded > /tmp/g.report 2>&1 ||
			{ tail /tmp/g.report; finish "FAIL perf report -g --guest-export isa=$isa"; }
		echo "VMCTX-LAB: guest call chains: perf report -g, the top of it:"
		grep -v '^#' /tmp/g.report | grep -v '^$' | head -24
		echo "VMCTX-LAB: guest call chains: the folded stack of a_compute with the most ticks:"
		grep 'a_compute' /tmp/g.folded | awk '{ print $NF, $0 }' | sort -nr | head -1 | cut -d' ' -f2-
		lab-chain-check -t /tmp/truth-g.txt -f /tmp/g.folded ||
			finish "FAIL folded guest call chains isa=$isa"
	fi
	# A paranoid-1 user profiling a VMM of its own (/dev/kvm open to all,
	# as a kvm group would have it): perf record --vmcs-ctx -g -p gets
	# the guest's chains through its own event, no tracepoint
	# permission asked.  A root trace session on kvm:kvm_guest_callchain
	# at the same time makes no walk of its own: the tracepoint fires
	# once per walk, and every walk is one of that user's records.
	# --per-thread: one event a thread.  perf record's default, an event
	# a thread on each CPU, writes a walk's chain to each event that
	# sampled the vCPU before the walk, two when its thread moved CPU in
	# between (a cookie with two records and one walk, 1 December):
	# right for the user, but no longer one record a walk
	if [ -x /bin/perf ] && [ "$isa" = svm ]; then
		u=/tmp/unpriv
		rm -rf $u
		mkdir -p $u
		chown 65534:65534 $u
		chmod 0666 /dev/kvm
		echo 1 > /proc/sys/kernel/perf_event_paranoid
		cat > $u/run.sh <<-EOF
		cd $u || exit 1
		export HOME=$u
		lab-vmm -g /lab/guest.elf -o truth.txt -b g.vmctx -n $vcpus -t $((secs + 4)) -H $halt_us 2>vmm.err &
		vmm=\$!
		# its vCPU threads first: perf -p opens an event on each
		i=0
		while [ \$(ls /proc/\$vmm/task | wc -l) -le $vcpus ] && [ \$i -lt 500 ]; do sleep 0.01; i=\$((i + 1)); done
		perf record -q --vmcs-ctx -g --per-thread -e cpu-clock -c $period -p \$vmm -o g.data -- sleep $secs 2>rec.err
		echo "perf record \$?"
		wait \$vmm
		echo "lab-vmm \$?"
		EOF
		echo > $tr/trace
		echo 1 > $tr/events/kvm/kvm_guest_callchain/enable
		lab-record -U -- sh $u/run.sh > $u/out.txt 2>&1
		echo 0 > $tr/events/kvm/kvm_guest_callchain/enable
		echo "$paranoid" > /proc/sys/kernel/perf_event_paranoid
		chmod 0600 /dev/kvm
		sed 's/^/VMCTX-LAB: unprivileged: /' $u/out.txt
		grep -qx 'perf record 0' $u/out.txt && grep -qx 'lab-vmm 0' $u/out.txt ||
			{ cat $u/rec.err $u/vmm.err; finish "FAIL a paranoid-1 user's perf record --vmcs-ctx -g -p isa=$isa"; }
		walks=$(grep -c 'kvm_guest_callchain:' $tr/trace || true)
		# (-f: root reads the file of another user)
		perf report -f -i $u/g.data --stats > $u/stats 2>&1
		recs=$(awk '$1 == "CALLCHAIN_DEFERRED" && $2 == "events:" { print $3; exit }' $u/stats)
		lost=$(awk '$1 == "LOST" && $2 == "events:" { print $3; exit }' $u/stats)
		perf script -f -i $u/g.data --guest-maps=$u/g.vmctx -F comm,tid,ip,sym,dso > $u/g.script 2>&1
		echo "VMCTX-LAB: unprivileged: ${recs:-0} deferred records in that user's recording (${lost:-0} lost records), $walks walks in root's trace session"
		# Each record is one walk's (its thread's, its cookie), and each
		# walk has its record but the last: a sample perf record takes as
		# it stops can be walked after its last read of the buffers, the
		# record never read (CI, 4 December: one vCPU thread's last walk
		# had none; one or two walks short in 4 of 15 boots on 1
		# December).  Such a walk comes after every record, one at most
		# per thread.
		perf report -f -D -i $u/g.data > $u/dump 2>/dev/null
		{ grep 'kvm_guest_callchain:' $tr/trace |
			sed -n 's/^ *[^ ]*-\([0-9]*\) .* \([0-9.]*\): kvm_guest_callchain: vcpu [0-9]* cookie \([0-9]*\) .*/w \1 \3 \2/p'
		  awk '/PERF_RECORD_CALLCHAIN_DEFERRED: cookie 0x/ { c = $0; sub(/.*cookie 0x/, "", c); sub(/ .*/, "", c); t = $2; next }
		       c != "" && /^ \.\.\. thread: / { k = $0; sub(/.*:/, "", k); print "r", k, c, t; c = "" }' $u/dump |
			while read -r k tid c t; do echo "$k $tid $((0x$c)) $t"; done; } > $u/pairs
		paired=$(awk '$1 == "w" { n = $2 SUBSEP $3; nw[n]++; wt[n] = $4 + 0 }
			$1 == "r" { n = $2 SUBSEP $3; nr[n]++; if ($4 / 1e9 > last) last = $4 / 1e9 }
			END { bad = 0; late = 0
			      for (n in nr) if (nr[n] != 1 || nw[n] != 1) bad++
			      for (n in nw) if (!(n in nr)) {
				split(n, p, SUBSEP)
				if (wt[n] > last && !(p[1] in out)) { out[p[1]] = 1; late++ } else bad++ }
			      print bad, late }' $u/pairs)
		echo "VMCTX-LAB: unprivileged: records and walks by thread and cookie: ${paired% *} unpaired, ${paired#* } walks after the last record"
		[ "${recs:-0}" -gt 0 ] && [ "${paired% *}" = 0 ] && [ "${lost:-0}" = 0 ] || {
			tail -n 20 $u/stats
			grep 'kvm_guest_callchain:' $tr/trace |
				sed 's/^ *\([^ ]*\) .* kvm_guest_callchain: vcpu [0-9]* cookie \([0-9]*\) .*/\1 \2/' |
				sort -k1,1 -k2,2n | awk '{ if ($1 == t && $2 != c + 1) print "VMCTX-LAB: walks of " $1 ": cookie " c " then " $2
					n[$1]++; if (!($1 in lo)) lo[$1] = $2; t = $1; c = $2; hi[$1] = $2 }
					END { for (t in n) print "VMCTX-LAB: walks of " t ": " n[t] ", cookies " lo[t] " to " hi[t] }'
			for c in $tr/per_cpu/cpu*; do echo "VMCTX-LAB: trace ${c##*/}: $(tr '\n' ' ' < $c/stats)"; done
			# and each cookie's records against its walks (one per vCPU
			# that reached it): a cookie with more records than walks
			# went to two events, one with fewer was not written
			{ grep 'kvm_guest_callchain:' $tr/trace |
				sed -n 's/.* kvm_guest_callchain: vcpu [0-9]* cookie \([0-9]*\) .*/w \1/p'
			  sed -n 's/.*: cookie 0x\([0-9a-f]*\) nr.*/r \1/p' $u/dump |
				while read -r k c; do echo "$k $((0x$c))"; done; } |
				awk '{ n[$2, $1]++; seen[$2] = 1 }
				     END { for (c in seen) if (n[c, "w"] != n[c, "r"] && shown++ < 10)
					print "VMCTX-LAB: cookie " c ": " n[c, "r"] + 0 " records, " n[c, "w"] + 0 " walks" }' |
				tee $u/odd
			# the first two such cookies whole: each record as perf -D
			# shows it (its offset, CPU, time, and in its raw bytes the
			# pid and tid of its sample_id), and the walks traced
			for c in $(sed -n 's/^VMCTX-LAB: cookie \([0-9]*\):.*/\1/p' $u/odd | head -n 2); do
				awk -v k="$(printf ': cookie 0x%x nr' "$c")" '
					NF == 0 { if (index(b, k)) printf "%s", b; b = ""; next }
					{ b = b $0 "\n" }' $u/dump |
					head -n 80 | sed 's/^/VMCTX-LAB: dump: /'
				grep "kvm_guest_callchain: vcpu [0-9]* cookie $c " $tr/trace | sed 's/^/VMCTX-LAB: trace: /'
			done
			finish "FAIL a paranoid-1 user's walks: ${recs:-0} records, $walks walks traced isa=$isa"
		}
		lab-chain-check -t $u/truth.txt -p $u/g.script ||
			finish "FAIL a paranoid-1 user's guest call chains isa=$isa"
	fi
	# what a later read of the same stacks would get wrong: the guest
	# runs on, its stacks change (lab-vmm -R; the cover letter's table)
	if [ "$isa" = svm ]; then
		lab-vmm -g /lab/guest.elf -o /tmp/truth-race.txt -n $vcpus -t $secs -H $halt_us -R \
			> /tmp/race.txt || finish "FAIL lab-vmm -R isa=$isa"
		sed 's/^/VMCTX-LAB: /' /tmp/race.txt
		# at once, the second walk is the first: the comparison's check
		awk '/after 0 us:/ { n = $6; s = $9 } END { exit !(n > 0 && s == n) }' /tmp/race.txt ||
			finish "FAIL lab-vmm -R: two walks at once differ isa=$isa"
	fi
	# KVM's defaults again, for what follows (the NMI path, the benchmark)
	echo 10000 > $kvmp/perf_callchain_max_rate
else
	echo "VMCTX-LAB: guest call chains: no kvm:kvm_guest_callchain (not in the series)"
fi
# no cross-user leak: a sleeper's timer fires while the vCPU runs on its
# CPU, so its wakeup runs in the vCPU thread; the sleeper's owner's
# per-task sched_waking event gets no guest context, root's CPU-wide
# event does (test/lab/leak.c); on CPU 1 where there is one (bochs has
# one CPU)
leak_cpu=$(($(grep -c ^processor /proc/cpuinfo) > 1))
lab-leak -c $leak_cpu -- lab-vmm -g /lab/guest.elf -o /tmp/truth-leak.txt -n 1 -t 1 -H $halt_us \
	-c $leak_cpu > /tmp/leak.txt 2>&1
rc=$?
cat /tmp/leak.txt
[ $rc -eq 0 ] || finish "FAIL guest context leak check isa=$isa"
# the PMI path from real NMIs (test/lab/nmi): the vCPU pinned to CPU 1, NMIs
# sent to it one at a time; what perf's guest callbacks return in the NMI
# handler is checked like the samples
if [ -e /proc/vmctx_lab_nmi ] && [ "$(grep -c ^processor /proc/cpuinfo)" -ge 2 ]; then
	# each NMI in guest mode also asks for the guest's call chain
	chain_ev=$tr/events/kvm/kvm_guest_callchain/enable
	[ -e $chain_ev ] && [ -e $kvmp/perf_callchain_max_pages ] || chain_ev=
	[ -n "$chain_ev" ] && { echo > $tr/trace; echo 1 > $chain_ev; }
	# (its vCPU thread first, then 0.3 s for the guest to start: on a
	# loaded machine lab-vmm took longer than a fixed 0.3 s to start, and
	# the 3,000 NMIs longer than its 2 s, and only 14 to 33 of them found
	# the guest running; 4 s now, most of it left over on an idle one)
	lab-vmm -g /lab/guest.elf -o /tmp/truth-nmi.txt -n 1 -t 4 -H $halt_us -c 1 &
	vmmpid=$!
	i=0
	while [ "$(ls /proc/$vmmpid/task 2>/dev/null | wc -l)" -lt 2 ] && [ $i -lt 500 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	sleep 0.3
	taskset -c 0 sh -c 'echo "1 3000 200" > /proc/vmctx_lab_nmi' ||
		finish "FAIL sending NMIs isa=$isa"
	wait $vmmpid || finish "FAIL vmm (NMI) isa=$isa"
	cat /proc/vmctx_lab_nmi > /tmp/nmi.txt
	echo "VMCTX-LAB: NMI path: $(grep -c '^S ' /tmp/nmi.txt) NMIs recorded, $(awk '$1 == "S" && $7 >= 4' /tmp/nmi.txt | wc -l) in guest mode"
	lab-check -t /tmp/truth-nmi.txt -s /tmp/nmi.txt -i "$isa" -m 50 ||
		finish "FAIL NMI path checks isa=$isa"
	if [ -n "$chain_ev" ]; then
		# each NMI in guest mode got a cookie from KVM (its S line's last
		# field), and the walk with that cookie (one vCPU: cookies are
		# per vCPU) starts at the NMI's guest IP.  Two NMIs can land in
		# one exit (under the emulator the second, sent 200 us later, can
		# wait until the first one's handler returns, still in the
		# exit's window): they share the cookie and its one walk.  Every
		# cookie has its walk, even the last (KVM walks right after the
		# exit the NMI was taken in, before handling it); no walk is left
		# over.
		echo 0 > $chain_ev
		awk '$1 == "S" && $7 >= 4 { print $6, $13 }' /tmp/nmi.txt > /tmp/nmi-g.txt
		grep 'kvm_guest_callchain: ' $tr/trace > /tmp/chain-lines.txt
		set -- $(awk 'NR == FNR { n++; if ($2 == "" || $2 == 0) { none++; if (!first) first = "NMI " n; next }
				if ($2 in ip) { shared++; if (ip[$2] != $1) { bad++; if (!first) first = "NMI " n } }
				else ip[$2] = $1
				next }
			{ m++; c = $0; sub(/.* cookie /, "", c); sub(/ .*/, "", c)
			  w = $0; sub(/.*ips [{]/, "", w); sub(/[,}].*/, "", w)
			  if (c in walk) { dup++; if (!first) first = "walk " m; next }
			  walk[c] = w
			  if (!(c in ip)) { extra++; if (!first) first = "walk " m }
			  else if (ip[c] != w) { bad++; if (!first) first = "walk " m } }
			END { for (c in ip) if (!(c in walk)) { nowalk++; if (!first) first = "cookie " c }
				print n + 0, m + 0, none + 0, shared + 0, nowalk + 0, bad + 0, extra + 0, dup + 0
				print first ? first : "-" }' \
			/tmp/nmi-g.txt /tmp/chain-lines.txt)
		echo "VMCTX-LAB: NMI path: $1 NMIs in guest mode asked for a call chain; $2 walks: $3 NMIs got no cookie, $4 shared the cookie of an NMI before them (same exit), $5 cookies had no walk, $6 walks or NMIs of one cookie at another IP, $7 walks matched no NMI's cookie, $8 cookies walked twice"
		if [ "$3$5$6$7$8" != 00000 ]; then
			# the first miss: the NMIs and walks of its cookie and the
			# cookies beside it
			case $9 in
			NMI) c=$(awk -v i="${10}" 'NR == i { print $2 }' /tmp/nmi-g.txt) ;;
			walk) c=$(awk -v i="${10}" 'NR == i { sub(/.* cookie /, ""); print $1 }' /tmp/chain-lines.txt) ;;
			*) c=${10} ;;
			esac
			echo "VMCTX-LAB: NMI path: first miss at $9 ${10}, cookie $c"
			awk -v c="$c" '$2 >= c - 1 && $2 <= c + 1 { print "VMCTX-LAB: NMI", FNR ": ip", $1, "cookie", $2 }' /tmp/nmi-g.txt
			awk -v c="$c" '{ k = $0; sub(/.* cookie /, "", k); sub(/ .*/, "", k) }
				k >= c - 1 && k <= c + 1 { print "VMCTX-LAB: walk", FNR ":", $0 }' /tmp/chain-lines.txt
			finish "FAIL NMI path call chains isa=$isa"
		fi
	fi
fi
if [ -n "$also" ]; then
	/lab/experiments.sh "${exp_secs:-2}" 1000000 "$(echo "$also" | tr , ' ')" ||
		finish "FAIL experiments isa=$isa"
fi
[ "$bench" = 1 ] && /lab/lab-overhead.sh "$bench_rounds" "$bench_reps"
finish "PASS isa=$isa"
