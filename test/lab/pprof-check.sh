#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pprof-check.sh LOG [NAME]: read, with go tool pprof on this machine, the
# pprof export that experiments.sh put on the L1 console for experiment 2
# (NAME, default exp2: 'perf report --guest-export=pprof:...' of a real
# recording, base64 between VMCTX-LAB-FILE lines).  Experiment 2 runs two
# instances of one program, guest pids 1 and 2, on one vCPU, each round the
# same work for both.  Checks:
#   - the file loads (-raw) and its samples carry the labels vm, vcpu,
#     class, guest_comm and guest_pid;
#   - the two instances split their samples as the guest measured their
#     work to split, +- 3 (-tagfocus=guest_pid=^N$; the "lab-exp: time
#     NAME:" lines, TSC ticks per function, three for each instance; 50:50
#     as built where the log has none);
#   - pprof's total is the total of the folded stacks printed beside it.
# Prints 'go tool pprof -top -tagroot=vm,guest_comm' and exits non-zero if
# a check missed.  Skipped (exit 0, said) where go is not installed.
set -u
log=$1
name=${2:-exp2}
if ! command -v go >/dev/null 2>&1; then
	echo "pprof-check: SKIP: go is not installed (apt-get install golang-go)"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
HOME=$tmp GOCACHE=$tmp/cache GOPATH=$tmp/go GOFLAGS= GOPROXY=off GOTOOLCHAIN=local
export HOME GOCACHE GOPATH GOFLAGS GOPROXY GOTOOLCHAIN
rc=0
ok() { echo "pprof-check:   ok   $*"; }
miss() {
	echo "pprof-check:   MISS $*"
	rc=1
}

tr -d '\r' <"$log" | sed -n "/^VMCTX-LAB-FILE-BEGIN $name.pb.gz\$/,/^VMCTX-LAB-FILE-END $name.pb.gz\$/p" |
	sed '1d;$d' | base64 -d >"$tmp/p.pb.gz" 2>/dev/null
if [ ! -s "$tmp/p.pb.gz" ]; then
	echo "pprof-check: MISS no $name.pb.gz in $log"
	exit 1
fi
tr -d '\r' <"$log" | sed -n "s/^lab-exp: folded $name: //p" >"$tmp/folded"

pprof() { go tool pprof -symbolize=none "$@" 2>>"$tmp/err"; }
# total [pprof options]: what the samples -top keeps add up to, in samples
total() {
	pprof -sample_index=samples -top -nodefraction=0 -nodecount=1000000 "$@" "$tmp/p.pb.gz" |
		sed -n 's/^Showing nodes accounting for \([0-9.]*\), .*/\1/p'
}

if ! pprof -raw "$tmp/p.pb.gz" >"$tmp/raw"; then
	miss "go tool pprof cannot read $name.pb.gz:"
	cat "$tmp/err"
	exit 1
fi
ok "$name.pb.gz ($(stat -c %s "$tmp/p.pb.gz") bytes) loads in go tool pprof"
for l in vm vcpu class guest_comm guest_pid; do
	if grep -q " $l:\[" "$tmp/raw"; then ok "samples carry the label $l"; else miss "no sample has the label $l"; fi
done

echo "pprof-check: go tool pprof -top -tagroot=vm,guest_comm $name.pb.gz:"
pprof -top -nodecount=12 -tagroot=vm,guest_comm "$tmp/p.pb.gz" | sed 's/^/pprof-check: | /'

# (a regexp: pprof takes a bare number for a range of a numeric label)
p1=$(total '-tagfocus=guest_pid=^1$')
p2=$(total '-tagfocus=guest_pid=^2$')
if [ -z "$p1" ] || [ -z "$p2" ] || [ "$p1" = 0 ] || [ "$p2" = 0 ]; then
	miss "no samples of guest pid 1 or 2 ('$p1', '$p2')"
else
	# the guest's measure: the first three functions are pid 1's, the next pid 2's
	want=$(tr -d '\r' <"$log" | sed -n "s/^lab-exp: time $name: [^ ]* \([0-9]*\)\$/\1/p" |
		awk '{ t[NR] = $1 } END {
			if (NR != 6) { print 50; exit }
			a = t[1] + t[2] + t[3]; b = t[4] + t[5] + t[6]
			print (a + b > 0) ? 100 * a / (a + b) : 50 }')
	awk -v a="$p1" -v b="$p2" -v w="$want" 'BEGIN {
		s = a / (a + b) * 100; d = s - w; if (d < 0) d = -d
		printf "pprof-check:   %-4s guest pid 1 %d and pid 2 %d samples: %.2f%% / %.2f%% (the guest measured %.2f / %.2f, +-3)\n",
		       d <= 3 ? "ok" : "MISS", a, b, s, 100 - s, w, 100 - w
		bad = (d > 3); exit bad }' || rc=1
fi

all=$(total)
folded=$(awk '{ n += $NF } END { print n + 0 }' "$tmp/folded")
if [ -n "$all" ] && [ "$all" = "$folded" ]; then
	ok "pprof total $all samples = the folded stacks' total"
else
	miss "pprof total '$all' samples, the folded stacks' $folded"
fi
exit $rc
