#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# check-chains.sh PERF HANDOVER BUILD OUT: the Linux guest's call chains,
# on what the chain run of run-linux-lab.sh handed back (HANDOVER: L1's
# 'perf record --vmcs-ctx -g' while guest1 ran tree alone, guest1's bundle,
# L1's kallsyms, tree's line), read with PERF as a user reads them.
# tree (tree.c) was built with a known call tree: every sample in leaf has
# the guest chain leaf (tree), tree_mix (libtree.so), caller_a or caller_b
# (tree), run (tree), tree_start (tree), and caller_a's calls do RATIO
# times caller_b's work ("caller_a RATIO times caller_b's work" on tree's
# line), so RATIO / (RATIO + 1) of leaf's samples are under caller_a.
# Checks:
#   - perf script: leaf's samples in tree have that chain, each frame named
#     with its function and object, then the host's KVM_RUN ioctl; 99% at
#     least exact, none with a wrong frame; caller_a's share within 3
#     points or 4 binomial deviations at leaf's sample count, whichever
#     is wider (1.4 points a deviation at 1,000 samples, the fewest that
#     judge: a fixed 3 would miss 3% of fair runs there);
#   - perf report -g (folded, caller order): caller_a's share, as above;
#   - --guest-export=folded: the same stacks, VM, host frames, process,
#     guest frames, each with the ticks its samples stand for (a late
#     cpu-clock sample stands for more than one): caller_a's share of the
#     ticks is perf script's, from the samples' periods;
#   - that share of the ticks against the built ratio, as the samples'
#     share, at the weights' effective sample count ((sum w)^2 / sum w^2):
#     not against the samples' share, as late samples are not late at
#     random on an emulated host (see the check);
#   - perf inject --guest-maps: Debian's perf (linux-perf) gives the same
#     share from its output;
#   - --guest-export=pprof: go tool pprof -traces holds perf script's
#     chains, as many of each (a sample whose chain record perf record
#     lost is its address alone there, and must be one of the samples
#     perf script prints without a frame); its flame graph (go tool pprof -http), as
#     headless Chromium draws it, shows one stack from KVM into tree's
#     frames and caller_a's share of the ticks (flame-check.py); the screenshot is
#     OUT/flame.png, and OUT/flame-leaf.png focused on leaf.
#   - a perf built without libvmctx (PERF_NO_LIBVMCTX, where set): perf
#     script without --guest-maps prints the same chains, address for
#     address, as PERF does (the join is perf's session code).
# BUILD holds tree and libtree.so as built (their symbols are the ground
# truth for the names).  Exits 1 if a check missed.
# TREE and TREE_LIB: the program's name and its library's path in the
# guest (the DWARF run's tree-nofp, /usr/lib/tree-nofp/libtree.so: the
# same checks on chains unwound from the guest's stack; perf inject
# --guest-maps writes them unwound, as chains Debian's perf reads).
set -u
P=$1 h=$2 build=$3 out=$4
T=${TREE:-tree} TL=${TREE_LIB:-/usr/lib/tree/libtree.so}
G=$(cd "$(dirname "$0")" && pwd)
rc=0
ok() { echo "check-chains:   ok   $*"; }
miss() {
	echo "check-chains:   MISS $*"
	rc=1
}
# allow WANT N: the points a share of WANT% over N samples may stray: 3,
# or 4 binomial deviations, whichever is wider
allow() { awk -v w="$1" -v n="$2" 'BEGIN { d = n ? 4 * sqrt(w * (100 - w) / n) : 100
	printf "%.1f\n", (d > 3 ? d : 3) }'; }
# within WANT GOT TOL: GOT within TOL of WANT
within() { awk -v w="$1" -v g="$2" -v t="$3" 'BEGIN { d = g - w; exit !(d <= t && d >= -t) }'; }
maps=guest1=$h/guest1.vmctx
kall=--kallsyms=$h/kallsyms
line=$(cat "$h/tree.out")
echo "check-chains: guest1: $line"
tpid=$(echo "$line" | sed -n 's/^tree: pid \([0-9]*\):.*/\1/p')
ratio=$(echo "$line" | sed -n 's/.*caller_a \([0-9]*\) times caller_b.*/\1/p')
if [ -z "$tpid" ] || [ -z "$ratio" ]; then
	miss "no pid or ratio on tree's line"
	exit 1
