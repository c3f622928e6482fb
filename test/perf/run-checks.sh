#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Checks of the perf patches (the tools half of kernel-patches/) that run without a
# vmctx kernel: synthetic perf.data files (both endiannesses, pipe and file)
# and bundles, an LD_PRELOAD shim for the record options, the unpatched-
# kernel message.  PERF=path/to/patched/perf; libvmctx must be findable by
# pkg-config and the loader.  Needs python3 and cc.  PERF_NO_LIBVMCTX, if
# set, is a perf built with NO_LIBVMCTX=1, for its message; PERF_LIBUNWIND,
# if set, the patched perf built with libunwind's unwinder, which unwinds
# the guest stacks as PERF does with libdw's.
set -u
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
P=${PERF:?set PERF to the patched perf binary}
fail=0
check() { if [ "$1" = "$2" ]; then echo "ok   $3"; else echo "FAIL $3: got '$1', want '$2'"; fail=1; fi; }
# max_rss CMD...: run CMD, then say its peak RSS ("maxrss_kb N") on stderr
maxrss_py='import resource, subprocess, sys
rc = subprocess.call(sys.argv[1:])
print("maxrss_kb %d" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(rc)'
max_rss() {
	python3 -c "$maxrss_py" "$@"
}
# wait_for FILE PATTERN SECONDS: until a line of FILE matches, or SECONDS;
# a background perf top's progress, however slow a loaded machine starts it
wait_for() {
	for i in $(seq $(($3 * 10))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
# gone PID: until the background job PID has ended, 10 s at most, then
# killed with its children (a perf that ignored SIGINT fails its check,
# and does not hang the run)
gone() {
	for i in $(seq 100); do kill -0 $1 2>/dev/null || break; sleep 0.1; done
	pkill -KILL -P $1 2>/dev/null
	kill -KILL $1 2>/dev/null
	wait $1
}
# wait_socks NAME...: until each agent's NAME.sock is there (5 s at most each)
wait_socks() {
	for m in "$@"; do
		for i in $(seq 50); do [ -S $m.sock ] && break; sleep 0.1; done
	done
}

cc -O1 -o gen-bundle "$src/gen-bundle.c" $(pkg-config --cflags --libs libvmctx) || exit 2
cc -O1 -o serve-bundle "$src/serve-bundle.c" $(pkg-config --cflags --libs libvmctx) || exit 2
cc -O1 -o gen-fleet "$src/gen-fleet.c" $(pkg-config --cflags --libs libvmctx) -lm || exit 2
cc -O1 -shared -fPIC -o fake-guest-ctx.so "$src/fake-guest-ctx.c" -ldl || exit 2
cp "$src"/gen-perfdata.py "$src"/gen-wakeup.py .
# a bundle this libvmctx does not read (version 9), and a truncated one
./gen-bundle v1.vmctx && zcat v1.vmctx | sed '1s/^vmctx-bundle 1$/vmctx-bundle 9/' | gzip > v9.vmctx
head -c 5 v1.vmctx > trunc.vmctx
python3 gen-perfdata.py le.data >/dev/null; python3 gen-perfdata.py be.data be >/dev/null
python3 gen-perfdata.py le-file.data file >/dev/null; python3 gen-perfdata.py be-file.data be file >/dev/null
python3 gen-perfdata.py nofeat.data file nofeat >/dev/null
python3 gen-perfdata.py feat35.data file feat35other >/dev/null
python3 gen-perfdata.py feat35-be.data be file feat35other >/dev/null
python3 gen-perfdata.py up32.data file upstream32 >/dev/null
./gen-bundle guest1.vmctx
./gen-bundle hostile.vmctx hostile

# the open's missing-features fallback finds the unknown bit
out=$($P record --vmcs-ctx -e cpu-clock -a -o /tmp/vmcs.data -- sleep 1 2>&1); rc=$?
check "$(echo "$out" | grep -v '^Error:$')" "--vmcs-ctx needs a kernel with PERF_SAMPLE_GUEST_CTX (the vmctx KVM patches); this kernel rejects it." "record --vmcs-ctx on an unpatched kernel: one sentence"
check "$([ $rc -ne 0 ] && echo failed)" failed "record --vmcs-ctx on an unpatched kernel: exit status"
check "$($P report --header-only -i le-file.data 2>&1 | grep -c '^# guest ctx: PERF_SAMPLE_GUEST_CTX is sample_type bit 25, block version 1$')" 1 "header: HEADER_GUEST_CTX printed"
out=$($P report --stdio -i nofeat.data 2>&1); rc=$?
check "$(echo "$out" | grep -c 'does not say it is one (no guest ctx header): refusing to guess')" 1 "a file with bit 25 but no HEADER_GUEST_CTX is refused"
check "$([ $rc -ne 0 ] && echo failed)" failed "a file with bit 25 but no HEADER_GUEST_CTX: exit status"
# Feature 35 is as private as bit 25: one without HEADER_GUEST_CTX's magic
# (another proposal's, or this series' first draft) is no such header.
for f in feat35.data feat35-be.data; do
	out=$($P report --stdio -i $f 2>&1); rc=$?
	check "$rc:$(echo "$out" | grep -c 'does not say it is one (no guest ctx header): refusing to guess')" \
		"$([ $rc -ne 0 ] && echo $rc):1" "$f: a feature 35 without the magic is refused"
done
# Upstream's feature 32 (HEADER_CPU_DOMAIN_INFO) is not this series': a file
# with it and HEADER_GUEST_CTX at 35 is read, and the header names neither
# it nor an unnamed feature as missing
out=$($P report --stdio --header -i up32.data 2>&1); rc=$?
check "$rc:$(echo "$out" | grep -c '^# guest ctx: PERF_SAMPLE_GUEST_CTX is sample_type bit 25, block version 1$'):$(echo "$out" | grep -c '(null)')" \
	"0:1:0" "a file with upstream's feature 32: read, its guest ctx header found, no unnamed feature printed"
check "$($P test 'Sample parsing' 2>&1 | grep -c ': Ok')" 2 "perf test Sample parsing (generic + x86)"
check "$($P test 'User mapping named like a kernel module' 2>&1 | grep -c ': Ok')" 1 "perf test: a user mapping named like a module"
check "$($P test "KVM guests' TSC offsets over a recording" 2>&1 | grep -c ': Ok')" 1 "perf test: KVM TSC offsets that change while recording"
check "$($P test 'DSO symbols' 2>&1 | grep -c ': Ok')" 2 "perf test DSO symbols: made on demand, looked up in an index"

LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -e cpu-clock -a -B -o /tmp/shim.data -- sleep 0.2 >/dev/null 2>&1
ev=$($P evlist -v -i /tmp/shim.data 2>/dev/null)
check "$(echo "$ev" | grep -c 'GUEST_CTX')" 3 "--vmcs-ctx: bit on cpu-clock, kvm_vcpu_wakeup and dummy"
check "$(echo "$ev" | grep -c 'exclude_guest')" 0 "--vmcs-ctx: exclude_guest cleared"
check "$(echo "$ev" | grep -c 'context_switch: 1')" 1 "--vmcs-ctx: switch events on the tracking event"
check "$(echo "$ev" | grep 'cpu-clock' | grep -c 'IP|TID|TIME|CPU|PERIOD')" 1 "--vmcs-ctx: TID, TIME, CPU"
LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -e cpu-clock -c 100000 -a -B -o /tmp/shim-c.data -- sleep 0.2 >/dev/null 2>&1
ev=$($P evlist -v -i /tmp/shim-c.data 2>/dev/null)
check "$(echo "$ev" | grep '^kvm:kvm_vcpu_wakeup' | grep -c 'sample_freq }: 1,')" 1 "--vmcs-ctx -c 100000: every kvm_vcpu_wakeup is recorded"
check "$(echo "$ev" | grep '^cpu-clock' | grep -c 'sample_freq }: 100000,')" 1 "--vmcs-ctx -c 100000: cpu-clock period"
LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -e cpu-clock -c 100000 -e kvm:kvm_exit -e kvm:kvm_entry \
	-a -B -o /tmp/shim-x.data -- sleep 0.2 >/dev/null 2>&1
ev=$($P evlist -v -i /tmp/shim-x.data 2>/dev/null)
check "$(echo "$ev" | grep -E '^kvm:kvm_(exit|entry)' | grep -c 'sample_freq }: 1,')" 2 \
	"--vmcs-ctx -c 100000: every kvm_exit and kvm_entry is recorded, for --guest-view=exits"

# An EINVAL is blamed on the bit only if the bit alone, on a dummy event,
# gets EINVAL too: with the shim refusing every event but that probe, the
# kernel knows the bit, and the later fallbacks and perf's own message run.
out=$(VMCTX_SHIM_ERRNO=22 VMCTX_SHIM_PROBE_OK=1 LD_PRELOAD=./fake-guest-ctx.so \
	$P record --vmcs-ctx -e cpu-clock -a -o /tmp/einval.data -- true 2>&1); rc=$?
check "$([ $rc -ne 0 ] && echo failed):$(echo "$out" | grep -c 'needs a kernel with PERF_SAMPLE_GUEST_CTX'):$(echo "$out" | grep -c 'returned with 22 (Invalid argument)')" \
	"failed:0:1" "record --vmcs-ctx, EINVAL from a kernel that knows the bit: not blamed on the bit"

# Precise events sample no guest (the host's PEBS stops at VM entry):
# refused with one sentence, whatever the PMU; the default event is not one.
out=$($P record --vmcs-ctx -e cycles:P -a -o /tmp/pebs.data -- true 2>&1); rc=$?
check "$rc:$(echo "$out" | grep -c '^perf record: --vmcs-ctx: cycles:P is a precise event, which samples no guest (the host.s PEBS stops at VM entry): use it without :p or :P, or -e cpu-clock.$')" \
	"$([ $rc -ne 0 ] && echo $rc):1" "record --vmcs-ctx -e cycles:P: refused in one sentence"
out=$(LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -a -o /tmp/dflt.data -- sleep 0.2 2>&1)
check "$(echo "$out" | grep -c 'precise event')" 0 "record --vmcs-ctx without -e: the default event is not a precise one"
check "$($P evlist -v -i /tmp/dflt.data 2>/dev/null | grep -v '^dummy\|^kvm' | grep -c 'precise_ip')" 0 \
	"record --vmcs-ctx without -e: no precise_ip in the recording"
out=$(LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -e cpu-clock:H -a -o /tmp/h.data -- sleep 0.2 2>&1)
check "$(echo "$out" | grep -c '^WARNING: --vmcs-ctx: cpu-clock:H excludes the guest (:H), so its samples carry no guest context.$')" 1 \
	"record --vmcs-ctx -e cpu-clock:H: says its samples carry no guest context"
# A Linux 7.0 host with a mediated-vPMU VM answers EOPNOTSUPP: one sentence
# that names cpu-clock, not perf's fallback to exclude_guest.
out=$(VMCTX_SHIM_ERRNO=95 LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -e cycles -a -o /tmp/eop.data -- true 2>&1); rc=$?
check "$rc:$(echo "$out" | grep -v '^Error:$')" \
	"$([ $rc -ne 0 ] && echo $rc):--vmcs-ctx: cycles counts guest time, which this kernel refuses while a VM uses the mediated vPMU: record with -e cpu-clock, or run the VMs without the mediated vPMU." \
	"record --vmcs-ctx on a kernel that answers EOPNOTSUPP: one sentence"

# Linker-script markers that kallsyms lists at a kernel function's address
# (such as __cpuidle_text_start at default_idle) do not take its name: put
# one after the function that has most of a real recording's kernel samples.
ksym() { awk '$2 == "[k]" { print $3; exit }'; }
if [ -r /proc/kallsyms ] && $P record -e cpu-clock -a -o idle.data -- sleep 0.5 >/dev/null 2>&1; then
	top=$($P report -i idle.data --stdio --sort sym 2>/dev/null | ksym)
	awk -v f="$top" '{ print } NF == 3 && $3 == f { print $1 " T __vmctx_test_text_start" }' \
		/proc/kallsyms > marked.kallsyms
	case $top in
	''|0x*) echo "skip a section marker beside a kernel function: no named kernel sample" ;;
	*) check "$($P report -i idle.data --kallsyms=marked.kallsyms --stdio --sort sym 2>/dev/null | ksym)" \
		"$top" "a section marker at $top's address does not take its samples" ;;
	esac
fi

le=$($P report -D -i le-file.data 2>&1 | grep 'guest ctx' | sort | uniq -c)
be=$($P report -D -i be-file.data 2>&1 | grep 'guest ctx' | sort | uniq -c)
check "$be" "$le" "report -D: big-endian file decodes like the little-endian one"
check "$(echo "$le" | grep -c 'vcpu 0 cr3 0x1234003 asid 7 exit_reason 0x60 (interrupt) flags 0x3d (valid|svm|guest|cpl3)')" 1 "report -D: block and names"
check "$($P evlist -v -i le-file.data | grep -c 'sample_type: IP|TID|TIME|CPU|PERIOD|GUEST_CTX')" 1 "evlist -v names GUEST_CTX"
check "$($P script -i le-file.data 2>/dev/null | wc -l)" 4001 "script shows guest samples without --guest-code"
check "$($P script -i le-file.data -F tid,vcpu,guest_cr3,guest_asid,exit_reason,guest_cpl 2>/dev/null | grep -cE 'VCPU:000 +1001 +cr3:0x1234003 asid:7 exit:0x60\(interrupt\) cpl:3')" 1000 "script -F guest fields"
check "$($P script -i le-file.data -F comm,tid 2>/dev/null | grep -c 'CPU 0/KVM')" 1000 "script: guest samples show the vCPU thread's comm"
# --guest-maps: guests as perf machines.  vCPU 0's 1000 guest user samples
# (cr3 0x1234003) are bench, pid 321, in guest1.vmctx: 700 in work, 300 in
# other; vCPU 1's 1000 guest kernel samples (guest_kfunc) are on a root no
# process owns: [unresolved]; pCPU 1's 2000 (make, idle) and the
# host-for-vcpu one are host samples.  Each vCPU waits while the other runs:
# its blank time is vcpu-blank samples.
# rows: table rows, overhead dropped, sorted; ev EVENT: one event's section
rows() { grep -v '^#' | awk 'NF { $1 = ""; print substr($0, 2) }' | LC_ALL=C sort; }
ev() { awk -v e="$1" '/^# Samples: .* of event / { on = index($0, "event '\''" e) > 0 } on'; }
u=$($P report -i le-file.data --guest-maps=guest1.vmctx --stdio -n --sort comm,sym 2>&1)
check "$(echo "$u" | grep -c '700  *bench  *\[u\] work')" 1 "report --guest-maps: guest function resolved"
g=$($P report -i le-file.data --guest-maps=guest1.vmctx --stdio --guest-view=vcpu 2>&1)
check "$(echo "$g" | grep -c '^# VM pid 1000: [0-9.]* ms  OS:USER:steal:idle = ')" 1 "report --guest-view=vcpu header"
check "$(echo "$g" | sed -n 's/^#   vcpu0: .* = [0-9.]*%:[0-9.]*%:\([0-9.]*%\):.*/\1/p')" "50.02%" "two vCPUs on one pCPU: vcpu0 steal ~50%"
check "$($P report -i - --guest-maps=guest1.vmctx --stdio -n --sort vm,comm < le.data 2>/dev/null | ev cpu-clock | rows | grep -c '1000 1000 bench')" 1 \
	"report --guest-maps from a pipe"
check "$($P report -i le-file.data --guest-maps=v9.vmctx 2>&1 | grep -c 'v9.vmctx: Unsupported bundle version')" 1 "bad bundle: error names the file"
check "$($P report -i le-file.data --stdio --sort vm,vcpu,exit_reason 2>/dev/null | grep -c 'hlt (0x78)')" 1 "sort keys vm,vcpu,exit_reason"
want=$(printf '%s\n' '1 1000 CPU 1/KVM 1002:CPU 1/KVM' '1000 1000 [unresolved] -1:[unresolved]' \
	'1000 1000 bench 321:bench' '1000 - make 2000:make' '1000 - swapper 0:swapper' | LC_ALL=C sort)
gk="report -n --sort vm,comm,pid --guest-maps=guest1.vmctx"
check "$($P $gk --stdio -i le-file.data 2>/dev/null | ev cpu-clock | rows)" "$want" "sort keys vm,comm,pid: the guest process is a thread of its VM"
check "$($P $gk --stdio -i be-file.data 2>/dev/null | ev cpu-clock | rows)" "$want" "comm, pid: big-endian file"
check "$($P $gk -i le-file.data 2>/dev/null | ev cpu-clock | rows)" "$want" "comm, pid: default output"
# each vCPU waits only for the other, after one kind of exit: its waits are
# alike, one sample; with the time key, a time quantum finer than the
# vCPUs' turns (10 ticks) keeps each wait its own sample (counted by comm)
check "$($P report -i le-file.data --stdio -F sample,comm --guest-maps=1000=guest1.vmctx 2>/dev/null |
	grep -v '^#' | awk 'NF { $1 = $1; print }' | LC_ALL=C sort)" \
	"$(printf '%s\n' '1000 [unresolved]' '1000 bench' '1000 make' '1000 swapper' '1 CPU 1/KVM' '2 [steal]' '1 [idle]' |
		LC_ALL=C sort)" \
	"-F sample,comm, bundle given by VM pid: a vCPU's like waits one sample"
check "$($P report -i le-file.data --stdio -F sample,comm,time --guest-maps=1000=guest1.vmctx --time-quantum=1ms 2>/dev/null |
	grep -v '^#' | awk 'NF { s = $2; for (i = 3; i < NF; i++) s = s " " $i; n[s] += $1 } END { for (s in n) print n[s], s }' |
	LC_ALL=C sort)" \
	"$(printf '%s\n' '1000 [unresolved]' '1000 bench' '1000 make' '1000 swapper' '1 CPU 1/KVM' '199 [steal]' '1 [idle]' |
		LC_ALL=C sort)" \
	"-F sample,comm,time: with the time key, each wait its own sample"
