#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# /init of the lab's L2 Linux guest.  Loads vmctx_guest.ko, records with
# vmctx-agent while two "hot" processes, one short-lived "blip" and 20 very
# short "blink" runs of it run (and,
# with vmctx.churn=SECS, one short "churn" process after another on vCPU 0
# for SECS seconds),
# and writes the bundle to the virtio disk the host gave it.  Then it
# loads and unloads the module while processes churn, and powers off.
# vmctx.work=tree runs tree (tree.c) alone instead, for the call chains;
# vmctx.work=dwarf tree-nofp, xz and perl, for the DWARF stacks (below).
. /lib/vmctx-init-common.sh
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null

# vmctx.backend: kmod (the module), bpf (no module loaded: BPF only), or
# both (two agents over the same window, the module's bundle and BPF's,
# which the host compares)
# vmctx.storm=1: a small switch ring (64 slots) and a storm of context
# switches that overruns it (switch-storm, 1 s on vCPU 0): the log's
# gaps, which the host's checks count
# vmctx.serve=1: no bundle written here: vmctx-agent serve keeps the
# records and answers on vsock (the host's perf record --vmcs-ctx asks
# when its recording ends); the guest ends once the agent says it sent
# a bundle.  Needs the BPF backend (vmctx.backend=bpf).
# vmctx.top=1 (with serve): the host's perf top --vmcs-ctx follows this
# guest live once the recording has ended; "late" starts once perf top
# has had a bundle, and runs until it has had two more (below).
secs=4 churn=0 backend=kmod work=hot storm=0 serve=0 top=0
lab_args secs churn backend work storm serve top
# the window covers the work: hot's secs, churn's if longer
wsecs=$secs
[ "$churn" -gt "$wsecs" ] && wsecs=$churn

say() { echo "VMCTX-L2: $*"; }
bye() {
	say "DONE $1"
	sleep 1
	reboot -f
}

pti=off
grep -qw pti /proc/cpuinfo && pti=on
say "up: kernel $(uname -r) cpus $(grep -c ^processor /proc/cpuinfo) pti=$pti pcid=$(grep -qw pcid /proc/cpuinfo && echo yes || echo no)"
# Debian's modules, as a distro guest has them: virtio for the disk, and
# dozens more (vmctx-agent must handle every one of them)
for m in $(cat /lib/vmctx-modules); do
	modprobe "$m" || say "modprobe $m failed"
done
n=0
while [ ! -b /dev/vda ] && [ $n -lt 50 ]; do usleep 100000; n=$((n + 1)); done
[ -b /dev/vda ] || bye "FAIL no /dev/vda (virtio_blk)"
say "modules: $(wc -l < /proc/modules) loaded"
# The guest's own scheduler, ground truth for whose page tables a guest
# kernel sample ran on: perf charges it to their owner, and a kernel
# thread or the idle loop borrows the last process's (lazy TLB).  Every
# context switch, on CLOCK_MONOTONIC (the clock of the bundles and of perf
# script's guest_time).  Started before the agents, so that their
# sched_switch probes run after this trace's, as after any probe already
# there (the module's runs last by its priority anyway): each probe stamps
# its switch while the previous task is still current, and a sample taken
# between the two stamps is the trace's next task and the agent's
# previous one; the trace's work before its stamp (its ring buffer's
# reservation and clock read) is the longer part.  Without recording
# comms (record-cmd), which only adds a probe: the switches give pids.
T=/sys/kernel/tracing
if [ "$work" = hot ] && [ -w $T/trace_clock ] && echo mono > $T/trace_clock 2>/dev/null; then
	echo 8192 > $T/buffer_size_kb
	echo 0 > $T/options/record-cmd 2>/dev/null
	echo 1 > $T/events/sched/sched_switch/enable
	echo 1 > $T/tracing_on
	sched_trace=1