fi
want=$(awk -v r="$ratio" 'BEGIN { printf "%.2f", 100 * r / (r + 1) }')
# the objects' names for their functions, from the objects as built
for f in leaf caller_a caller_b run tree_start; do
	nm "$build/$T" | grep -q " T $f\$" || miss "$T as built has no function $f"
done
nm -D "$build/libtree.so" | grep -q ' T tree_mix$' || miss "libtree.so as built has no tree_mix"

# ---- perf script: each sample's chain, frame by frame
"$P" script -i "$h/perf.data" $kall --guest-maps="$maps" -F comm,pid,tid,period,event,ip,sym,dso \
	> "$out/script" 2> "$out/script.err" || { miss "perf script failed:"; tail -n 3 "$out/script.err"; }
# the clock's tick: a sample's period is the ticks it stands for, in ns
tick=$("$P" evlist -v -i "$h/perf.data" 2>/dev/null |
	sed -n 's/^cpu-clock.*{ sample_period, sample_freq }: \([0-9]*\),.*/\1/p' | head -n 1)
# one line per sample of tree's pid: its frames as "sym (dso)", ';'-joined
# (and in tree-ticks, each with the ticks its period stands for; in
# tree-bare, how many of tree's samples have no frame at all: the
# record that carries a guest sample's chain comes after it, and perf
# record can lose it)
awk -v pid="$tpid" -v comm="$T" -v tick="${tick:-0}" -v ticks="$out/tree-ticks" -v bare="$out/tree-bare" '
	/^[^\t ]/ || /^ +[^ 0-9a-f]/ { flush(); hdr = $0; n = 0; next }
	/^\t/ { l = $0; sub(/^\t *[0-9a-f]+ /, "", l); f[n++] = l; next }
	NF == 0 { flush() }
	function flush(  i, s, h) {
		if (hdr != "" && hdr ~ ("^ *" comm " +" pid "/")) {
			if (n) {
				s = f[0]; for (i = 1; i < n; i++) s = s ";" f[i]; print s
				split(hdr, h, " ")
				printf "%d %s\n", tick ? h[3] / tick : 1, s > ticks
			} else
				nbare++
		}
		hdr = ""; n = 0
	}
	END { flush(); print nbare + 0 > bare }' "$out/script" > "$out/tree-chains"
echo "check-chains: perf script: $(wc -l < "$out/tree-chains") samples of tree (guest pid $tpid), the most frequent chain:"
sort "$out/tree-chains" | uniq -c | sort -rn | head -n 1 | sed 's/^/check-chains: | /'
# ---- the same chains in a perf without libvmctx: by address, as PERF
# prints them without --guest-maps
if [ -n "${PERF_NO_LIBVMCTX:-}" ]; then
	"$P" script -i "$h/perf.data" $kall -F tid,ip > "$out/script-addr" 2>/dev/null
	"$PERF_NO_LIBVMCTX" script -i "$h/perf.data" $kall -F tid,ip > "$out/script-nolib" 2>/dev/null
	recs=$("$PERF_NO_LIBVMCTX" report -i "$h/perf.data" --stats 2>/dev/null |
		awk '$1 == "CALLCHAIN_DEFERRED" && $2 == "events:" { print $3; exit }')
	deep=$(awk '/^ *[0-9]+ *$/ { if (n > 2) d++; n = 0; next } /^\t/ { n++ } END { print d + 0 }' "$out/script-nolib")
	if [ "${recs:-0}" -gt 0 ] && [ "$deep" -gt 0 ] && cmp -s "$out/script-addr" "$out/script-nolib"; then
		ok "a perf without libvmctx: perf script prints the same $(wc -l < "$out/script-nolib") lines ($deep samples with more than two frames, ${recs} deferred records merged)"
	else
		miss "a perf without libvmctx: perf script differs or merged nothing (${recs:-0} deferred records, $deep samples with more than two frames)"
	fi