# The default quantum (100 ms) holds five waits of each vCPU: at most one
# [steal] sample a vCPU a quantum (2 vCPUs, 2 s: 42), the same time in all;
# --time cuts anywhere, so each wait is its own sample again.
steal() { $P report -i le-file.data --stdio -F sample,period,comm --guest-maps=1000=guest1.vmctx "$@" 2>/dev/null |
	awk '$3 == "[steal]" { print $1, $2 }'; }
s=$(steal)
check "$([ "${s% *}" -ge 2 ] && [ "${s% *}" -le 42 ] && echo "${s#* }")" 1991000000 \
	"[steal]: a vCPU's waits in one time quantum are one sample, their time summed (got $s)"
check "$(steal --time 0.000001,)" "199 1991000000" "[steal] with --time: each wait its own sample"
check "$($P report -i le-file.data --stdio -n --sort comm,sym --guest-maps=guest1.vmctx 2>/dev/null | grep ' bench ' | awk '{print $2, $5}')" \
	"$(printf '700 work\n300 other')" "comm with sym: guest functions named from the bundle"
check "$($P report -i le-file.data --stdio -n --sort comm,dso,sym --guest-maps=guest1.vmctx 2>/dev/null | ev cpu-clock |
	awk '$3 == "bench" || $3 == "[unresolved]" {print $2, $4, $NF}')" \
	"$(printf '1000 [guest.kernel.kallsyms.1000] guest_kfunc\n700 bench work\n300 bench other')" \
	"dso: guest objects named from the bundle (the program, the guest kernel)"
check "$($P report -i le-file.data --stdio -n --sort sym --guest-maps=guest1.vmctx 2>/dev/null | grep '\[g\]' | awk '{print $2, $4}')" \
	"1000 guest_kfunc" "sym: guest kernel functions named from the bundle"
# perf makes a guest kernel's symbols as samples hit them; a dump of the
# DSOs (-vvv) walks them all: both of the bundle's (gen-bundle.c), each to
# the next one's address, the last to the map's end 4 KiB past it
check "$($P report -i le-file.data --stdio -vvv --guest-maps=guest1.vmctx 2>/dev/null |
	sed -n '/^dso: \[guest.kernel.kallsyms.1000\]/,/^dso: /p' | grep ' g guest_kfunc')" \
	"$(printf ' ffffffff81001000-ffffffff81002000 g guest_kfunc\n ffffffff81002000-ffffffff81003000 g guest_kfunc_end')" \
	"sym: a DSO dump lists the guest kernel's symbols that no sample hit"
out=$($P report -i le-file.data --stdio -n --sort comm --guest-maps=other=guest1.vmctx 2>&1)
check "$(echo "$out" | ev cpu-clock | grep -c '2000  *\[unresolved\]')" 1 "comm: a VM without its bundle is [unresolved]"
check "$(echo "$out" | grep -c 'no recorded VM matches other=guest1.vmctx')" 1 "comm: unused bundle warned about"
check "$($P report -i le-file.data --stdio --sort comm --guest-maps=v9.vmctx 2>&1 | grep -c 'v9.vmctx: Unsupported bundle version')" 1 "sort keys: bad bundle names the file"
check "$($P report -i le-file.data --guest-maps=guest1.vmctx --guest-view=vcpu --sort vm 2>&1)" \
	"perf report: --guest-view=vcpu is a preset of --sort; give one or the other." "--guest-view refuses --sort"