fi
# vmctx.work=readme: the README's "On a real KVM host", step 4, in the
# guest: its command as written there (run-linux-lab.sh took it from the
# README), no module loaded (Debian 12's kernels have BTF: the BPF
# backend), in a directory of its own.  Its window is open once it runs
# its command (sleep); then hot runs beside it, the workload the host's
# report must show, and the host records (l1-init.sh).
if [ "$work" = readme ]; then
	cmd=$(cat /lib/vmctx-readme-guest)
	mkdir -p /tmp/readme && cd /tmp/readme || bye "FAIL no /tmp/readme"
	say "readme: in the guest: $cmd"
	sh -c "exec $cmd" > /tmp/readme.out 2> /tmp/readme.err &
	agent=$!
	i=0
	while ! pidof sleep > /dev/null; do
		kill -0 $agent 2>/dev/null || {
			while read -r line; do say "agent: $line"; done < /tmp/readme.err
			bye "FAIL the README's command in the guest exited before its window opened"; }
		i=$((i + 1))
		[ $i -lt 1500 ] || bye "FAIL the README's command in the guest: no window after 300 s"
		usleep 200000
	done
	taskset -c 1 hot -t 30 > /tmp/hot1.out &
	say "readme: the window is open"
	wait $agent || {
		while read -r line; do say "agent: $line"; done < /tmp/readme.err
		bye "FAIL the README's command in the guest"; }
	wait
	say "window closed"
	while read -r line; do say "agent: $line"; done < /tmp/readme.err
	while read -r line; do say "$line"; done < /tmp/hot1.out
	set -- /tmp/readme/*.vmctx
	[ $# = 1 ] && [ -f "$1" ] || bye "FAIL the README's command wrote no bundle (or more than one): $*"
	say "readme: bundle ${1##*/}"
	dd if="$1" of=/dev/vda bs=65536 conv=fsync 2>/dev/null || bye "FAIL writing the bundle to /dev/vda"
	say "bundle $(wc -c < "$1") bytes on vda"
	bye PASS
fi
# The window: the agents first, so every exec and exit is in their logs.
# agent BACKEND OUT ERR: start vmctx-agent record, which the end of the
# work below stops, and wait until its window is open (-v says so);
# under TCG the BPF backend takes most of a minute to load its programs.
# With the switch log (--switches), which perf charges guest samples by:
# the guest's sched_switch trace below checks it.  Sets $last to its pid.
# vmctx.work=dwarf: the agent takes each object's unwind tables too
unwind=
[ "$work" = dwarf ] && unwind=--unwind
agent() {
	local t0 i=0
	t0=$(cut -d. -f1 /proc/uptime)
	local sw=--switches
	[ "$storm" = 1 ] && sw=--switches=64
	local cmd="record" open='the window is open'
	if [ "$serve" = 1 ]; then
		cmd=serve open='serve: listening on vsock'
		# (not a job of this shell: the work's end below waits for
		# every job, and the service goes on after it)
		(vmctx-agent serve -v $sw --backend=$1 2>$3 & echo $! > /tmp/agent.pid)
		last=$(cat /tmp/agent.pid)
	else
		vmctx-agent record -v $sw $unwind --backend=$1 -o $2 -d 900 2>$3 &
		last=$!
	fi
	# (the module's window opens at once: no polling then, whose short
	# processes would run into the window's start)
	[ "$backend" = kmod ] && return
	while ! grep -q "$open" $3; do
		kill -0 $last 2>/dev/null || { cat $3; bye "FAIL vmctx-agent $cmd --backend=$1 exited"; }
		i=$((i + 1))
		[ $i -lt 1500 ] || bye "FAIL vmctx-agent --backend=$1: no window after 300 s"
		usleep 200000
	done
	say "agent --backend=$1: window open after $(($(cut -d. -f1 /proc/uptime) - t0)) s"
}
case $backend in
bpf)
	agent bpf /tmp/guest1.vmctx /tmp/agent.err
	agent=$last
	;;
*)
	insmod /lib/vmctx_guest.ko || bye "FAIL insmod"
	# (BPF's window first, as it opens late, and it ends after the
	# module's, so that it covers the module's window and the work)
	if [ "$backend" = both ]; then
		agent bpf /tmp/guest1-bpf.vmctx /tmp/agent-bpf.err
		agent_bpf=$last
	fi
	agent kmod /tmp/guest1.vmctx /tmp/agent.err
	agent=$last
	;;