fi

# share FILE: caller_a's share of the leaf chains in FILE ("COUNT STACK"
# lines, caller first), in percent, and the counts
share() {
	awk '{ n = $1; $1 = ""; if ($0 ~ /;caller_a;tree_mix;leaf$/) a += n
		else if ($0 ~ /;caller_b;tree_mix;leaf$/) b += n }
	     END { printf "%.2f %d %d\n", a + b ? 100 * a / (a + b) : 0, a, b }' "$1"
}
# check_share WHAT FILE
check_share() {
	set -- "$1" $(share "$2")
	set -- "$@" "$(allow "$want" $(($3 + $4)))"
	if [ "$3" -gt 0 ] && within "$want" "$2" "$5"; then
		ok "$1: caller_a $2% of leaf's samples ($3 under caller_a, $4 under caller_b; built $want%, +-$5)"
	else
		miss "$1: caller_a $2% of leaf's samples ($3 under caller_a, $4 under caller_b; built $want%, +-$5)"
	fi
}

# the guest part of leaf's chains: exact, ended early (a prefix of the
# chain, as a walk that ends with a marker leaves it), or wrong
# (a guest's files are /vmctx-guest/PID/PATH to perf, PID the VM's QEMU)
g=/vmctx-guest/$(cat "$h/guest1.pid" 2>/dev/null)
exp_a="leaf ($g/bin/$T);tree_mix ($g$TL);caller_a ($g/bin/$T);run ($g/bin/$T);tree_start ($g/bin/$T)"
exp_b=$(echo "$exp_a" | sed 's/caller_a/caller_b/')
awk -v ea="$exp_a" -v eb="$exp_b" '
	BEGIN { na = split(ea, A, ";"); split(eb, B, ";") }
	{ w = $1; sub(/^[0-9]+ /, "") }
	$0 ~ /^leaf \(/ {
		n = split($0, f, ";"); leaf++
		# the guest frames: up to the first of the host kernel, or
		# to the mark perf gives a guest stack cut short (an early end)
		for (g = 1; g <= n && f[g] !~ /\[kernel\.kallsyms\]\)$/ && f[g] !~ /^\[guest stack cut\] /; g++) ;
		g--
		ex = (g == na); pre = 1
		for (i = 1; i <= g; i++) {
			if (i > na || (f[i] != A[i] && f[i] != B[i]) || (i > 3 && f[3] == A[3] && f[i] != A[i]) ||
			    (i > 3 && f[3] == B[3] && f[i] != B[i])) { ex = 0; pre = 0 }
		}
		if (ex) { exact++; if (f[3] == A[3]) { a++; wa += w } else { b++; wb += w }; w2 += w * w
			# and then the host: KVM_RUN, down to the VMM thread
			for (i = g + 1; i <= n; i++) if (f[i] ~ /^kvm_vcpu_ioctl /) { kvm++; break } }
		else if (pre) early++
		else { wrong++; if (wrong <= 3) print "check-chains:        wrong: " $0 > "/dev/stderr" }
	}
	END { printf "%d %d %d %d %d %d %d %d %d %d\n", leaf, exact, early, wrong, kvm, a, b, wa, wb, w2 }' \
	"$out/tree-ticks" > "$out/leaf-verdicts" 2> "$out/leaf-wrong"
set -- $(cat "$out/leaf-verdicts")
leaf=$1 exact=$2 early=$3 wrong=$4 kvm=$5
samples_a=$6 samples_b=$7 ticks_a=$8 ticks_b=$9 ticks_w2=${10}
cat "$out/leaf-wrong"
# (what perf record lost, for a count that falls short: its buffer full
# when L1's perf record ran too little)
lost=$("$P" script -i "$h/perf.data" --show-lost-events -F time 2>/dev/null |
	awk '/PERF_RECORD_LOST lost/ { n++; s += $NF } END { printf "%d samples in %d records", s, n }')
