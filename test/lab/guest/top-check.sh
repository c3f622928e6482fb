#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# top-check.sh N PERIOD REFRESH: perf top --vmcs-ctx, live, in L1 (the
# Linux-guest lab's perf run, l1-init.sh), as a user runs it: its TUI in
# a tmux pane, read back with capture-pane every 2 s.  Guest N's agent
# serves (vmctx.serve=1) and, with vmctx.top=1, starts "late" (hot under
# a name of its own) once perf top has had a bundle from it, and stops it
# once perf top has had two more (guest-init.sh).  Checks:
#   - perf top names late, a guest process it could not know when it
#     started, with hot's functions (late hot [u] hot_alpha or hot_beta
#     under --sort comm,dso,sym: [u], a guest's user code) while late
#     runs: within its next
#     bundle, the refresh and the bundle's build (its delay is printed);
#   - the TUI takes its keys: 'q' ends perf top, with status 0, within
#     10 s.
# The pane that first named late is printed (the rows the user sees).
n=$1 period=$2 refresh=$3
log=/tmp/l2-$n.log
out=/tmp/top
say() { echo "top-check: $*"; }
fail() {
	say "FAIL $*"
	# (the pane's head, and its last line: perf's messages)
	[ -f $out/cap ] && { head -n 30 $out/cap; grep -v '^ *$' $out/cap | tail -n 1; } |
		sed 's/^/top-check: pane: /'
	[ -s $out/stderr ] && sed 's/^/top-check: perf top: /' $out/stderr | head -n 10
	tmux kill-server 2>/dev/null
	exit 1
}
now() { cut -d' ' -f1 /proc/uptime; }
mkdir -p $out /dev/pts
grep -q ' /dev/pts ' /proc/mounts || mount -t devpts devpts /dev/pts || fail "no /dev/pts"
# (the terminfo of tmux and of its panes, and a UTF-8 locale, which tmux
# wants: staged by run-linux-lab.sh)
export TERMINFO=/lab/terminfo TERM=screen LC_ALL=C.UTF-8
tmux -f /dev/null new-session -d -s top -x 160 -y 50 \
	"perf top --vmcs-ctx -e cpu-clock -c $period --sort comm,dso,sym --guest-refresh=$refresh --guest-fetch-timeout=300 -d 1 2>$out/stderr; echo \$? > $out/rc" ||
	fail "tmux did not start"
say "perf top --vmcs-ctx started at $(now) s (--guest-refresh=$refresh)"
k=0 started= seen=
while :; do
	sleep 2
	k=$((k + 1))
	[ -f $out/rc ] && fail "perf top ended (status $(cat $out/rc))"
	tmux capture-pane -p -t top > $out/cap 2>/dev/null || fail "perf top's pane is gone"
	t=$(now)
	if [ -z "$started" ] && grep -aq '^VMCTX-L2: top: late started' $log; then
		started=$t
		say "guest$n says late started (seen at $t s)"
	fi
	# late's row: its comm, hot's object, a user symbol of hot's
	if [ -n "$started" ] && [ -z "$seen" ] &&
		grep -Eq '%  *late  *hot  *\[u\] hot_(alpha|beta)' $out/cap; then
		seen=$t
		cp $out/cap $out/cap.late
	fi
	grep -aq '^VMCTX-L2: top: late stopped' $log && break
	grep -aq '^VMCTX-L2: DONE' $log && fail "guest$n ended before late stopped"
	[ $k -lt 450 ] || fail "guest$n said nothing of late in 900 s"
done
[ -n "$started" ] || fail "guest$n never said that late started"
[ -n "$seen" ] || fail "perf top never named late with hot's functions while it ran"
say "late named with hot's functions $(awk -v a="$started" -v b="$seen" 'BEGIN { printf "%.0f", b - a }') s after guest$n said it started (a refresh of $refresh s and the bundle's build)"
# the rows as the user saw them: the header and the first 14 entries
grep -v '^ *$' $out/cap.late | head -n 16 | sed 's/^/top-check: pane: /'
tmux send-keys -t top q
i=0
while [ ! -f $out/rc ] && [ $i -lt 50 ]; do usleep 200000; i=$((i + 1)); done
[ -f $out/rc ] || fail "perf top did not end within 10 s of 'q'"
[ "$(cat $out/rc)" = 0 ] || fail "perf top ended with status $(cat $out/rc) on 'q'"
tmux kill-server 2>/dev/null
say "PASS"