esac
# the window's start: the agent whose bundle the checks read is recording
window_t0=$(cut -d' ' -f1 /proc/uptime)
# vmctx.work=tree: the call-chain run.  tree alone (tree.c: a known call
# tree through libtree.so), on vCPU 1 for vmctx.secs seconds and at least
# 32,000 rounds (34,000-44,000 in 8 s on an idle lab host; on a host half
# as fast the same seconds hold half the rounds, and half the samples the
# checks judge by); then the bundle and its line, and nothing else
if [ "$work" = tree ]; then
	sleep 1
	taskset -c 1 tree -t "$secs" -n 32000 > /tmp/tree.out || bye "FAIL tree"
	sleep 1
	kill -INT $agent
	wait $agent || { cat /tmp/agent.err; bye "FAIL vmctx-agent record"; }
	say "window closed"
	say "$(cat /tmp/tree.out)"
	dd if=/tmp/guest1.vmctx of=/dev/vda bs=65536 conv=fsync 2>/dev/null ||
		bye "FAIL writing the bundle to /dev/vda"
	say "bundle $(wc -c < /tmp/guest1.vmctx) bytes on vda"
	bye PASS
fi
# vmctx.work=dwarf: the DWARF stack run, for the host's perf record
# --vmcs-ctx --call-graph dwarf.  tree-nofp (tree.c built without frame
# pointers) alone on vCPU 1 for vmctx.secs seconds and at least 24,000
# rounds (25,000-26,000 in 5 s on an idle lab host: as above); then Debian's own xz
# and perl (no frame pointers either), vmctx.secs seconds each, under this
# guest's own perf record --call-graph dwarf (Debian's linux-perf), whose
# recording is the reference the host's chains are compared with.  Then
# the bundle (with the unwind tables: the agent's --unwind), the guest's
# recording and the programs' lines, as a tar on vda.
if [ "$work" = dwarf ]; then
	d=/tmp/dwarf
	mkdir -p $d
	# (the host's recording starts at this word: L1's window.sh)
	say "dwarf: ready"
	sleep 3
	taskset -c 1 tree-nofp -t "$secs" -n 24000 > $d/tree.out || bye "FAIL tree-nofp"
	sleep 1
	taskset -c 1 /usr/bin/perf record -q -N -B --call-graph dwarf,8192 -e cpu-clock -c 4000000 \
		-o $d/guest.data -- sh /lib/dwarf-work.sh "$secs" > $d/work.out 2> $d/perf.err ||
		{ cat $d/perf.err; bye "FAIL the guest's perf record --call-graph dwarf"; }
	sleep 1
	kill -INT $agent
	wait $agent || { cat /tmp/agent.err; bye "FAIL vmctx-agent record"; }
	say "window closed"
	say "$(cat $d/tree.out)"
	while read -r l; do say "guest perf: $l"; done < $d/perf.err
	while read -r l; do say "$l"; done < $d/work.out
	cp /tmp/guest1.vmctx $d/
	# (a tar straight onto the disk: its end is tar's own)
	tar -c -f /dev/vda -C /tmp dwarf && sync ||
		bye "FAIL writing the DWARF run's files to /dev/vda"
	say "dwarf files on vda ($(wc -c < $d/guest.data) bytes of the guest's perf.data)"
	bye PASS