if [ "$leaf" -ge 1000 ]; then ok "perf script: $leaf samples of tree in leaf (at least 1000; perf record lost $lost)"
else miss "perf script: $leaf samples of tree in leaf (at least 1000; perf record lost $lost)"; fi
if [ "$wrong" = 0 ]; then ok "perf script: 0 chains of leaf with a wrong frame ($early ended early)"
else miss "perf script: $wrong chains of leaf with a wrong frame"; fi
if [ "$leaf" -gt 0 ] && [ $((exact * 100)) -ge $((leaf * 99)) ]; then
	ok "perf script: $exact/$leaf chains of leaf exact, each frame with its function and object (at least 99%)"
else
	miss "perf script: $exact/$leaf chains of leaf exact, each frame with its function and object (at least 99%)"
fi
if [ "$exact" -gt 0 ] && [ $((kvm * 100)) -ge $((exact * 99)) ]; then
	ok "perf script: $kvm/$exact of them go on into the host's kvm_vcpu_ioctl (at least 99%)"
else
	miss "perf script: $kvm/$exact of them go on into the host's kvm_vcpu_ioctl (at least 99%)"
fi
echo "$samples_a run;caller_a;tree_mix;leaf" > "$out/script-folded"
echo "$samples_b run;caller_b;tree_mix;leaf" >> "$out/script-folded"
check_share "perf script" "$out/script-folded"
# the same samples' ticks: caller_a's share of them against the built
# ratio, as the samples' share is, at the weights' effective sample count
# n_eff = (sum w)^2 / sum w^2.  Not against the samples' share: a late
# sample's extra ticks are time the guest spent where it was sampled, and
# on the emulated host what the guest runs makes samples late (in one run
# 11 of leaf's 14 extra ticks fell under caller_b, which had a quarter of
# its samples: about 3e-5 if lateness were drawn at random), so the two
# shares differ by more than weights drawn at random would make them.
set -- $(awk -v a="$samples_a" -v b="$samples_b" -v wa="$ticks_a" -v wb="$ticks_b" -v w2="$ticks_w2" 'BEGIN {
	n = a + b; t = wa + wb
	printf "%.2f %.2f %.0f\n", t ? 100 * wa / t : 0, n ? 100 * a / n : 0, w2 ? t * t / w2 : 0 }')
tshare=$1 sshare=$2 neff=$3
tallow=$(allow "$want" "$neff")
tmsg="perf script's periods: caller_a $tshare% of leaf's $((ticks_a + ticks_b)) ticks (of its $((samples_a + samples_b)) samples $sshare%; the weights leave $neff effective samples; built $want%, +-$tallow)"
if [ "$ticks_a" -gt 0 ] && within "$want" "$tshare" "$tallow"; then
	ok "$tmsg"
else
	miss "$tmsg"
fi
# check_ticks WHAT FILE: FILE's counts are ticks, caller_a's share of them
# perf script's
check_ticks() {
	set -- "$1" $(share "$2")
	if [ "$3" -gt 0 ] && awk -v t="$tshare" -v g="$2" 'BEGIN { exit !(g - t <= 0.01 && t - g <= 0.01) }'; then
		ok "$1: caller_a $2% of leaf's ticks ($3 under caller_a, $4 under caller_b; perf script's periods $tshare%)"
	else
		miss "$1: caller_a $2% of leaf's ticks ($3 under caller_a, $4 under caller_b; perf script's periods $tshare%)"
	fi
}

# ---- perf report -g: leaf's call graph, folded, callers first
"$P" report -i "$h/perf.data" $kall --guest-maps="$maps" --stdio --no-children \
	--comm "$T" --symbols leaf --sort sym -g folded,0,caller,count \
	> "$out/report-g" 2> "$out/report-g.err" || { miss "perf report -g failed:"; tail -n 3 "$out/report-g.err"; }
