#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What does vmctx-agent serve cost a guest at rest, between the host's
# requests?  The service runs with the switch log (--switches) on a Unix
# socket for SECS seconds on an idle machine; SECS seconds while every
# CPU spins in a shell loop (busy, few switches, no new process); then
# twice SECS seconds while every CPU forks and execs /bin/true in a loop
# (a fork storm: thousands of processes a second come and go, each a few
# context switches, which the agent must keep).  For each phase it
# prints the agent's CPU time (user
# and system, as a share of one CPU), its resident memory at the end and
# the peak, and what the machine did (context switches and new
# processes a second, from /proc/stat).  No request is made: a request's
# cost is its child's, and the host asks once a recording.  Needs root
# and a kernel with BTF (the BPF backend), or the module loaded.
#
#   guest-agent/bench-serve.sh [AGENT [SECS [BACKEND [KEEP]]]]
#
# AGENT defaults to $VMCTX_AGENT, else guest-agent/vmctx-agent in the
# current directory (a build tree); SECS 60; BACKEND bpf; KEEP (--keep)
# 600.  The storm runs twice in a row: with KEEP no longer than SECS,
# the second shows the memory of a full kept span, which no longer
# grows.
set -eu

agent=${1:-${VMCTX_AGENT:-./guest-agent/vmctx-agent}}
secs=${2:-60}
backend=${3:-bpf}
keep=${4:-600}
[ -x "$agent" ] || { echo "bench-serve: $agent: not an executable (pass AGENT)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench-serve: needs root (the agent's backend)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmctx-bench.XXXXXX")
pid= loops=
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	[ -z "$loops" ] || kill $loops 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
hz=$(getconf CLK_TCK)

# cpu PID: its user and system ticks; stat FIELD: the line of /proc/stat
cpu() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
stat() { awk -v k="$1" '$1 == k { print $2 }' /proc/stat; }
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

echo "bench-serve: $(nproc) CPUs, $(uname -r), backend $backend, --keep=$keep, $secs s a phase"
"$agent" serve -v --switches --backend="$backend" --listen="unix:$tmp/agent.sock" --keep="$keep" \
	--config=/dev/null 2> "$tmp/agent.err" &
pid=$!
i=0
while ! grep -q 'serve: listening' "$tmp/agent.err"; do
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/agent.err" >&2; exit 1; }
	i=$((i + 1))
	[ $i -lt 600 ] || { echo "bench-serve: no 'listening' in 60 s" >&2; exit 1; }
	sleep 0.1
done

# phase NAME: SECS seconds of the service; its figures
phase() {
	local c0 s0 p0 c1 s1 p1
	c0=$(cpu "$pid") s0=$(stat ctxt) p0=$(stat processes)
	sleep "$secs"
	c1=$(cpu "$pid") s1=$(stat ctxt) p1=$(stat processes)
	awk -v n="$1" -v c=$((c1 - c0)) -v hz="$hz" -v t="$secs" -v s=$((s1 - s0)) \
		-v p=$((p1 - p0)) -v rss="$(kb "$pid" VmRSS)" -v hwm="$(kb "$pid" VmHWM)" \
		'BEGIN { printf "bench-serve: %-5s agent CPU %.2f%% of one CPU (%.2f s in %d s), RSS %.1f MB (peak %.1f MB); the machine: %d switches/s, %d new processes/s\n",
			n, 100 * c / hz / t, c / hz, t, rss / 1024, hwm / 1024, s / t, p / t }'
}
# (a first poll of every process is the start's cost, not the rest's)
sleep 2
phase idle
# load CMD: CMD in a loop on every CPU
load() {
	for c in $(seq "$(nproc)"); do
		(while :; do $1; done) &
		loops="$loops $!"
	done
}
load :
phase spin
kill $loops
loops=
load /bin/true
phase storm
phase storm
kill $loops
loops=
grep -E 'serve: |switch log' "$tmp/agent.err" | tail -n 3 | sed 's/^/bench-serve: agent: /'