fi
# A window that does not close: once its work should long have ended
# (90 s of this guest's time after), say what each task waits on, the
# interrupts each vCPU has taken and the last context switches, once;
# the host's look (l2-look.sh) shows KVM's side.  The perf run's guest2
# went silent in its window in three cold CIs (30 November, 1 December),
# both vCPUs halted, and nothing said why.  Not a job of this shell: the
# window's end waits for every job.  One sleep, not a poll: a timer a
# second on a vCPU would hide a wakeup that never comes.
stall_task() {
	local p=$1 f state cpu comm rest
	f=$(cat "$p/stat" 2>/dev/null) || return 1
	rest=${f##*) }
	set -- $rest
	state=$1 cpu=${37:-?}
	comm=$(cat "$p/comm" 2>/dev/null)
	# user tasks only, and kernel threads not asleep
	[ "$2" = 2 ] || [ "${p##*/}" = 2 ] && [ "$state" = S ] && return 1
	[ "$state" = I ] && return 1
	echo "${p##*/} $comm $state cpu$cpu $(cat "$p/wchan" 2>/dev/null)"
}
stall_report() {
	local p t blocked=
	say "stall: the window opened at $window_t0 s; at $(cut -d' ' -f1 /proc/uptime) s it has not closed"
	grep -E '^ *(LOC|RES|CAL|TLB):' /proc/interrupts | tr -s ' ' | sed 's/^/VMCTX-L2: stall: irq /'
	for p in /proc/[0-9]*; do
		t=$(stall_task "$p") || continue
		say "stall: task $t"
		case $t in
		*" R "*) ;;
		*) say "stall:   $(head -n 6 "$p/stack" 2>/dev/null | sed 's/^\[<[0-9a-f]*>\] //' | tr '\n' '<')" ;;
		esac
		# the digest: the work's programs and the agent, not the
		# shells and this report's own
		case " $t " in
		*" sh "* | *" init "* | *" usleep "* | *" sleep "* | *" cat "* | *" sed "* | *" head "* | *" tr "*) ;;
		*) blocked="$blocked, $t" ;;
		esac
	done
	[ -z "${sched_trace:-}" ] || tail -n 24 $T/trace | sed 's/^/VMCTX-L2: stall: trace /'
	sleep 5
	grep -E '^ *(LOC|RES|CAL):' /proc/interrupts | tr -s ' ' | sed 's/^/VMCTX-L2: stall: 5 s later: irq /'
	say "stall: blocked: ${blocked#, }"
}
( (sleep $((wsecs + 90)); [ -f /tmp/window.closed ] || stall_report) & )
sleep 1
[ "$storm" = 1 ] && switch-storm 1 0 > /tmp/storm.out &
# two hot processes (-n 2), both on vCPU 1, so that the guest's scheduler
# shares it between them, each for the work's time and at least 300
# rounds, and neither stopping before the other: the host samples a
# round 0.4 times where the emulator is fastest (646 and 719 rounds in
# 4 s, 270 and 280 samples, in CI on 2 December) and more often where it
# is slower, and the checks judge a mix from 50 samples.  Under a second
# load the same day, 4 s gave 48 and 69 rounds: 31 and 39 samples.  Two
# instances with floors of their own, started apart, ran alone at each
# end, at other speeds of the emulator: the one with 44% of the rounds
# got 57% of the samples.
(taskset -c 1 hot -n 2 -t "$secs" -r 300 > /tmp/hot.out; touch /tmp/hot.done) &
blip -t 1 > /tmp/blip.out &
# blink: 20 short runs of hot (a single round, a few ms each) under a name
# of their own, one after the other: dynamically linked, so their code is
# in hot and, mapped by ld.so, in libc.so.6; each is gone before a poll.
ln -sf hot /bin/blink
(sleep 1; i=0; while [ $i -lt 20 ]; do blink -t 0 > /dev/null; i=$((i + 1)); done; touch /tmp/blink.done) &
# perl: Debian's own /usr/bin/perl, unmodified, two copies started from a
# shell on vCPU 1 once hot is done: one loops for 5 s, the other for 10 s,
# so that they share the vCPU for the first 5 s.  Each says where its text
# lay and the CPU time it had (times(): the guest's own account), which
# the host checks perf's split and names against.  Only beside churn,
# whose window covers their 10 s.
perl_prog='my $t = time + shift; my ($i, $s) = (0, 0);
while (1) { $s += $i++ * 3 % 7; last if $i % 20000 == 0 && time >= $t }
open(my $m, "<", "/proc/self/maps") or die;
while (<$m>) { print "perl: pid $$: text 0x$1-0x$2 off 0x$3\n" if m{^([0-9a-f]+)-([0-9a-f]+) r-xp ([0-9a-f]+) \S+ \S+\s+/usr/bin/perl$} }
my @c = times; printf "perl: pid %d: cpu %.2f s, %d rounds\n", $$, $c[0] + $c[1], $i;'
if [ "$churn" -gt 0 ]; then
	(while [ ! -f /tmp/hot.done ]; do usleep 100000; done
	 taskset -c 1 /usr/bin/perl -e "$perl_prog" 5 > /tmp/perl1.out &
	 taskset -c 1 /usr/bin/perl -e "$perl_prog" 10 > /tmp/perl2.out &
	 wait
	 touch /tmp/perl.done) &
else
	touch /tmp/perl.done