grep -E '^[0-9]+ ' "$out/report-g" > "$out/report-folded"
echo "check-chains: perf report --no-children --comm $T --symbols leaf -g folded,0,caller,count, the most frequent stack:"
sort -rn "$out/report-folded" | head -n 1 | cut -c1-400 | sed 's/^/check-chains: | /'
check_share "perf report -g" "$out/report-folded"

# ---- the exports
"$P" report -i "$h/perf.data" $kall --guest-maps="$maps" --stdio -g \
	--guest-export=folded:"$out/stacks.folded",pprof:"$out/prof.pb.gz" > /dev/null 2> "$out/export.err" ||
	{ miss "perf report --guest-export failed:"; tail -n 3 "$out/export.err"; }
awk -v t="$T" '$0 ~ (";" t ";tree_start;run;caller_[ab];tree_mix;leaf [0-9]+$") { n = $NF; $NF = ""; sub(/ $/, ""); print n, $0 }' \
	"$out/stacks.folded" > "$out/export-folded"
echo "check-chains: --guest-export=folded, the most frequent stack of leaf:"
sort -rn "$out/export-folded" | head -n 1 | cut -c1-400 | sed 's/^/check-chains: | /'
if grep -q ";kvm_vcpu_ioctl;.*;$T;tree_start;run;caller_a;tree_mix;leaf\$" "$out/export-folded"; then
	ok "--guest-export=folded: VM, the host's frames through KVM, the process, tree's frames in one stack"
else
	miss "--guest-export=folded: no stack through KVM into $T;tree_start;run;caller_a;tree_mix;leaf"
fi
check_ticks "--guest-export=folded" "$out/export-folded"

# ---- perf inject --guest-maps: Debian's own perf reads the guest chains
# (the guest's frames only; perf inject leaves the host's out)
if [ -x /usr/bin/perf ]; then
	mkdir -p "$out/home"
	HOME=$out/home "$P" inject -i "$h/perf.data" --guest-maps="$maps" -o "$out/inj.data" \
		> "$out/inject.out" 2>&1 || { miss "perf inject --guest-maps failed:"; tail -n 3 "$out/inject.out"; }
	HOME=$out/home /usr/bin/perf --buildid-dir "$out/inj.data/debug" report -i "$out/inj.data" --stdio --no-children \
		--comm "$T" --symbols leaf -g folded,0,caller,count 2> "$out/inject-report.err" |
		grep -E '^[0-9]+ ' > "$out/inject-folded"
	# (no attribute bit it does not know: the deferred chains are gone)
	if grep -q 'Reserved bits' "$out/inject-report.err"; then
		miss "$(/usr/bin/perf --version) finds attribute bits it does not know in perf inject's output"
	fi
	echo "check-chains: $(/usr/bin/perf --version) on perf inject --guest-maps' output, the most frequent stack of leaf:"
	sort -rn "$out/inject-folded" | head -n 1 | sed 's/^/check-chains: | /'
	if grep -q '^[0-9]* tree_start;run;caller_a;tree_mix;leaf$' "$out/inject-folded"; then
		ok "$(/usr/bin/perf --version) names $T's frames in perf inject's output"
	else
		miss "$(/usr/bin/perf --version) gives no stack tree_start;run;caller_a;tree_mix;leaf in perf inject's output"
	fi
	check_share "$(/usr/bin/perf --version) on perf inject's output" "$out/inject-folded"
else
	echo "check-chains: skip perf inject: no /usr/bin/perf (Debian's linux-perf)"
fi

if ! command -v go > /dev/null 2>&1; then
	echo "check-chains: SKIP the pprof export: go is not installed (apt-get install golang-go)"
	exit $rc