check "$($P report -i le-file.data --guest-view=vcpu 2>&1)" \
	"perf report: --guest-view needs the guests' bundles: --guest-maps=FILE." "--guest-view without --guest-maps: one sentence"
# a guest's names with terminal control bytes (gen-bundle hostile: host
# name g ESC ]0;owned BEL, process be ESC [2Jnch, function wo CR LF rk)
# reach the terminal escaped as \xHH, in the keys and in the views
esc=$(printf '\033'); bel=$(printf '\007'); cr=$(printf '\r')
out=$($P report -i le-file.data --stdio -n --sort comm --guest-maps=hostile.vmctx 2>&1)
check "$(printf '%s' "$out" | grep -c "$esc\|$bel\|$cr")" 0 "comm: no raw control byte reaches the terminal"
check "$(echo "$out" | grep -c '1000 .*be\\x1b\[2Jnch')" 1 "comm: the process shown with ESC as \\x1b"
out=$($P report -i le-file.data --stdio -n --sort sym --guest-maps=hostile.vmctx 2>&1)
check "$(printf '%s' "$out" | grep -c "$esc\|$bel\|$cr")" 0 "sym: no raw control byte reaches the terminal"
check "$(echo "$out" | grep -c '700 .*wo\\x0d\\x0ark')" 1 "sym: the function's CR LF escaped, one row"
out=$($P report -i le-file.data --guest-maps=hostile.vmctx --stdio --guest-view=guest 2>&1)
check "$(printf '%s' "$out" | grep -c "$esc\|$bel\|$cr")" 0 "guest view: no raw control byte reaches the terminal"
check "$(echo "$out" | grep -c '^# guest clock of VM1 (g\\x1b\]0;owned\\x07): ')" 1 "guest view: the VM's host name escaped"
check "$(echo "$out" | grep -c 'wo\\x0d\\x0ark')" 1 "guest view: the function's CR LF escaped, one row"
# --percent-limit, perf's own: of the rows (cpu-clock: the guest kernel,
# make, idle 25% each, work 17.5%, other 7.5%, one host-for-vcpu tick;
# vcpu-blank: each vCPU's steal ~50%, one [idle] run), 20 keeps five
out=$($P report -i le-file.data --guest-maps=guest1.vmctx --stdio --sort comm,sym --percent-limit=20 2>/dev/null)
check "$(echo "$out" | rows | wc -l):$(echo "$out" | grep -c ' work')" "5:0" \
	"--percent-limit=20: the rows of 20% or more"
out=$($P report -i le-file.data --guest-maps=guest1.vmctx --stdio --sort comm,sym 2>/dev/null)
check "$(echo "$out" | rows | wc -l)" 9 "no --percent-limit: every row"

# A clock sample that comes late stands for the ticks its timer missed, as
# the timeline counts them: pCPU 1's ticks 1001-1003 are missing, so its
# idle sample of tick 1004 weighs 4 (make 1000 - 2 samples, idle 1000 - 1
# samples + 3), and pCPU 1's time stays 2000 ms.
python3 gen-perfdata.py late.data file late times >/dev/null
check "$($P report -i late.data --guest-maps=guest1.vmctx --stdio --cpu 1 -t ';' -F sample,period,comm 2>/dev/null |
	awk -F';' '!/^#/ && NF == 3 { gsub(/ /, ""); print }' | sort)" \
	"$(printf '998;998000000;make\n999;1002000000;swapper')" "a late clock sample weighs the ticks it missed"
# ... and so do the folded stacks: a late sample counts the ticks its
# period stands for, not one
check "$($P report -i late.data --guest-maps=guest1.vmctx --guest-export=folded:- 2>/dev/null |
	grep '^\[host\];' | LC_ALL=C sort)" "$(printf '%s\n' '[host];make;[unknown] 998' '[host];swapper;[unknown] 1002')" \
	"--guest-export=folded: a late clock sample counts the ticks it stands for"
# perf script --guest-maps prints what perf report counts: the vCPUs'
# blank time as vcpu-blank samples of no CPU, and each clock sample with
# the period the timeline gave it, so each comm's periods sum alike
s=$($P script -i le-file.data --guest-maps=guest1.vmctx -F comm,period 2>/dev/null | grep -v '^#' |
	awk '{ p = $NF; $NF = ""; sub(/^ +/, ""); sub(/ +$/, ""); n[$0] += p }
	     END { for (c in n) print c ";" n[c] }' | LC_ALL=C sort)
r=$($P report -i le-file.data --guest-maps=guest1.vmctx --stdio --sort comm -F comm,period -t ';' 2>/dev/null |
	awk -F';' '!/^#/ && NF == 2 { gsub(/^ +| +$/, "", $1); gsub(/ /, "", $2); print $1 ";" $2 }' |
	LC_ALL=C sort)
check "$(echo "$s" | grep -c '^\[steal\];'):$s" "1:$r" "perf script --guest-maps: blank time and periods as perf report counts them"
check "$($P script -i le-file.data --guest-maps=guest1.vmctx --cpu 0 2>/dev/null | grep -c 'vcpu-blank:')" 0 \
	"perf script --guest-maps --cpu: blank time belongs to no CPU"
check "$($P script -i late.data --guest-maps=guest1.vmctx --cpu 1 -F period 2>/dev/null | grep -v '^#' |
	awk '{ n += $1 } END { print n }')" 2000000000 "perf script --guest-maps: a late clock sample's period"
# A timer late by 0.6 ticks on every other tick: each late sample reaches
# two tick slots and the next, 0.4 ticks on, none, so pCPU 1's periods
# still sum to its 2000 ms (rounding each gap alone counted 2050).
python3 gen-perfdata.py jitter.data file jitter times >/dev/null
check "$($P report -i jitter.data --guest-maps=guest1.vmctx --stdio --cpu 1 -t ';' -F period,comm 2>/dev/null |
	awk -F';' '!/^#/ && NF == 2 { gsub(/ /, ""); n += $1 } END { print n }')" 2000000000 \
	"jittered clock samples: a CPU's periods sum to its time"

# A vCPU's time is its life, tick for tick.  gen-perfdata.py vmm: 99 ticks
# of vCPU 0's turns are its thread in QEMU's code with no vCPU loaded:
# the vCPU's own host work, so vcpu0 still has ticks 0-2000 (2001 ms) and
# vcpu1 ticks 10-2000 (1991 ms); perf that left them out gave vcpu0 1902.
# 'ends': vCPU 0's thread is sampled at tick 2001 and exits (a switch-out
# with tid -1), then make has pCPU 0 to tick 2101: vcpu0 has ticks 0-2001
# (2002 ms), not the 100 ticks after its end, and vcpu1, still waiting,
# ticks 10-2101 (2092 ms).
vt() { $P report -i "$1" --guest-maps=guest1.vmctx --stdio --guest-view=vcpu 2>/dev/null |
	sed -n 's/^#   \(vcpu[01]: [0-9.]* ms\) .*/\1/p' | tr '\n' ' '; }
python3 gen-perfdata.py vmm.data file times vmm >/dev/null
check "$(vt vmm.data)" "vcpu0: 2001.000 ms vcpu1: 1991.000 ms " "a vCPU thread's host work with no vCPU loaded is the vCPU's time"
python3 gen-perfdata.py ends.data file times vmm ends >/dev/null
check "$(vt ends.data)" "vcpu0: 2002.000 ms vcpu1: 2092.000 ms " "a vCPU's time ends with its thread"

# --guest-export: gen-perfdata.py's guest process bench runs 700 ticks in
# work (IP 0x401010, k % 4 != 0) and 300 in other; the guest kernel 1000
# ticks in guest_kfunc; each vCPU waits while the other runs.
out=$($P report -i le-file.data --guest-maps=guest1.vmctx --guest-export=folded:- 2>/dev/null)
folded=$out
check "$(echo "$out" | grep -E ';bench;|guest_kfunc' | LC_ALL=C sort)" \
	"$(printf '%s\n' 'guest1 (VM1);[unresolved];guest_kfunc 1000' 'guest1 (VM1);bench;other 300' \
		'guest1 (VM1);bench;work 700')" "--guest-export=folded: the guest's stacks, nothing else on stdout"
check "$(echo "$out" | grep -c '^guest1 (VM1);\[steal\];\[steal\] (on vcpu[01]) ')" 2 "--guest-export=folded: each vCPU's steal"
check "$(echo "$out" | grep -vc '^[^#]* [0-9][0-9]*$')" 0 "--guest-export=folded: stack lines alone on stdout"
out=$($P report -i le-file.data --guest-maps=hostile.vmctx --guest-export=folded:- 2>/dev/null)
check "$(printf '%s' "$out" | grep -c "$esc\|$bel\|$cr")" 0 "--guest-export=folded: no raw control byte"
check "$(echo "$out" | grep -c '^g\\x1b\]0\\x3bowned\\x07 (VM1);be\\x1b\[2Jnch;wo\\x0d\\x0ark 700$')" 1 \
	"--guest-export=folded: names escaped, ';' too"
$P report -i le-file.data --guest-maps=guest1.vmctx --stdio --guest-export=pprof:le.pb.gz,folded:le.folded >/dev/null 2>&1
check "$(zcat le.pb.gz 2>/dev/null | wc -c | awk '{print ($1 > 0)}'):$(grep -c . le.folded)" "1:$(echo "$folded" | grep -c .)" \
	"--guest-export: two files in one pass"
if command -v go >/dev/null; then
	check "$(HOME=$work GOCACHE=$work/go go tool pprof -sample_index=samples -top -tagfocus=guest_comm=bench le.pb.gz 2>/dev/null | awk '$NF == "work" || $NF == "other" {print $1, $NF}')" \
		"$(printf '700 work\n300 other')" "--guest-export=pprof: go tool pprof reads bench's functions by its label"
	# bench runs on vCPU 0 and guest_kfunc on vCPU 1 (gen-perfdata.py):
	# vCPU 0 is a label too (pprof readers drop a numeric label of 0)
	check "$(HOME=$work GOCACHE=$work/go go tool pprof -sample_index=samples -top -tagfocus=vcpu=^0$ le.pb.gz 2>/dev/null | awk '$NF == "work" || $NF == "guest_kfunc" {print $1, $NF}')" \
		"700 work" "--guest-export=pprof: vCPU 0's samples carry vcpu 0"
