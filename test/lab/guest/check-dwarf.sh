#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# check-dwarf.sh PERF HANDOVER STAGE OUT: Debian's own xz and perl (no
# frame pointers) in the DWARF run of run-linux-lab.sh, on what it handed
# back (HANDOVER: L1's 'perf record --vmcs-ctx --call-graph dwarf', and in
# dwarf/ what the guest wrote: its bundle with the objects' unwind tables,
# its own 'perf record --call-graph dwarf' of the same xz and perl, their
# pids).  STAGE is the guest's root as packed (its files, for Debian's
# perf --symfs).  Checks:
#   - the host's chains of xz and perl (perf script --guest-maps, unwound
#     from the guest stacks KVM copied, with the bundle's tables) against
#     the guest's own (Debian's linux-perf, libunwind, on the guest's own
#     recording of the same processes): for each program, 90% at least
#     of the stacks of its top functions alike, up to 5 frames
#     (compare-stacks.py);
#   - perl's flame graph from the host (--guest-export=pprof, go tool
#     pprof -http, headless Chromium): a stack of boxes from KVM through
#     perl's interpreter loop (main, perl_run, Perl_runops_standard) into
#     its ops; the screenshot is OUT/flame-perl.png.
# Exits 1 if a check missed.
set -u
P=$1 h=$2 stage=$3 out=$4
G=$(cd "$(dirname "$0")" && pwd)
rc=0
ok() { echo "check-dwarf:   ok   $*"; }
miss() {
	echo "check-dwarf:   MISS $*"
	rc=1
}
maps=guest1=$h/dwarf/guest1.vmctx
kall=--kallsyms=$h/kallsyms
sed 's/^/check-dwarf: guest1: /' "$h/dwarf/pids"
"$P" script -i "$h/perf.data" $kall --guest-maps="$maps" --no-inline -F comm,pid,tid,ip,sym,dso \
	> "$out/host-script" 2> "$out/host-script.err" || { miss "perf script --guest-maps failed:"; tail -n 3 "$out/host-script.err"; }
if [ -x /usr/bin/perf ]; then
	HOME=$out /usr/bin/perf script -i "$h/dwarf/guest.data" --symfs="$stage" --no-inline -F comm,pid,tid,ip,sym,dso \
		> "$out/guest-script" 2> "$out/guest-script.err" ||
		{ miss "$(/usr/bin/perf --version) script of the guest's recording failed:"; tail -n 3 "$out/guest-script.err"; }
	# the objects' names for one address (libc's malloc, __libc_malloc):
	# one function, whichever name a perf picks
	for f in "$stage"/usr/bin/xz "$stage"/usr/bin/perl "$stage"/lib/x86_64-linux-gnu/*.so* "$stage"/lib64/*.so*; do
		[ -f "$f" ] || continue
		nm -D --defined-only "$f" 2>/dev/null | awk -v o="${f##*/}" 'NF == 3 { sub(/@.*/, "", $3); print o, $1, $3 }'
	done > "$out/aliases"
	for prog in xz perl; do
		pid=$(sed -n "s/^$prog: pid \\([0-9]*\\)\$/\\1/p" "$h/dwarf/pids" | head -n 1)
		[ -n "$pid" ] || { miss "no pid of $prog from the guest"; continue; }
		python3 "$G/compare-stacks.py" -a "$out/aliases" "$prog" "$pid" "$out/host-script" "$out/guest-script" |
			sed 's/^compare-stacks:/check-dwarf:/' > "$out/compare-$prog"
		cat "$out/compare-$prog"
		grep -q '^check-dwarf:   ok ' "$out/compare-$prog" || rc=1
	done
else
	miss "no /usr/bin/perf (Debian's linux-perf) to read the guest's own recording"
fi

# ---- perl's flame graph, from the host
"$P" report -i "$h/perf.data" $kall --guest-maps="$maps" --stdio -g \
	--guest-export=pprof:"$out/prof.pb.gz" > /dev/null 2> "$out/export.err" ||
	{ miss "perf report --guest-export=pprof failed:"; tail -n 3 "$out/export.err"; }
if ! command -v go > /dev/null 2>&1 || ! command -v chromium > /dev/null 2>&1; then
	miss "no go (golang-go) or chromium for perl's flame graph"
	exit $rc
fi
export HOME="$out" GOCACHE="$out/gocache" GOFLAGS= GOPROXY=off GOTOOLCHAIN=local
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
go tool pprof -http=127.0.0.1:$port -no_browser "$out/prof.pb.gz" > "$out/pprof-http.log" 2>&1 &
web=$!
i=0
while ! grep -q '^Serving web UI' "$out/pprof-http.log" && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
# focused on perl's interpreter loop (pprof's focus: ?f=)
url="http://127.0.0.1:$port/ui/flamegraph?f=%5EPerl_runops_standard%24"
chrome() { timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$out/chromium" --window-size=1600,1000 --virtual-time-budget=10000 "$@" 2>> "$out/chromium.err"; }
chrome --dump-dom "$url" > "$out/flame-perl.html"
chrome --screenshot="$out/flame-perl.png" "$url" > /dev/null
kill $web 2> /dev/null
if [ -s "$out/flame-perl.png" ]; then
	ok "perl's flame graph (go tool pprof -http, focused on Perl_runops_standard): $out/flame-perl.png"
else
	miss "no screenshot of perl's flame graph"
fi
python3 "$G/flame-check.py" --stack "$out/flame-perl.html" \
	kvm_vcpu_ioctl perl main perl_run Perl_runops_standard > "$out/flame-perl-check" || rc=1
sed 's/^flame-check:/check-dwarf:/' "$out/flame-perl-check" | cut -c1-600
exit $rc