fi
export HOME="$out" GOCACHE="$out/gocache" GOFLAGS= GOPROXY=off GOTOOLCHAIN=local
# go tool pprof -traces: each sample's stack, leaf first, with its count
# of ticks; tree's, less the process and VM frames the export adds, are
# perf script's without the objects, as many ticks of each as their
# periods hold (a late cpu-clock sample stands for more than one)
go tool pprof -sample_index=samples -traces "$out/prof.pb.gz" 2> "$out/traces.err" |
	awk -v t="$T" -v bare="$out/pprof-bare" '/^-+\+-+$/ { flush(); next }
	     /^ *[0-9]+ +[^ ]/ && s == "" { c = $1; sub(/^ *[0-9]+ +/, ""); s = $0; next }
	     /^ +[^ ]/ && s != "" { sub(/^ +/, ""); s = s ";" $0 }
	     function flush() {
		if (s ~ /^leaf;/) {
			# (the process frame sits between the guest frames and
			# the host frames, wherever the guest chain ended)
			sub(/;guest1 \(VM1\)$/, "", s); sub(";" t "(;|$)", ";", s); sub(/;$/, "", s)
			gsub(/<unknown>/, "[unknown]", s)
			if (s == "leaf") nbare += c; else n[s] += c
		}
		s = ""
	     }
	     END { flush(); for (k in n) print n[k], k; print nbare + 0 > bare }' | sort > "$out/pprof-traces"
sed 's/ ([^)]*)//g' "$out/tree-ticks" | awk '$2 ~ /^leaf;/ { n[$2] += $1 }
	END { for (k in n) if (n[k]) print n[k], k }' | sort > "$out/script-traces"
# (a sample of leaf without a chain, its record lost, is leaf alone in
# the export, and nothing in perf script: each must be one of the
# samples perf script printed without a frame)
pbare=$(cat "$out/pprof-bare" 2>/dev/null) sbare=$(cat "$out/tree-bare" 2>/dev/null)
if [ -s "$out/pprof-traces" ] && cmp -s "$out/pprof-traces" "$out/script-traces" &&
   [ "${pbare:-x}" -le "${sbare:-0}" ] 2>/dev/null; then
	ok "go tool pprof -traces: the $(wc -l < "$out/pprof-traces") stacks of leaf and their counts are perf script's (and $pbare of leaf alone, of the $sbare samples perf script gives no frame: their chains lost)"
elif [ "${pbare:-x}" -le "${sbare:-0}" ] 2>/dev/null; then
	miss "go tool pprof -traces: the stacks of leaf are not perf script's:"
	diff "$out/script-traces" "$out/pprof-traces" | head -n 6 | cut -c1-300
else
	miss "go tool pprof -traces: ${pbare:-no} samples of leaf alone, of the ${sbare:-no} perf script gives no frame"
fi

# ---- the flame graph, as a browser draws it
if ! command -v chromium > /dev/null 2>&1; then
	miss "no chromium (apt-get install chromium) for the flame graph"
	exit $rc
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
go tool pprof -http=127.0.0.1:$port -no_browser "$out/prof.pb.gz" > "$out/pprof-http.log" 2>&1 &
web=$!
i=0
while ! grep -q '^Serving web UI' "$out/pprof-http.log" && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
url=http://127.0.0.1:$port/ui/flamegraph
# (--virtual-time-budget: the page's transitions run to their end before
# the DOM and the picture are taken)
chrome() { timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$out/chromium" --window-size=1600,1000 --virtual-time-budget=10000 "$@" 2>> "$out/chromium.err"; }
chrome --dump-dom "$url" > "$out/flame.html"
chrome --screenshot="$out/flame.png" "$url" > /dev/null
# and focused on leaf (pprof's REFINE, focus: ?f=), tree's own picture
chrome --screenshot="$out/flame-leaf.png" "$url?f=%5Eleaf%24" > /dev/null
kill $web 2> /dev/null
if [ -s "$out/flame.png" ]; then
	ok "the flame graph of go tool pprof -http, drawn by $(chromium --version 2>/dev/null | head -n 1): $out/flame.png (focused on leaf: flame-leaf.png)"
else
	miss "no screenshot of the flame graph"
fi
python3 "$G/flame-check.py" "$out/flame.html" "$tshare" "$T" > "$out/flame-check" || rc=1
cut -c1-600 "$out/flame-check"
exit $rc