fi
check "$($P report -i le-file.data --guest-maps=guest1.vmctx --guest-export=svg:x 2>&1 | grep '^perf report:')" \
	"perf report: --guest-export takes pprof:FILE or folded:FILE, comma-separated, not 'svg:x'." "--guest-export: a bad format"
check "$($P report -i le-file.data --guest-maps=guest1.vmctx --guest-export=pprof:/nonexistent/x 2>&1 | grep '^perf report:' | head -1)" \
	"perf report: cannot open /nonexistent/x for --guest-export: No such file or directory" "--guest-export: a file that cannot be written"

# The exact guest clock (gen-perfdata.py vms, gen-bundle reused): root
# 0x1234000 is bench's until host 2.0005 s, then late's.  vCPU 0 takes a
# guest user sample at ticks k (host 1 s + k ms) with k % 20 < 10, so
# bench has those with k <= 1000 (501) and late the rest (499).
python3 gen-perfdata.py vms.data file vms >/dev/null
VMNAME=$(printf 'vm\033]0;x\007') python3 gen-perfdata.py vms-hostile.data file vms >/dev/null
./gen-bundle reused.vmctx reused
out=$($P report --header-only -i vms.data 2>&1)
check "$(echo "$out" | grep -c '^#   pid 1000, name lab-vm-1, 2 vCPUs$')" 1 "header: the guest VMs, QEMU's name"
check "$(echo "$out" | grep -c '^#     vcpu[01]: TSC offset 5000000000, ratio 0 >> 0$')" 2 "header: each vCPU's KVM TSC offset"
out=$($P report --header-only -i vms-hostile.data 2>&1)
check "$(printf '%s' "$out" | grep -c "$(printf '\033')")" 0 "header: a VM name's control bytes do not reach the terminal"
check "$(echo "$out" | grep -c 'name vm\\x1b\]0;x\\x07, ')" 1 "header: a VM name's ESC and BEL shown as \\xHH"
keys="--stdio -n --sort comm,pid -F sample,comm,pid"
out=$($P report -i vms.data --guest-maps=reused.vmctx $keys 2>&1)
check "$(echo "$out" | grep -c '^# guest clock of VM1 (lab-vm-1): exact, through the TSC (KVM TSC offset 5000000000, no scaling, 31 guest TSC/ns pairs)')" 1 \
	"exact clock: the header line says which relation, and the VM is named from the recording"
check "$(echo "$out" | awk '$2 == "bench" || $2 == "late" {print $1, $2, $3}')" "$(printf '501 bench 321:bench\n499 late 322:late')" \
	"exact clock: a reused root names each owner for its own samples"
# perf script --guest-maps: each guest user sample's guest time is the
# chain's (guest TSC = host ns + 5e9; guest ns = (TSC - 2e9) * 1.0005),
# and its guest process is the root's owner then.
# "COMM PID TIME: cpl:N gtime:S.NS": perf script's own comm and pid are the
# guest process's
out=$($P script -i vms.data --guest-maps=reused.vmctx --ns -F comm,pid,time,guest_cpl,guest_time 2>/dev/null)
check "$(echo "$out" | awk '$4 == "cpl:3" { t = $3; sub(/:$/, "", t); split(t, p, "."); ns = p[1] * 1000000000 + p[2]
	g = ns + 3000000000; g += int(g / 2000); want = sprintf("gtime:%d.%09d", int(g / 1000000000), g % 1000000000)
	n++; if ($5 != want) bad++ } END { print n + 0, bad + 0 }')" "1000 0" \
	"script --guest-maps: guest_time is the TSC chain's, to the ns, for every guest user sample"
check "$(echo "$out" | awk '$4 == "cpl:3" {print $1, $2}' | sort | uniq -c | awk '{print $1, $2, $3}')" \
	"$(printf '501 bench 321\n499 late 322')" \
	"script --guest-maps: comm and pid name each owner of a reused root for its own samples"
check "$($P script -i vms.data --guest-maps=reused.vmctx -F vcpu,guest_time 2>/dev/null |
	grep '^VCPU:  - ' | grep -vc 'gtime:-$')" 0 \
	"script --guest-maps: a sample with no vCPU loaded has no guest time"
# A VM's clock line comes where the VM does, as perf script reads the
# recording once: two VMs of 4 vCPUs on 2 pCPUs (gen-fleet: QEMU pids
# 10000 and 10100), each pCPU queueing VM1's vCPUs before VM2's, so that
# VM2 first runs after VM1 has.  Each line once, before its VM's first
# sample; VM2's after VM1's first.
./gen-fleet -v 2 -c 2 -n 20000 -p 20 fleet2 >/dev/null
out=$($P script -i fleet2/perf.data --kallsyms=fleet2/kallsyms --guest-maps=$(cat fleet2/guest-maps) \
	-F machine_pid,comm,time 2>/dev/null)
check "$(echo "$out" | awk '/^# guest clock of VM1 \(fleet-vm01\): exact/ { c1 = NR; n1++ }
	/^# guest clock of VM2 \(fleet-vm02\): exact/ { c2 = NR; n2++ }
	/^VM:10000 / && !f1 { f1 = NR } /^VM:10100 / && !f2 { f2 = NR }
	END { print n1 + 0, n2 + 0, (c1 < f1 && f1 < c2 && c2 < f2) ? "in order" : c1 " " f1 " " c2 " " f2 }')" \
	"1 1 in order" "script --guest-maps: each VM's clock line once, where the VM first shows up"
# perf inject --guest-maps queues the events (the timeline takes them in
# time order) and keeps the recording's rounds: at each round's end it
# writes the events the round made final, then the round, so that it holds
# a round at a time and its readers do too.  The rounds of the output are
# the recording's (gen-fleet writes one every 100 ms), and no more come
# before the first sample than the recording's and the one that, a round
# behind as perf's queue is, flushes nothing yet.  (Written as read, all of
# them came first and every event waited to the end.)
rounds() {
	$P report -D -i "$1" 2>/dev/null | awk '/PERF_RECORD_FINISHED_ROUND/ { r++ }
		/ PERF_RECORD_SAMPLE/ && !s { s = 1; b = r } END { print r + 0, b + 0 }'
}
$P inject -i fleet2/perf.data --guest-maps=$(cat fleet2/guest-maps) -o fleet2-inj.data >/dev/null 2>&1
read -r r_in b_in r_out b_out <<EOF
$(rounds fleet2/perf.data) $(rounds fleet2-inj.data)
EOF
check "$([ "$r_in" -ge 10 ] && [ "$r_out" = "$r_in" ] && [ "$b_out" -le $((b_in + 1)) ] && echo kept ||
	echo "rounds $r_in, $b_in before the first sample; output $r_out, $b_out")" kept \
	"inject --guest-maps: the recording's rounds, each after the events it made final"
# a pipe has no first pass: the line comes all the same
check "$($P inject -i vms.data -o - 2>/dev/null | $P script -i - --guest-maps=reused.vmctx -F comm,pid 2>/dev/null |
	grep -c '^# guest clock of VM1 (lab-vm-1): exact, through the TSC')" 1 \
	"script --guest-maps from a pipe: the VM's clock line"
# The guest's switch log (gen-bundle switches: the same clock and owners,
# and who ran on each guest CPU).  vCPU 0's user samples (k % 20 < 10) ran
# bench's thread 323 up to the owner change but for k in 201..300, when
# the log says a kernel thread ran (50 samples: the root decides, and they
# count as disagreeing), and late after it; vCPU 1's kernel samples
# (k % 20 >= 10, on a root nobody owns) ran kworker/1:0 up to 1.5005 s
# (k <= 500: 250), then the idle task, but for the log's gap and the
# time after it until the next switch (k in 1501..1700: 100, unresolved),
# then a kernel thread on bench's thread's old pid (k > 1700), which must
# be named as the kernel thread.
./gen-bundle switches.vmctx switches
read -r n_kw n_idle n_gap n_bw n_bench n_late n_kw2 <<EOF2
$(python3 -c '
u = [k for k in range(2000) if k % 20 < 10]; g = [k for k in range(2000) if k % 20 >= 10]
kt = [k for k in u if 200 < k <= 300 and k <= 1000]
print(len([k for k in g if k <= 500]), len([k for k in g if 500 < k <= 1500]),
      len([k for k in g if 1500 < k <= 1700]), len([k for k in u if k <= 1000]) - len(kt), len(kt),
      len([k for k in u if k > 1000]), len([k for k in g if k > 1700]))')
EOF2
out=$($P report -i vms.data --guest-maps=switches.vmctx --stdio -n --sort vm,comm,pid 2>&1)
check "$(echo "$out" | ev cpu-clock | rows | awk '$2 == 1000 && $3 != "CPU"')" \
	"$(printf '%s\n' "$n_idle 1000 swapper 0:swapper" "$n_kw 1000 kworker/1:0 77:kworker/1:0" \
		"$n_gap 1000 [unresolved] -1:[unresolved]" "$n_bw 1000 bench-w 323:bench-w" \
		"$n_bench 1000 bench 321:bench" "$n_late 1000 late 322:late" \
		"$n_kw2 1000 kworker/1:1 323:kworker/1:1" | LC_ALL=C sort)" \
	"switch log: kernel samples go to the task that ran (a kernel thread, the idle task, a kernel thread on a process's old pid), user samples to the running thread of the root's process"
check "$(echo "$out" | grep -c "^# guest tasks of VM1 (lab-vm-1): of 2000 samples, $((n_kw + n_idle + n_bw + n_late + n_kw2)) by its switch log (the task that ran), $n_bench by the page-table root, $n_gap unresolved ($n_gap in the log's gaps); $n_bench of 1000 user samples ran on a root whose process the log did not name")" 1 \
	"switch log: the report says how many samples each way found their task"
check "$($P report -i vms.data --guest-maps=reused.vmctx --stdio -n --sort comm 2>&1 | grep -c '^# guest tasks')" 0 \
	"no switch log: no line about it"
out=$($P report -i vms.data --guest-maps=switches.vmctx --guest-clock=fit --stdio -n --sort vm,comm,pid 2>&1)
check "$(echo "$out" | grep -c "^# guest tasks of VM1 (lab-vm-1): its switch log is not used, as its clock is not exact")" 1 \
	"switch log: not used with a fitted clock, and the report says so"
check "$(echo "$out" | ev cpu-clock | rows | awk '$2 == 1000 && ($3 == "swapper" || $3 ~ /^kworker/)' | wc -l)" 0 \
	"switch log: with a fitted clock, no guest sample goes to a task only the log names"
check "$($P report -i vms.data --guest-maps=switches.vmctx --stdio -n --sort comm,sym 2>/dev/null |
	awk '$3 == "kworker/1:0" || ($3 == "swapper" && $4 == "[g]") {print $2, $3, $NF}' | sort)" \
	"$(printf '%s\n' "$n_kw kworker/1:0 guest_kfunc" "$n_idle swapper guest_kfunc" | sort)" \
	"switch log: a kernel thread's and the idle task's samples keep the guest kernel's symbols"