fi
# mark: 200 CPUIDs, 10 ms apart, each between two readings of the clock,
# which the host's perf records as exits (perf-check.sh)
mark -n 200 -i 10 > /tmp/mark.out &
# churn: processes of 20 ms of work each, one after the other on vCPU 0,
# whose freed page-table roots the next ones reuse at once.  With -p an
# even pid runs only hot_alpha and an odd one only hot_beta, so that the
# host can tell a sample named with a neighbouring process.  They stop a
# second before the agent's window closes (it lasts wsecs + 2 from before
# the "sleep 1" above): the host records until the guest says so, and
# churn outside the window is in no bundle.
if [ "$churn" -gt 0 ]; then
	(sleep "$churn"; touch /tmp/stop) &
	taskset -c 0 sh -c 'n=0; while [ ! -f /tmp/stop ]; do churn -p -t 0.02 >/dev/null; n=$((n + 1)); done; echo $n > /tmp/churn.n' &
	churner=$!
fi
# The window lasts the work's time and 2 s more from the module's agent's
# start, and until the hot instances, the blinks and the perl copies are
# done (hot's floor of rounds may outlast the work's time; 20 execs of a
# dynamically linked program take seconds when the host is busy, and
# perl starts only after hot: on a slow host the 2 s were once too few,
# and perl's last 1.5 s fell outside every bundle); SIGINT ends it, as
# Ctrl-C would, and the agent writes its bundle.  BPF's 10 s later,
# while the module's agent writes its bundle, as with fixed windows
# before.
while [ ! -f /tmp/hot.done ] || [ ! -f /tmp/blink.done ] || [ ! -f /tmp/perl.done ] ||
	awk -v s="$window_t0" -v w="$((wsecs + 2))" '{ exit !($1 < s + w) }' /proc/uptime; do
	usleep 100000
done
[ "$serve" = 1 ] || kill -INT $agent
[ -n "${agent_bpf:-}" ] && (sleep 10; kill -INT $agent_bpf) &
[ "$serve" = 1 ] || wait $agent || { cat /tmp/agent.err; bye "FAIL vmctx-agent record"; }
if [ -n "${agent_bpf:-}" ]; then
	wait $agent_bpf || { cat /tmp/agent-bpf.err; bye "FAIL vmctx-agent record --backend=bpf"; }
