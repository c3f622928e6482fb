#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# perf-check.sh PERF.DATA BUNDLE WORK: the Linux-guest lab's checks of what
# the user sees.  PERF.DATA is 'perf record --vmcs-ctx -a' of the L1 host
# while the L2 guest ran; BUNDLE is what 'vmctx-agent record' wrote in it;
# WORK is "pid:rounds,pid:rounds", the work each of the two hot instances
# reported.  Every figure comes from perf's own output: 'perf report
# --guest-maps' (the guest-level view and the guest_pid key) and, for the
# ground truth of whose code each sample hit, 'perf script' (guest IP and
# CPL), against nm -S of the two programs: hot is linked at 0x20000000,
# churn (the same source) at 0x30000000, so an IP tells whose code it is.
#
# Checks (each prints its figures):
#  - perf report says the guest clock is exact, through the TSC;
#  - >= 95% of the guest user samples in hot's code are named hot(1),
#    hot(2) or blip with one of hot's functions, and as many in churn's code are
#    named churn(N) with one of its functions: a sample named with a
#    function must lie in the named process's own code, so this also says
#    that at most 5% went to a wrong process;
#  - the two hot instances (both on vCPU 1) split their samples as their
#    work, within 3 points, and each has the 60/30/10 function mix within
#    5 points;
#  - blip, which lived 1 s, is named.
data=$1 bundle=$2 work=$3
maps="guest1=$bundle"
fail=0
no() { echo "perf-check: FAIL $*"; fail=1; }

view=$(perf report -i "$data" --guest-maps="$maps" --guest-view=guest 2>/tmp/report.err)
[ -n "$view" ] || { cat /tmp/report.err; echo "perf-check: FAIL no guest view"; exit 1; }
echo "$view" | head -n 40
clock=$(echo "$view" | grep '^# guest clock of VM1 (guest1): ')
echo "perf-check: $clock"
case $clock in
*": exact, through the TSC"*) ;;
*) no "the guest clock is not the exact TSC chain" ;;
esac

# text ranges of hot's functions in each program, from nm -S
range() {
	awk 'function h(s,  i, n, c) { n = 0; s = tolower(s)
		for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; n = n * 16 + c }
		return n }
	     $4 ~ /^hot_(alpha|beta|gamma)$/ { a = h($1); e = a + h($2); if (!lo || a < lo) lo = a; if (e > hi) hi = e }
	     END { printf "%d %d\n", lo, hi }' "$1"
}
set -- $(range /lab/hot.syms) $(range /lab/churn.syms)
hot_lo=$1 hot_hi=$2 churn_lo=$3 churn_hi=$4

# ground truth: guest user samples by whose code their IP is in
perf script -i "$data" -F ip,guest_cpl 2>/dev/null |
	awk -v hl="$hot_lo" -v hh="$hot_hi" -v cl="$churn_lo" -v ch="$churn_hi" '
	function h(s,  i, n, c) { n = 0; s = tolower(s)
		for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; n = n * 16 + c }
		return n }
	$2 == "cpl:3" { ip = h($1); if (ip >= hl && ip < hh) hot++; else if (ip >= cl && ip < ch) churn++; else other++ }
	END { printf "%d %d %d\n", hot, churn, other }' > /tmp/truth
read hot_ip churn_ip other_ip < /tmp/truth
echo "perf-check: guest user samples by IP (perf script): hot's code $hot_ip, churn's $churn_ip, elsewhere $other_ip"

# what perf report names: rows "Samples %Ratio Function Module"
named() {
	echo "$view" | awk -v re="$1" '$3 ~ /^hot_(alpha|beta|gamma)$/ && $4 ~ re { n += $1 } END { print n + 0 }'
}
hot_named=$(named '^(hot(\([0-9]+\))?|blip)$')
churn_named=$(named '^churn(\([0-9]+\))?$')
churn_procs=$(echo "$view" | awk '$4 ~ /^churn(\([0-9]+\))?$/ { p[$4] = 1 } END { print length(p) }')
echo "perf-check: named by perf report: hot/blip $hot_named of $hot_ip, churn $churn_named of $churn_ip (in $churn_procs processes)"
[ "$hot_ip" -gt 100 ] || no "too few samples in hot's code ($hot_ip)"
[ $((hot_named * 100)) -ge $((hot_ip * 95)) ] || no "hot's samples named: $hot_named of $hot_ip (< 95%)"
[ "$hot_named" -le "$hot_ip" ] || no "more samples named hot ($hot_named) than hit its code ($hot_ip)"
if [ "$churn_ip" -gt 0 ]; then
	[ $((churn_named * 100)) -ge $((churn_ip * 95)) ] ||
		no "churn's samples named: $churn_named of $churn_ip (< 95%)"
	[ "$churn_named" -le "$churn_ip" ] ||
		no "more samples named churn ($churn_named) than hit its code ($churn_ip)"
fi

# the two hot instances: function mix, and the split against their work
labels=$(echo "$view" | awk '$4 ~ /^hot(\([0-9]+\))?$/ && $3 ~ /^hot_/ { n[$4] += $1 }
	END { for (m in n) if (n[m] >= 100) print m }')
[ "$(echo "$labels" | wc -w)" = 2 ] || no "not two hot instances with samples: $labels"
for p in $labels; do
	echo "$view" | awk -v m="$p" '$4 == m && $3 ~ /^hot_/ { n[$3] = $1; t += $1 }
		END { if (!t) { print "perf-check: FAIL no samples for " m; exit 1 }
		      a = 100 * n["hot_alpha"] / t; b = 100 * n["hot_beta"] / t; g = 100 * n["hot_gamma"] / t
		      printf "perf-check: %s: %d samples, alpha/beta/gamma %.1f/%.1f/%.1f%% (want 60/30/10 +-5)\n", m, t, a, b, g
		      if (a < 55 || a > 65 || b < 25 || b > 35 || g < 5 || g > 15) { print "perf-check: FAIL function mix of " m; exit 1 } }' ||
		fail=1
done
# samples per guest pid, for the split against each pid's rounds
perf report -i "$data" --guest-maps="$maps" --stdio -n --sort guest_comm,guest_pid \
	-F sample,guest_comm,guest_pid 2>/dev/null | awk '$2 == "hot" { print $3, $1 }' > /tmp/bypid
echo "$work" | tr ',' '\n' | tr ':' ' ' > /tmp/work
awk 'NR == FNR { s[$1] = $2; next } { r[$1] = $2; tr += $2; ts += s[$1]; n++ }
     END { if (n != 2 || !tr || !ts) { print "perf-check: FAIL work or samples missing for the hot instances"; exit 1 }
	   for (p in r) { w = 100 * r[p] / tr; g = 100 * s[p] / ts; d = g - w; if (d < 0) d = -d
		printf "perf-check: hot pid %s: %.1f%% of the samples, %.1f%% of the work\n", p, g, w
		if (d > 3) bad = 1 }
	   if (bad) { print "perf-check: FAIL the instances do not split as their work (> 3 points)"; exit 1 } }' \
	/tmp/bypid /tmp/work || fail=1
echo "$view" | awk '$4 == "blip" { n += $1 } END { print "perf-check: blip: " n + 0 " samples"; exit !n }' ||
	no "blip is not named"
[ $fail = 0 ] && echo "perf-check: all checks passed"
exit $fail