check "$($P script -i vms.data -F time,guest_time 2>&1)" \
	"perf script: the guest_time field needs the guests' bundles: --guest-maps=FILE" \
	"script: guest_time without --guest-maps: one sentence"
out=$($P script -i le-file.data --guest-maps=hostile.vmctx -F comm,tid,ip,sym 2>/dev/null)
check "$(printf '%s' "$out" | grep -c "$(printf '\033')")" 0 "script --guest-maps: a guest's control bytes do not reach the terminal"
check "$(echo "$out" | grep -c '^ *be\\x1b\[2Jnch  *321 .* wo\\x0d\\x0ark$')" 700 \
	"script --guest-maps: comm and sym escaped as \\xHH"
# The same with the bundle's window from host 1.2005 s to 2.5005 s: the
# samples at k <= 200 and k >= 1501 (700 of the 2000 guest samples) lie
# outside it and name nobody, though bench and late own the root then.
./gen-bundle window.vmctx window
out=$($P report -i vms.data --guest-maps=window.vmctx $keys 2>&1)
want=$(python3 -c 'r = [k for k in range(2000) if k % 20 < 10]
print(sum(1 for k in r if 200 < k <= 1000), "bench 321:bench")
print(sum(1 for k in r if 1000 < k <= 1500), "late 322:late")')
check "$(echo "$out" | awk '$2 == "bench" || $2 == "late" {print $1, $2, $3}')" "$want" \
	"window: samples outside the bundle's window name neither owner"
check "$(echo "$out" | grep -c '^# guest clock of VM1 (lab-vm-1): exact, .*; 700 of 2000 guest samples outside the window$')" 1 \
	"window: the clock line counts the samples outside it"
# With the TSC chain, the first pass reads the file only up to its first
# sample (-v says so); a fit reads it all, and says how far it is from
# the chain.
check "$($P report -v -i vms.data --guest-maps=reused.vmctx $keys 2>&1 | grep -c 'first pass stopped early')" 1 \
	"exact clock: the first pass stops at the first sample (sort keys)"
check "$($P report -v -i vms.data --guest-maps=reused.vmctx --stdio --guest-view=guest 2>&1 | grep -c 'first pass stopped early')" 1 \
	"exact clock: the first pass stops at the first sample (views)"
out=$($P report -v -i vms.data --guest-maps=reused.vmctx --guest-clock=fit $keys 2>&1)
check "$(echo "$out" | grep -c 'first pass stopped')" 0 "--guest-clock=fit: the first pass reads every sample"
check "$(echo "$out" | grep -c '^# guest clock of VM1 (lab-vm-1): fitted from the samples: .* ms from the TSC chain$')" 1 \
	"--guest-clock=fit: says how far the fit is from the TSC chain"
out=$($P report -i vms.data --guest-maps=reused.vmctx --guest-clock=none $keys 2>&1)
check "$(echo "$out" | grep -c ' bench \| late ')" 0 "--guest-clock=none: a reused root names none of its owners"
check "$(echo "$out" | grep -c '^# guest clock of VM1 (lab-vm-1): unknown (no TSC chain: not asked for; no fit asked for)')" 1 "--guest-clock=none: said so"
out=$($P report -i le-file.data --guest-maps=guest1.vmctx --guest-clock=tsc $keys 2>&1)
check "$(echo "$out" | grep -c '^# guest clock of VM1 (guest1): unknown (no TSC chain: the recording has no KVM TSC offset for it; no fit asked for)')" 1 \
	"--guest-clock=tsc on a recording without TSC offsets: says why"
check "$($P report -i vms.data --guest-maps=reused.vmctx --guest-clock=exact 2>&1)" \
	"perf report: --guest-clock must be auto, tsc, fit or none, not 'exact'." "--guest-clock: a bad value"
# A crafted guest VMs header (absurd counts) is dropped, not trusted.
python3 - <<'PY'
import struct
d = bytearray(open('vms.data', 'rb').read())
i = d.rfind(b'lab-vm-1')
for n, (at, v) in enumerate([(i - 12, 0xffffffff), (i - 4, 0x7fffffff), (i + 64, 100000)]):
    e = bytearray(d)
    e[at:at + 4] = struct.pack('<I', v)
    open('badvms%d.data' % n, 'wb').write(e)
PY
for n in 0 1 2; do
	out=$(timeout 20 $P report -i badvms$n.data --guest-maps=reused.vmctx $keys 2>&1); rc=$?
	check "$rc:$(echo "$out" | grep -c '^# guest clock of VM1 (guest1): fitted from the samples')" "0:1" \
		"crafted guest VMs header $n: ignored, the clock fitted instead"
done

# Hostile perf.data files, in both byte orders, as a crafted or damaged
# recording may hold them.  Each runs under valgrind where it is installed
# (the ASan build of perf is not the lab's): a read past a buffer or of
# freed memory fails the check, whatever perf prints.
cp "$src"/perffile.py "$src"/gen-exits.py "$src"/gen-chains.py "$src"/gen-guest-dwarf.py .
VG=
command -v valgrind >/dev/null 2>&1 && VG="valgrind -q --error-exitcode=99"
# vg NAME ARGS...: perf ARGS under valgrind; its output in $out, rc in $rc
vg() {
	name=$1
	shift
	out=$(timeout 120 $VG $P "$@" 2>&1); rc=$?
	check "$rc:$(printf '%s' "$out" | grep -c 'Invalid read\|Invalid write\|uninitialised\|freed')" "0:0" \
		"$name: no memory error${VG:+ (valgrind)}"
}
for bo in le be; do
	e=; [ $bo = be ] && e=be
	VMNAME_LEN=0 python3 gen-perfdata.py vmname0-$bo.data $e file vms >/dev/null
	VMNAME_NONUL=1 python3 gen-perfdata.py vmnonul-$bo.data $e file vms >/dev/null
	for f in vmname0 vmnonul; do
		vg "$f ($bo): --header-only" report --header-only -i $f-$bo.data
		check "$(echo "$out" | grep -c "^WARNING: the file's guest VMs header is malformed (a VM name $(
			[ $f = vmname0 ] && echo 'of 0 bytes' || echo 'without its NUL')): ignoring it")" 1 \
			"$f ($bo): the guest VMs header is refused with its reason"
		check "$(echo "$out" | grep -c '^# guest VMs: 0$'):$(echo "$out" | grep -c '^# hostname : vmctx-lab$')" "1:1" \
			"$f ($bo): no VM read from it, the file's other features read as before"
		vg "$f ($bo): --guest-maps" report -i $f-$bo.data --guest-maps=reused.vmctx --stdio --guest-view=guest
		check "$(echo "$out" | grep -c '^# guest clock of VM1 (guest1): ')" 1 \
			"$f ($bo): --guest-maps names the VM from its bundle"
	done
	python3 gen-perfdata.py nopid-$bo.data $e file pidm1 pid0 >/dev/null
	vg "a vCPU sample with host pid -1 and 0 ($bo)" report -i nopid-$bo.data --guest-maps=guest1.vmctx --stdio --guest-view=vcpu
	check "$(echo "$out" | grep -c "^WARNING: 2 events had a vCPU's context but no host process (pid 0 or -1): they were left out.$")" 1 \
		"host pid -1 and 0 ($bo): the two samples are counted and left out"
	check "$(echo "$out" | grep -c '^# VM pid 1000: '):$(echo "$out" | grep -c '^# VM pid [^1]\|VM2\|4294967295')" "1:0" \
		"host pid -1 and 0 ($bo): the bundle stays with the real VM, no fake VM appears"
	# the exits view of a recording without kvm:kvm_exit: says what to record
	out=$($P report -i nopid-$bo.data --guest-maps=guest1.vmctx --stdio --guest-view=exits 2>&1); rc=$?
	check "$([ $rc != 0 ] && echo refused):$(echo "$out" | grep -c "^perf report: --guest-view=exits shows kvm:kvm_exit events, which this recording has none of: record them with 'perf record --vmcs-ctx -e kvm:kvm_exit -e kvm:kvm_entry ...'.$"):$(echo "$out" | grep -c 'has no samples')" \
		"refused:1:0" "no kvm_exit ($bo): --guest-view=exits refused, naming what to record"
	python3 gen-exits.py exits-$bo.data $e >/dev/null
	python3 gen-exits.py short-exit-$bo.data $e short >/dev/null
	vg "kvm_exit records ($bo)" report -i exits-$bo.data --guest-maps=guest1.vmctx --stdio -n --sort comm,pid,exit_reason
	check "$(echo "$out" | ev kvm:kvm_exit | rows)" "10 bench 321:bench interrupt (0x60)" \
		"exits ($bo): the 10 exits charged to the guest process"
	vg "kvm_exit records, exits view ($bo)" report -i exits-$bo.data --guest-maps=guest1.vmctx --stdio --guest-view=exits
	check "$(echo "$out" | grep -c '^# VM pid 1000: 10 exits, 1.000 ms from exit to entry$')" 1 \
		"exits view ($bo): 10 exits of 100 us each"
	vg "a kvm_exit record of 8 bytes ($bo)" report -i short-exit-$bo.data --guest-maps=guest1.vmctx --stdio -n --sort comm,pid,exit_reason
	check "$(echo "$out" | ev kvm:kvm_exit | rows):$(echo "$out" | grep -c 'EXCEPTION_NMI\|exception')" "9 bench 321:bench interrupt (0x60):0" \
		"short kvm_exit ($bo): left out, not read past its end as a fake exit"
	check "$(echo "$out" | grep -c '^WARNING: 1 kvm:kvm_exit records were too short for their fields')" 1 \
		"short kvm_exit ($bo): counted in a warning"
	# guest call chains (perf record --vmcs-ctx -g): each guest sample merged
	# with the PERF_RECORD_CALLCHAIN_DEFERRED record of its cookie, guest
	# frames first
	python3 gen-chains.py chains-$bo.data $e >/dev/null
	vg "guest call chains ($bo)" script -i chains-$bo.data --guest-maps=guest1.vmctx -F comm,tid,ip,sym,dso
	check "$(echo "$out" | grep -c '^ *bench  *321'):$(echo "$out" | awk '/^ *bench  *321/ {
		getline a; getline b; getline c; getline d
		if (a ~ / work \(/ && b ~ / other \(/ && c ~ / work \(/ && d ~ /ffffffff81000100/) n++ }
		END { print n + 0 }')" "10:10" \
		"guest call chains ($bo): each of the 10 samples has work, other, work, then the host's frames"
	vg "guest call chains, folded ($bo)" report -i chains-$bo.data --guest-maps=guest1.vmctx --stdio -g \
		--guest-export=folded:-
	check "$(echo "$out" | grep -c '^guest1 (VM1);\[unknown\];\[unknown\];\[unknown\];\[unknown\];bench;work;other;work 10$')" 1 \
		"guest call chains, folded ($bo): VM, the host's frames, the guest process, the guest's frames"
	# the export takes the chain perf report's histograms resolved: with
	# --ignore-callees=other, perf report walks the chain root first (its
	# default caller order) and starts it again at other, so its chain is
	# other, work; the export's stack is that chain under the VM and process
	vg "guest call chains, --ignore-callees ($bo)" report -i chains-$bo.data --guest-maps=guest1.vmctx \
		--stdio -g folded,0,caller --no-children --ignore-callees=other
	rep=$(echo "$out" | grep -c '^100.00% other;work$')
	vg "guest call chains, folded, --ignore-callees ($bo)" report -i chains-$bo.data --guest-maps=guest1.vmctx \
		--stdio -g folded,0,caller --no-children --ignore-callees=other --guest-export=folded:-
	check "$rep:$(echo "$out" | grep -c '^guest1 (VM1);bench;other;work 10$')" "1:1" \
		"guest call chains, --ignore-callees ($bo): perf report's chain is other;work, and the export's stack"
	# the pprof export holds the same chain as perf script (go tool pprof
	# -traces, less the process and VM frames the export adds)
	if [ $bo = le ] && command -v go >/dev/null; then
		$P report -i chains-$bo.data --guest-maps=guest1.vmctx --stdio -g \
			--guest-export=pprof:chains.pb.gz >/dev/null 2>&1
		check "$(HOME=$work GOCACHE=$work/go go tool pprof -traces chains.pb.gz 2>/dev/null |
			awk '/^-+\+-+$/ { if (n++) exit; next }
			     n && /^ *[0-9.]+[a-z]*s +/ { s = 1; sub(/^ *[0-9.]+[a-z]*s +/, "") }
			     s { sub(/^ +/, ""); if ($0 != "bench" && $0 != "guest1 (VM1)") {
				gsub(/<unknown>/, "[unknown]"); f = f (f ? "," : "") $0 } }
			     END { print f }')" \
			"$($P script -i chains-$bo.data --guest-maps=guest1.vmctx -F ip,sym 2>/dev/null |
			awk 'NF == 0 { if (f) exit; next }
			     /^\t/ { sub(/^\t *[0-9a-f]+ /, ""); f = f (f ? "," : "") $0 } END { print f }')" \
			"guest call chains: go tool pprof -traces shows perf script's chain"
	fi
	# records that are not the samples' or not whole leave the samples
	# without a guest chain; a lost record, only its own sample; with none,
	# every sample goes on at the end, and more than perf holds at once go
	# on before
	for k in wrongcookie bignr short lost none many; do
		python3 gen-chains.py chains-$k-$bo.data $e $k >/dev/null
		n=10 c=0
		[ $k = none ] && n=100
		[ $k = many ] && n=5000
		[ $k = lost ] && c=5
		vg "guest chain records: $k ($bo)" script -i chains-$k-$bo.data --guest-maps=guest1.vmctx \
			-F comm,tid,ip,sym,dso
		check "$(echo "$out" | grep -c '^ *bench  *321'):$(echo "$out" | grep -c ' other (')" "$n:$c" \
			"guest chain records: $k ($bo): all $n samples, $c with the chain of their cookie"
	done
	# without --guest-maps (and without libvmctx) the same chains, by address
	vg "guest call chains without --guest-maps ($bo)" script -i chains-$bo.data -F tid,ip
	check "$(echo "$out" | awk '/^ *1001 *$/ { getline a; getline b; getline c; getline d
		if (a ~ /401010$/ && b ~ /402010$/ && c ~ /401050$/ && d ~ /ffffffff81000100$/) n++ }
		END { print n + 0 }')" 10 \
		"guest call chains without --guest-maps ($bo): the 10 samples' guest then host addresses"
	# and a perf built without libvmctx merges them the same: the join is
	# perf's session code, not libvmctx's
	if [ -n "${PERF_NO_LIBVMCTX:-}" ]; then
		nolib=$($PERF_NO_LIBVMCTX script -i chains-$bo.data -F tid,ip 2>&1)
		check "$(printf '%s\n' "$nolib" | awk '/^ *1001 *$/ { getline a; getline b; getline c; getline d
			if (a ~ /401010$/ && b ~ /402010$/ && c ~ /401050$/ && d ~ /ffffffff81000100$/) n++ }
			END { print n + 0 }'):$([ "$nolib" = "$out" ] && echo same)" "10:same" \
			"guest call chains in a perf without libvmctx ($bo): the 10 samples' chains, perf script's output as with it"
	fi
	# the records are shown by -D, with their cookies
	vg "guest call chains, -D ($bo)" report -i chains-$bo.data -D
	check "$(echo "$out" | grep -c 'PERF_RECORD_CALLCHAIN_DEFERRED'):$(echo "$out" | grep -c 'PERF_RECORD_CALLCHAIN_DEFERRED: cookie 0xa nr 10$')" "10:1" \
		"guest call chains, -D ($bo): 10 records, the last with cookie 10"
	# guest user stacks (perf record --vmcs-ctx --call-graph dwarf): each
	# guest sample delivered with the guest's registers and stack from the
	# PERF_RECORD_GUEST_USER_STACK record of its cookie, not the host's
	python3 gen-chains.py chains-stack-$bo.data $e stack >/dev/null
	vg "guest user stacks ($bo)" script -i chains-stack-$bo.data --guest-maps=guest1.vmctx -F tid,uregs
	check "$(echo "$out" | grep -c ' BP:0x7ffe001[0-9] *SP:0x7ffe000[0-9] *IP:0x401010'):$(echo "$out" | grep -c '0x7f0000001000')" "10:0" \
		"guest user stacks ($bo): the 10 samples have the guest's registers, none the host's"
	vg "guest user stacks, -D ($bo)" report -i chains-stack-$bo.data -D
	check "$(echo "$out" | grep -c 'PERF_RECORD_GUEST_USER_STACK: cookie 0x[0-9a]$'):$(echo "$out" | grep -c '^\.\.\. guest user regs: mask 0x1c0 ABI 64-bit$'):$(echo "$out" | grep -c '^\.\.\. ustack: size 64, offset 0x30$')" "10:10:10" \
		"guest user stacks, -D ($bo): 10 records, each with its registers and 64 bytes"
	# perf report -g unwinds those stacks (--call-graph dwarf), and reads
	# no host file for the guest's objects: a file at a guest object's
	# name under --symfs is not opened (it was, before the unwinders knew
	# guest objects: eleven times)
	if [ $bo = le ] && command -v strace >/dev/null; then
		mkdir -p symfs/vmctx-guest/1000/usr/bin && cp /bin/true symfs/vmctx-guest/1000/usr/bin/bench
		strace -f -qq -e trace=open,openat -o trace-unwind $P report -i chains-stack-$bo.data \
			--guest-maps=guest1.vmctx --symfs=$PWD/symfs --stdio -g caller > /dev/null 2>&1
		check "$([ -s trace-unwind ] && grep -c 'vmctx-guest' trace-unwind)" 0 \
			"guest user stacks: the unwinder opens no file at a guest object's name"
		# and unwinds them with the guest object's own tables from its
		# bundle: a program without frame pointers, recorded here with
		# --call-graph dwarf, its samples made guest samples of VM 1000
		# and its .eh_frame put in the VM's bundle (gen-guest-dwarf.py);
		# unwind-me.c's calls are main, outer, middle, inner
		if cc -O2 -fomit-frame-pointer -fasynchronous-unwind-tables -o unwind-me "$src/unwind-me.c" &&
		   $P record -q -e cpu-clock -c 100000 --call-graph dwarf,4096 -o host-dwarf.data \
			-- ./unwind-me > /dev/null 2>&1 &&
		   n=$(python3 gen-guest-dwarf.py host-dwarf.data ./unwind-me guest-dwarf.data dw.vmctx 2>/dev/null | tail -1) &&
		   [ "${n:-0}" -gt 0 ]; then
			# libdw's unwinder (PERF), and libunwind's, as Debian builds
			# perf (PERF_LIBUNWIND: the guest's tables read through their
			# images, never a file at the guest object's name)
			Pdw=$P
			for uw in libdw libunwind; do
				W=" ($uw)"
				if [ $uw = libunwind ]; then
					[ -n "${PERF_LIBUNWIND:-}" ] || { echo "skip guest stacks with libunwind: no PERF_LIBUNWIND"; continue; }
					P=$PERF_LIBUNWIND
				fi
				# (nor for the inlined functions and source lines of
				# the frames: perf script shows both)
				rm -f trace-unwind-$uw
				strace -f -qq -e trace=open,openat,stat,newfstatat,access -o trace-unwind-$uw \
					$P script -i guest-dwarf.data --guest-maps=1000=dw.vmctx -F ip,sym,srcline > /dev/null 2>&1
				check "$([ -s trace-unwind-$uw ] && grep -c 'vmctx-guest' trace-unwind-$uw)" 0 \
					"guest stacks unwound$W: no file opened at a guest object's name, nor its lines looked up"
				vg "guest stacks unwound$W" script -i guest-dwarf.data --guest-maps=1000=dw.vmctx -F ip,sym
				# each sample's frames, innermost first: "inner;middle;..."
				chains=$(echo "$out" | awk 'function fr(l) { sub(/^\t *[0-9a-f]+ /, "", l); return l }
					NF == 0 { if (s) print s; s = ""; next }
					/^\t/ { s = s (s ? ";" : "") fr($0) } END { if (s) print s }')
				in=$(echo "$chains" | grep -c '^inner')
				whole=$(echo "$chains" | grep -c '^inner;middle;outer;main')
				check "$(( in > 0 && whole * 100 >= in * 95 ))" 1 \
					"guest stacks unwound$W: $whole of $in samples in inner have inner, middle, outer, main (95% wanted) from the guest's .eh_frame"
				$P report -i guest-dwarf.data --guest-maps=1000=dw.vmctx --stdio -g \
					--guest-export=folded:guest-dwarf.folded > /dev/null 2>&1
				check "$(grep -c ';main;outer;middle;inner [0-9]*$' guest-dwarf.folded)" 1 \
					"guest stacks unwound$W, folded: main, outer, middle, inner in one stack"
				# the same bundle without its tables: each sample keeps its leaf
				zcat dw.vmctx | grep -v '^x-unwind ' | gzip > dw-notables.vmctx
				out=$($P script -i guest-dwarf.data --guest-maps=1000=dw-notables.vmctx -F ip,sym 2>/dev/null)
				chains=$(echo "$out" | awk 'function fr(l) { sub(/^\t *[0-9a-f]+ /, "", l); return l }
					NF == 0 { if (s) print s; s = ""; next }
					/^\t/ { s = s (s ? ";" : "") fr($0) } END { if (s) print s }')
				check "$(echo "$chains" | grep -c '^inner'):$(echo "$chains" | grep -c '^inner;middle'):$(echo "$chains" | grep -c '^inner;\[guest stack cut\]')" "$in:0:$in" \
					"guest stacks without tables$W: the $in samples in inner keep their leaf, unwound no further, and say so ([guest stack cut])"
				# perf inject --guest-maps writes the unwound chains, which
				# Debian's perf reads as chains, with nothing to unwind
				if [ -x /usr/bin/perf ]; then
					rm -rf inj-dwarf.data dw-home && mkdir dw-home
					HOME=$PWD/dw-home $P inject -i guest-dwarf.data --guest-maps=1000=dw.vmctx -o inj-dwarf.data \
						> /dev/null 2>&1
					st=$(HOME=$PWD/dw-home /usr/bin/perf --buildid-dir inj-dwarf.data/debug report -i inj-dwarf.data \
						--stdio --no-children -g folded,0,caller,count 2>inj-dwarf.err |
						awk '/;main;outer;middle;inner$/ { n += $1 } END { print n + 0 }')
					ty=$(/usr/bin/perf evlist -v -i inj-dwarf.data 2>/dev/null | sed -n 's/^cpu-clock.*sample_type: \([A-Z_|]*\).*/\1/p')
					check "$st:$(grep -c 'Reserved bits' inj-dwarf.err):$(echo "$ty" | grep -c 'REGS_USER\|STACK_USER')" "$whole:0:0" \
						"perf inject --guest-maps of guest stacks$W: $(/usr/bin/perf --version) gives main, outer, middle, inner to the $whole samples unwound so, from chains alone ($ty)"
				fi
				# hostile tables (gen-guest-dwarf.py): each sample's chain
				# ends, within perf's bound on a chain (127 frames), with
				# no memory error; where the rules lead off the stack or
				# the search table out of its section, at the leaf
				for k in loop offstack badhdr big; do
					python3 gen-guest-dwarf.py host-dwarf.data ./unwind-me guest-dwarf-$k.data dw-$k.vmctx $k \
						> /dev/null 2>&1 || { check "gen $k" ok "hostile tables$W: $k generated"; continue; }
					vg "hostile tables$W: $k" script -i guest-dwarf-$k.data --guest-maps=1000=dw-$k.vmctx -F ip,sym
					# frames per sample, the most and the samples in inner
					st=$(echo "$out" | awk 'NF == 0 { if (n) { s++; if (n > m) m = n }; n = 0; next }
						/^\t/ { n++ }
						END { if (n) { s++; if (n > m) m = n }; print s + 0, m + 0 }')
					hs=${st% *} hm=${st#* }
					check "$rc:$hs:$(( hm <= 127 + 2 ))" "0:$n:1" \
						"hostile tables$W: $k: perf script ends all $hs chains, the longest $hm frames (127 guest frames at most, the cut's mark and KVM's)"
					case $k in
					loop)
						# no end but the chain's bound, which the mark says
						cut=$(echo "$out" | grep -c '^[[:space:]]*0 \[guest stack cut\]$')
						check "$cut" "$hs" "hostile tables$W: loop: each of the $hs chains cut short says so ([guest stack cut])" ;;
					offstack|badhdr)
						chains=$(echo "$out" | awk 'function fr(l) { sub(/^\t *[0-9a-f]+ /, "", l); return l }
							NF == 0 { if (s) print s; s = ""; next }
							/^\t/ { s = s (s ? ";" : "") fr($0) } END { if (s) print s }')
						check "$(echo "$chains" | grep -c '^inner;\[guest stack cut\]$\|^inner;\[guest stack cut\];\[unknown\]$'):$(echo "$chains" | grep -c '^inner;middle')" "$in:0" \
							"hostile tables$W: $k: the $in samples in inner keep their leaf, unwound no further, then the cut's mark" ;;
					esac
				done
				# 100 MB of tables: the bundle says so, and its reader
				# refuses the table before it reads a byte of it
				zcat dw.vmctx | sed 's/^\(x-unwind 0 eh_frame [^ ]*\) size=[0-9]* off=0 /\1 size=104857600 off=0 /' |
					gzip > dw-100m.vmctx
				out=$($P script -i guest-dwarf.data --guest-maps=1000=dw-100m.vmctx -F ip,sym 2>&1); rc=$?
				check "$([ $rc != 0 ] && echo refused):$(echo "$out" | grep -c 'dw-100m.vmctx: Count, string or size beyond a limit')" \
					"refused:1" "hostile tables$W: a table of 100 MB is refused, its bundle named"
			done
			P=$Pdw
		else
			echo "skip guest stacks unwound: no cc, no perf record --call-graph dwarf, or no samples"
		fi
	fi
	# records whose sizes do not add up are said so and change no sample
	python3 gen-chains.py chains-stackbad-$bo.data $e stackbad >/dev/null
	vg "guest user stacks that do not parse ($bo)" script -i chains-stackbad-$bo.data -F tid,uregs
	check "$(echo "$out" | grep -c 'IP:0x7f0000001000')" 10 \
		"guest user stacks that do not parse ($bo): the 10 samples keep the registers they had"
	vg "guest user stacks that do not parse, -D ($bo)" report -i chains-stackbad-$bo.data -D
	check "$(echo "$out" | grep -c 'PERF_RECORD_GUEST_USER_STACK: cookie 0x[0-9a]: a record that does not parse$')" 10 \
		"guest user stacks that do not parse, -D ($bo): each said so"
	python3 gen-perfdata.py lost-$bo.data $e file lostmax >/dev/null
	vg "2^64-1 lost samples ($bo)" report -i lost-$bo.data --guest-maps=guest1.vmctx --stdio --guest-view=vcpu
	check "$(echo "$out" | awk '/%/ { for (i = 1; i <= NF; i++) if ($i ~ /%$/ && $i + 0 > 100) bad++ } END { print bad + 0 }')" 0 \
		"2^64-1 lost samples ($bo): no share over 100%"
done
# The debug line of a VM renamed by its bundle (a recording without the
# guest VMs header: the name comes from the process) prints the new name
vg "-v --guest-maps, VM renamed by its bundle" report -v -i le-file.data --guest-maps=guest1.vmctx --stdio --guest-view=vcpu
check "$(echo "$out" | grep -c '^--guest-maps: guest1.vmctx is VM guest1 (pid 1000)$')" 1 \
	"-v: the VM's name after its bundle named it"
# A VM name's control bytes reach -v's stderr escaped
VMNAME=$(printf 'vm\033]0;x\007\r') python3 gen-perfdata.py vms-esc.data file vms >/dev/null
out=$($P report -v -i vms-esc.data --guest-maps=reused.vmctx --stdio --guest-view=vcpu 2>&1)
check "$(printf '%s' "$out" | grep -c "$esc\|$bel\|$cr")" 0 "-v: a VM name's control bytes do not reach stderr"

if [ -n "${PERF_NO_LIBVMCTX:-}" ]; then
	check "$($PERF_NO_LIBVMCTX report -i le-file.data --stdio --guest-maps=guest1.vmctx 2>&1 | grep -c 'needs perf built with libvmctx')" 1 "--guest-maps in a perf without libvmctx: message"
fi
# perf record --vmcs-ctx fetches each guest's bundle from its agent when it
# ends (here an agent's end on a Unix socket, --guest-cid), for the
# recording's span, into OUTPUT.guests; report, script and inject read
# them there without --guest-maps
rm -rf fetch.data fetch.data.guests
./serve-bundle "$PWD/agent.sock" guest1.vmctx 1 > spans.txt &
srv=$!
wait_socks agent
out=$(LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -e cpu-clock -a -o fetch.data \
	--guest-cid=1000=unix:$PWD/agent.sock --guest-fetch-timeout=20 -- sleep 0.3 2>&1); rc=$?
wait $srv
check "$rc $(echo "$out" | grep -c '1 of 1 guest bundles fetched into fetch.data.guests')" "0 1" \
	"record --vmcs-ctx: the guest's bundle fetched, and said"
check "$(cmp -s fetch.data.guests/1000.vmctx guest1.vmctx && stat -c %a fetch.data.guests/1000.vmctx)" 600 \
	"the fetched bundle is the agent's, kept 0600 in OUTPUT.guests/PID.vmctx"
check "$(echo "$out" | grep -c 'covers the last')" 0 "a bundle without a window is not said to fall short"
span=$(awk '{ print $2 }' spans.txt)
check "$([ "${span:-0}" -ge 1300000000 ] && [ "${span:-0}" -le 30000000000 ] && echo ok)" ok \
	"the span asked for is the recording's and a second more (${span:-none} ns for 0.3 s)"
# an agent whose bundle covers less than the recording (gen-bundle window:
# 1.3 s) is said to, in one line; the bundle is kept
rm -rf fetch.data fetch.data.guests
./serve-bundle "$PWD/agent.sock" window.vmctx 1 > /dev/null &
srv=$!
wait_socks agent
out=$(LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -e cpu-clock -a -o fetch.data \
	--guest-cid=1000=unix:$PWD/agent.sock -- sleep 3 2>&1); rc=$?
wait $srv
check "$rc $(echo "$out" | grep -c 'WARNING: --vmcs-ctx: VM 1000: its agent.s bundle covers the last 1.3 s of the [4-9][0-9.]* s asked for') $(cmp -s fetch.data.guests/1000.vmctx window.vmctx && echo kept)" \
	"0 1 kept" "a bundle covering less than the recording is said, and kept"
rm -rf le-file.data.guests && mkdir -m 700 le-file.data.guests && cp guest1.vmctx le-file.data.guests/1000.vmctx
want=$($P report -i le-file.data --stdio -F sample,comm --sort comm --guest-maps=1000=guest1.vmctx 2>/dev/null | grep -v '^#')
check "$($P report -i le-file.data --stdio -F sample,comm --sort comm 2>/dev/null | grep -v '^#')" "$want" \
	"report without --guest-maps reads the bundles perf record fetched"
check "$($P script -i le-file.data -F comm 2>/dev/null | grep -c 'bench')" 1000 \
	"script without --guest-maps reads them"
check "$($P report -i le-file.data --stdio -F sample,comm --sort comm --guest-maps=1000=v9.vmctx 2>&1 | grep -c 'v9.vmctx: Unsupported bundle version')" 1 \
	"an explicit --guest-maps wins over the fetched bundles"
want=$($P diff le-file.data le-file.data --guest-maps=1000=guest1.vmctx --guest-maps=1000=guest1.vmctx 2>/dev/null | grep -v '^#')
check "$($P diff le-file.data le-file.data 2>/dev/null | grep -v '^#')" "$want" \
	"diff without --guest-maps reads each file's fetched bundles"
check "$($P annotate -i le-file.data --stdio 2>&1 | grep -c "The guest kernel's code is not on this host")" 1 \
	"annotate without --guest-maps reads them (a guest function named, said not annotated)"
# only what perf record writes there: a symlink, or another name, is not read
rm le-file.data.guests/1000.vmctx && ln -s "$PWD/guest1.vmctx" le-file.data.guests/1000.vmctx &&
	cp guest1.vmctx le-file.data.guests/x1000.vmctx
check "$($P report -i le-file.data --stdio -F sample,comm --sort comm 2>/dev/null | grep -c 'bench')" 0 \
	"a symlink or another name in OUTPUT.guests is not read"
rm -rf le-file.data.guests
# an agent that answers an error, and none at all: one warning each, the recording stands
./serve-bundle "$PWD/agent.sock" - 1 > /dev/null &
srv=$!
wait_socks agent
out=$(LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -e cpu-clock -a -o fetch.data \
	--guest-cid=1000=unix:$PWD/agent.sock,2000=unix:$PWD/nobody.sock -- sleep 0.2 2>&1); rc=$?
wait $srv
check "$rc $(echo "$out" | grep -c 'WARNING: --vmcs-ctx: VM 1000: no bundle from .*agent.sock: Remote I/O error') $(echo "$out" | grep -c 'WARNING: --vmcs-ctx: VM 2000: no bundle from .*nobody.sock') $(echo "$out" | grep -c '0 of 2 guest bundles')" \
	"0 1 1 1" "record: an agent's error and a missing agent are one warning each, and the recording stands"
# hostile agents, one a VM: garbage, a byte a second, 4 GiB, cut short.
# Each is named in one warning and kept nowhere; perf record ends within
# its bounds (3 s a VM), its memory bounded (64 MiB a bundle at most)
rm -rf fetch.data fetch.data.guests
for m in garbage slow huge cut; do
	./serve-bundle "$PWD/$m.sock" @$m 1 > /dev/null &
done
wait_socks garbage slow huge cut
t0=$(date +%s%N)
out=$(max_rss env LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -e cpu-clock -a \
	-o fetch.data --guest-cid=1001=unix:$PWD/garbage.sock,1002=unix:$PWD/slow.sock,1003=unix:$PWD/huge.sock,1004=unix:$PWD/cut.sock \
	-- sleep 0.1 2>&1); rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
kill $(jobs -p) 2>/dev/null
wait
rss=$(echo "$out" | sed -n 's/^maxrss_kb //p')
check "$rc $(for v in 1001 1002 1003 1004; do echo "$out" | grep -c "WARNING: --vmcs-ctx: VM $v: no bundle from "; done | paste -sd' ') $(echo "$out" | grep -c '0 of 4 guest bundles') $(ls fetch.data.guests | wc -l)" \
	"0 1 1 1 1 1 0" "record: garbage, a slow, a 4 GiB and a cut agent are one warning each, nothing kept"
echo "$out" | grep 'WARNING: --vmcs-ctx: VM 100' | sed 's/^/     /'
check "$([ "$ms" -lt 16000 ] && echo ok)" ok "record with four hostile agents ends within 4 x 3 s and its own time (${ms} ms)"
check "$([ "${rss:-999999}" -lt 200000 ] && echo ok)" ok "record's memory stays bounded with a 4 GiB answer (max RSS ${rss:-?} kB)"
rm -f garbage.sock slow.sock huge.sock cut.sock
rm -rf fetch.data fetch.data.guests
# perf top --vmcs-ctx asks each agent for the bundle of its last seconds
# every --guest-refresh seconds (here 1: a span of 2 x 1 + 10 s): a good
# agent answers every round; garbage, a byte a second, 4 GiB and a cut
# answer are each one warning however many rounds fail, in bounded memory;
# perf top ends at once on SIGINT.  (No sample: the shim's kernel gives
# them no guest context, and the period is 1,000 s.)  Timed from what
# perf top did, not from its start: on a loaded machine perf top -a takes
# seconds to read the host's processes before its first round
check "$($P test 'Guest bundles replaced live' 2>&1 | grep -c ': Ok')" 1 "perf test: a guest's bundle replaced live, as perf top does"
./serve-bundle "$PWD/agent.sock" guest1.vmctx 100 > spans.txt &
for m in garbage slow huge cut; do
	./serve-bundle "$PWD/$m.sock" @$m 100 > /dev/null &
done
wait_socks agent garbage slow huge cut
# (python3 itself in the background: its child, perf, gets the SIGINT,
# which a background job of a script starts with ignored: env resets it)
python3 -c "$maxrss_py" env --default-signal=INT LD_PRELOAD=./fake-guest-ctx.so $P top --vmcs-ctx -e cpu-clock -c 1000000000000 --stdio -a \
	--guest-refresh=1 --guest-fetch-timeout=1 \
	--guest-cid=1000=unix:$PWD/agent.sock,1001=unix:$PWD/garbage.sock,1002=unix:$PWD/slow.sock,1003=unix:$PWD/huge.sock,1004=unix:$PWD/cut.sock \
	< /dev/null > /dev/null 2> top.err &
top=$!
# three rounds: the good agent asked a third time (a minute at most)
for i in $(seq 600); do [ "$(wc -l < spans.txt)" -ge 3 ] && break; sleep 0.1; done
t0=$(date +%s%N)
pkill -INT -P $top
gone $top
ms=$((($(date +%s%N) - t0) / 1000000))
kill $(jobs -p) 2>/dev/null
wait
out=$(cat top.err)
rss=$(echo "$out" | sed -n 's/^maxrss_kb //p')
check "$(for v in 1001 1002 1003 1004; do echo "$out" | grep -c "WARNING: perf top --vmcs-ctx: VM $v: no bundle from "; done | paste -sd' ') $(echo "$out" | grep -c 'VM 1000')" \
	"1 1 1 1 0" "top: four hostile agents are one warning each over several rounds; the good one none"
echo "$out" | grep 'WARNING: perf top --vmcs-ctx: VM 100' | sed 's/^/     /'
check "$([ "$(wc -l < spans.txt)" -ge 3 ] && grep -vc '^span_ns 12000000000$' spans.txt)" 0 \
	"top: the good agent asked each round (--guest-refresh=1) for 2 x 1 + 10 s ($(wc -l < spans.txt) rounds)"
check "$([ "$ms" -lt 3000 ] && echo ok)" ok "top with hostile agents ends within 3 s of SIGINT (${ms} ms)"
check "$([ "${rss:-999999}" -lt 200000 ] && echo ok)" ok "top's memory stays bounded with a 4 GiB answer (max RSS ${rss:-?} kB)"
# an agent that starts late: said not to answer, then to answer again
rm -f agent.sock
env --default-signal=INT LD_PRELOAD=./fake-guest-ctx.so $P top --vmcs-ctx -e cpu-clock -c 1000000000000 --stdio -a \
	--guest-refresh=1 --guest-cid=1000=unix:$PWD/agent.sock < /dev/null > /dev/null 2> top.err &
top=$!
wait_for top.err 'VM 1000: no bundle from' 60
./serve-bundle "$PWD/agent.sock" guest1.vmctx 100 > /dev/null &
wait_for top.err 'VM 1000: its agent answers again' 30
# a few more rounds, which must not warn again
sleep 2
kill -INT $top
gone $top
kill $(jobs -p) 2>/dev/null
wait
out=$(cat top.err)
check "$(echo "$out" | grep -c 'WARNING: perf top --vmcs-ctx: VM 1000: no bundle from .*agent.sock') $(echo "$out" | grep -c 'perf top --vmcs-ctx: VM 1000: its agent answers again')" \
	"1 1" "top: an agent that starts late is said missing once, then said to answer"
out=$($P top --guest-refresh=5 2>&1; $P top --vmcs-ctx --guest-refresh=3601 2>&1)
check "$(echo "$out" | grep -c 'go with --vmcs-ctx') $(echo "$out" | grep -c 'at most 3600 seconds')" "1 1" \
	"top: the guest options without --vmcs-ctx, and past an hour, are refused"
check "$(LD_PRELOAD=./fake-guest-ctx.so $P top --vmcs-ctx -e cpu-clock:P --stdio 2>&1 | grep -c 'perf top: --vmcs-ctx: cpu-clock:P is a precise event')" 1 \
	"top --vmcs-ctx refuses a precise event"
LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -e cpu-clock -a -o fetch.data --no-guest-fetch \
	--guest-cid=1000=unix:$PWD/agent.sock -- sleep 0.1 >/dev/null 2>&1
check "$([ -e fetch.data.guests ] && echo made || echo none)" none "--no-guest-fetch: nothing fetched"
out=$(LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -e cpu-clock -a -o fetch.data \
	--guest-cid=1000=2,x -- sleep 0.1 2>&1)
check "$(echo "$out" | grep -c "WARNING: --guest-cid: VM 1000: '2' is no guest's CID") $(echo "$out" | grep -c "WARNING: --guest-cid: 'x' is not VM=CID")" \
	"1 1" "--guest-cid: a host CID and a malformed entry are refused, each said"
n=0
for t in 0 3601; do
	LD_PRELOAD=./fake-guest-ctx.so $P record --vmcs-ctx -e cpu-clock -a -o fetch.data \
		--guest-fetch-timeout=$t -- true 2>&1 | grep -q "guest-fetch-timeout: $t is not 1 to 3600 seconds" &&
		n=$((n + 1))
done
check "$n $([ -e fetch.data.guests ] && echo made || echo none)" "2 none" "--guest-fetch-timeout: 0 and 3601 s refused"
rm -rf fetch.data fetch.data.guests

if [ -f /tmp/tp.data ]; then
	python3 gen-wakeup.py /tmp/tp.data wakeup.data >/dev/null
	check "$($P report -i wakeup.data --guest-maps=guest1.vmctx --stdio --guest-view=vcpu 2>&1 | grep '^#   vcpu0: ' | sed 's/.*= //')" \
		"0.00%:66.67%:16.67%:16.67%" "kvm_vcpu_wakeup ends the halt: 50 idle + 50 steal"
fi
exit $fail