fi
touch /tmp/stop
wait
[ "$churn" -gt 0 ] && say "churn: $(cat /tmp/churn.n) processes of 20 ms"
[ "$storm" = 1 ] && say "switch storm: $(cat /tmp/storm.out) (round trips, seconds) on vCPU 0"
# The host stops sampling when it reads this; give it a moment, so that
# the processes below (outside the agent's window) are not sampled.
touch /tmp/window.closed
say "window closed"
sleep 1
# A serving agent: the host's perf record, whose recording this line
# ended, asks for the bundle as it finishes; the agent builds it in a
# child and sends it, or fails to, and says which.  It is stopped once it
# has (the host gives it 900 s: l1-init.sh; its console says where it
# is every 10 s meanwhile, so that the host does not take it for hung).
if [ "$serve" = 1 ]; then
	i=0
	until grep -qE 'serve: (sent|could not send) [0-9]* bytes|serve: no bundle for a request' /tmp/agent.err; do
		kill -0 $agent 2>/dev/null || { cat /tmp/agent.err; bye "FAIL vmctx-agent serve exited"; }
		i=$((i + 1))
		[ $((i % 50)) != 0 ] || say "serve: waiting for the host's request, or the bundle's build ($((i / 5)) s)"
		[ $i -lt 4500 ] || { grep '^vmctx-agent: ' /tmp/agent.err | tail -n 6; bye "FAIL vmctx-agent serve sent no bundle in 900 s"; }
		usleep 200000
	done
	grep -q 'serve: sent [0-9]* bytes' /tmp/agent.err ||
		{ grep '^vmctx-agent: ' /tmp/agent.err | tail -n 6; bye "FAIL vmctx-agent serve could not send its bundle"; }
	# vmctx.top=1: the host's perf top --vmcs-ctx (l1-init.sh) asks the
	# agent for a bundle every few seconds.  Once it has had one (the
	# agent's second bundle: the first was perf record's), "late" starts:
	# hot under a name of its own, a process perf top's bundle cannot
	# hold yet, on vCPU 1 beside nothing.  perf top must name it with
	# hot's functions once its next bundle comes; it runs until perf top
	# has had two more (the second begun after late's start, whatever the
	# first), then stops, and the service with it, as below.
	if [ "$top" = 1 ]; then
		served() { grep -c 'serve: sent [0-9]* bytes' /tmp/agent.err; }
		i=0
		until [ "$(served)" -ge 2 ]; do
			kill -0 $agent 2>/dev/null || { cat /tmp/agent.err; bye "FAIL vmctx-agent serve exited"; }
			i=$((i + 1))
			[ $((i % 50)) != 0 ] || say "top: waiting for perf top's first bundle ($((i / 5)) s)"
			[ $i -lt 3000 ] || bye "FAIL top: the host's perf top fetched no bundle in 600 s"
			usleep 200000
		done
		ln -sf hot /bin/late
		n=$(served)
		taskset -c 1 late -t 900 > /dev/null &
		late=$!
		say "top: late started, pid $late, after $n bundles served"
		i=0
		until [ "$(served)" -ge $((n + 2)) ]; do
			i=$((i + 1))
			[ $((i % 50)) != 0 ] || say "top: late runs, $(served) bundles served ($((i / 5)) s)"
			[ $i -lt 3000 ] || { kill $late; bye "FAIL top: the host's perf top fetched no more bundles in 600 s"; }
			usleep 200000
		done
		kill $late
		wait $late 2>/dev/null
		say "top: late stopped, after $(served) bundles served"
	fi
	kill -TERM $agent
	i=0
	while ! grep -q 'serve: stopped by' /tmp/agent.err && [ $i -lt 300 ]; do usleep 100000; i=$((i + 1)); done
	grep -q 'serve: stopped by SIGTERM' /tmp/agent.err || { cat /tmp/agent.err; bye "FAIL vmctx-agent serve did not stop cleanly on SIGTERM"; }
	say "bundle served: $(sed -n 's/.*serve: \(sent [0-9]* bytes.*\)/\1/p' /tmp/agent.err | head -n 1)"
fi
# the context switches, "CPU NS NEXT_PID" each
if [ -n "${sched_trace:-}" ]; then
	echo 0 > $T/tracing_on
	awk '/ sched_switch: / {
		c = $0; sub(/^[^[]*\[/, "", c); sub(/\].*$/, "", c)
		t = ""; n = ""
		for (i = 1; i <= NF; i++) {
			if (t == "" && $i ~ /^[0-9]+\.[0-9]+:$/) t = $i
			if ($i ~ /^next_pid=/) n = substr($i, 10)
		}
		if (t == "" || n == "") next
		sub(/:$/, "", t); split(t, p, ".")
		printf "%d %s%s %s\n", c, p[1], substr(p[2] "000000000", 1, 9), n }' $T/trace |
		gzip > /tmp/sched.gz
	say "sched switches: $(zcat /tmp/sched.gz | wc -l)"
fi
# what the agents said (-v: the backend, what did not load, the summary)
grep '^vmctx-agent: ' /tmp/agent.err | grep -v 'libbpf: [0-9]*: \|libbpf: ;' | tail -n 6 |
	while read -r line; do say "agent: $line"; done
[ -f /tmp/agent-bpf.err ] &&
	grep '^vmctx-agent: ' /tmp/agent-bpf.err | grep -v 'libbpf: [0-9]*: \|libbpf: ;' | tail -n 6 |
	while read -r line; do say "agent-bpf: $line"; done
# Each bundle holds every blink with its mappings of hot and libc.so.6,
# however the backend got them (the module at exec and exit, BPF as they
# are made).
for f in /tmp/guest1.vmctx /tmp/guest1-bpf.vmctx; do
	[ -f $f ] || continue
	zcat $f > /tmp/bundle.txt || bye "FAIL $f does not decompress"
	# (by pid: an exec that a poll caught half done leaves the old image
	# an entry of its own under the new name)
	set -- $(awk 'FNR == NR { if ($1 == "task" && $NF == "comm=blink" && $7 != "exit=-") { p = $4; sub(/^pid=/, "", p); b[$2] = p; n[p] = 1 } next }
		$1 == "map" && ($2 in b) { if ($NF ~ /\/hot$/) h[b[$2]] = 1; if ($NF ~ /\/libc\.so\.6$/) l[b[$2]] = 1 }
		END { for (p in n) { c++; if ((p in h) && (p in l)) k++ } print c + 0, k + 0 }' /tmp/bundle.txt /tmp/bundle.txt)
	say "blink in ${f#/tmp/}: $1 short processes, $2 with hot and libc.so.6 mapped"
	if [ "$1" -ne 20 ] || [ "$2" -ne 20 ]; then
		grep '^task .* comm=blink$' /tmp/bundle.txt | while read -r line; do say "$line"; done
		bye "FAIL blink in ${f#/tmp/}: $1 of 20 processes, $2 with their code mapped"
	fi
done
rm -f /tmp/bundle.txt
# the work each hot did, for the host's check of how the samples split
# (and where each one's libc code lay)
{ cat /tmp/hot.out; grep 'libc text' /tmp/blip.out; cat /tmp/mark.out
  cat /tmp/perl1.out /tmp/perl2.out 2>/dev/null; } |
	while read -r line; do say "$line"; done
# The bundle goes out on the virtio disk the host gave us (/dev/vda),
# unless the agent served it.
if [ "$serve" = 0 ]; then
	dd if=/tmp/guest1.vmctx of=/dev/vda bs=65536 conv=fsync 2>/dev/null || bye "FAIL writing the bundle to /dev/vda"
	say "bundle $(wc -c < /tmp/guest1.vmctx) bytes on vda"
fi
# BPF's bundle of the same window, 8 MiB into the disk
if [ -f /tmp/guest1-bpf.vmctx ]; then
	[ "$(wc -c < /tmp/guest1.vmctx)" -le 8388608 ] && [ "$(wc -c < /tmp/guest1-bpf.vmctx)" -le 8388608 ] ||
		bye "FAIL a bundle is over 8 MiB"
	dd if=/tmp/guest1-bpf.vmctx of=/dev/vda bs=65536 seek=128 conv=fsync 2>/dev/null ||
		bye "FAIL writing BPF's bundle to /dev/vda"
	say "bpf bundle $(wc -c < /tmp/guest1-bpf.vmctx) bytes on vda at 8 MiB"
fi
# the guest's context switches, 16 MiB into the disk
if [ -s /tmp/sched.gz ] && [ "$(wc -c < /tmp/sched.gz)" -le 8388608 ]; then
	dd if=/tmp/sched.gz of=/dev/vda bs=65536 seek=256 conv=fsync 2>/dev/null &&
		say "sched $(wc -c < /tmp/sched.gz) bytes on vda at 16 MiB"
fi
say "timers: $(grep -E 'LOC|TIMER' /proc/interrupts | tr -s ' ' | tr '\n' ' ') clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"

# Unload and reload while processes come and go: no oops, no leak.  Only
# what the kernel says from here on counts: a distro kernel's boot already
# says "WARNING" (RETBleed and the like on this emulated CPU).
complaints='BUG|Oops|WARNING|general protection'
said=$(dmesg | grep -cE "$complaints")
if [ "$backend" != bpf ]; then
	rmmod vmctx_guest || bye "FAIL rmmod"
fi
free_before=$(awk '/MemFree/ {print $2}' /proc/meminfo)
( i=0; while [ $i -lt 200 ]; do true; i=$((i + 1)); done ) &
cycler=$!
i=0
while [ $i -lt 20 ]; do
	insmod /lib/vmctx_guest.ko || bye "FAIL insmod $i"
	cat /proc/vmctx_guest/tasks > /dev/null 2>&1
	rmmod vmctx_guest || bye "FAIL rmmod $i"
	i=$((i + 1))
done
wait $cycler
if [ "$(dmesg | grep -cE "$complaints")" -gt "$said" ]; then
	dmesg | grep -E "$complaints" | tail -n +$((said + 1)) | tail -20
	bye "FAIL kernel complained during load/unload churn"
fi
say "churn: 20 load/unload cycles, MemFree $free_before -> $(awk '/MemFree/ {print $2}' /proc/meminfo) kB"
bye PASS
