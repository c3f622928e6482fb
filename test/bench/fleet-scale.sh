#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fleet-scale.sh: how perf --guest-maps scales with a fleet-sized recording
# (issue 40).  test/perf/gen-fleet.c writes a synthetic 'perf record
# --vmcs-ctx' recording of NVMS QEMU guests of 4 vCPUs on 16 pCPUs, with
# SAMPLES samples and PROCS guest processes whose page-table roots are
# reused, and each guest's bundle; SCALE multiplies the recording's length
# (samples and processes).  For each SCALE in SCALES, this measures the
# wall and CPU (user + system) time, the best of RUNS, the CPU time being
# the steadier on a shared machine, the peak RSS (/usr/bin/time's %M) and
# the peak anonymous RSS (RssAnon polled every 0.2 s: perf maps all of
# perf.data, whose pages it reads count in the RSS but not here) of
#   report   perf report --stdio
#   script   perf script, to /dev/null
#   inject   perf inject -o OUT
# each plain and with --guest-maps, then prints a table, the ratios
# --guest-maps/plain, and each figure's growth from one SCALE to the next
# (2.00 is linear from 1x to 2x and from 2x to 4x).  Before timing, a report
# of the first SCALE's recording sorted by VM and guest process must give
# each generated guest process its own samples: the share of guest samples
# it does is printed, and under 95% the generator is wrong and the script
# stops.  A measurement, not a check: it fails only when a command does.
#
# Environment: PERF (default the lab's, $VMCTX_LAB_DIR/out/perf/perf),
# SCALES ("1 2 4"), RUNS (1), NVMS (32), SAMPLES (10000000), PROCS (20000),
# SEED (1), VMEM_KB (perf's address space; default MemAvailable).  Inputs are generated once into ${VMCTX_BENCH_DIR:-$HOME/.cache/
# vmctx-bench} (about 0.9 GB of perf.data per 10 M samples) and reused
# while gen-fleet.c and the parameters stay the same.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
lab=${VMCTX_LAB_DIR:-$HOME/.cache/vmctx-lab}
perf=${PERF:-$lab/out/perf/perf}
cache=${VMCTX_BENCH_DIR:-$HOME/.cache/vmctx-bench}
scales=${SCALES:-1 2 4}
runs=${RUNS:-1}
nvms=${NVMS:-32}
samples=${SAMPLES:-10000000}
procs=${PROCS:-20000}
seed=${SEED:-1}
# perf's address space, at most what the machine has free: a plain report
# of 4x wants about 17 GB, and out of memory perf should fail, not others
vmem=${VMEM_KB:-$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)}
[ -x "$perf" ] || { echo "fleet-scale: no perf at $perf" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "fleet-scale: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
mkdir -p "$cache"

# libvmctx: pkg-config's, else the lab's, which its perf was built with
if pkg-config --exists libvmctx 2>/dev/null; then
	vmctx_cflags=$(pkg-config --cflags libvmctx)
	vmctx_libs=$(pkg-config --libs libvmctx)
	vmctx_libdir=$(pkg-config --variable=libdir libvmctx)
else
	vmctx_cflags=-I$lab/vmctx/include
	vmctx_libs="-L$lab/vmctx/lib -lvmctx"
	vmctx_libdir=$lab/vmctx/lib
fi
export LD_LIBRARY_PATH=$vmctx_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
gen_src=$src/test/perf/gen-fleet.c
gen_id=$(sha1sum "$gen_src" | cut -c1-8)
gen=$cache/gen-fleet-$gen_id
if [ ! -x "$gen" ]; then
	# shellcheck disable=SC2086
	cc -O2 -o "$gen.tmp" "$gen_src" $vmctx_cflags $vmctx_libs -lm
	mv "$gen.tmp" "$gen"
fi

work=$(mktemp -d "$cache/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
# perf reads no ~/.perfconfig and writes no ~/.debug of the user's
export HOME=$work LC_ALL=C

# the input of scale $1, generated unless the cache has it whole; its dir on stdout
input() {
	local d=$cache/fleet-v$nvms-n$samples-p$procs-S$seed-x$1-$gen_id

	if [ ! -f "$d/done" ]; then
		rm -rf "$d"
		echo "fleet-scale: generating $d" >&2
		"$gen" -v "$nvms" -n "$samples" -p "$procs" -S "$seed" -s "$1" "$d" >&2
		touch "$d/done"
	fi
	echo "$d"
}

# sanity DIR: every guest sample in the process that ran it, by VM and pid
sanity() {
	local d=$1

	"$perf" report -i "$d/perf.data" --kallsyms="$d/kallsyms" --guest-maps="$(cat "$d/guest-maps")" \
		--stdio -n --sort vm,pid,comm > "$work/sanity" 2> "$work/sanity.err" || {
		echo "fleet-scale: perf report --guest-maps failed:" >&2
		tail -5 "$work/sanity.err" >&2
		return 1
	}
	awk 'NR == FNR {
		if (NF == 5 && $1 ~ /^fleet-vm/ && $5) { want[$2 " " $3] = $5; total += $5; nproc++ }
		next
	}
	/^# Samples: .* of event / { clock = $0 ~ /cpu-clock/ }
	clock && $1 ~ /%$/ && $3 ~ /^[0-9]+$/ {
		split($4, pc, ":")
		k = $3 " " pc[1]
		if ((k in want) && want[k] == $2) { right += $2; exact++ }
	}
	END {
		share = total ? 100 * right / total : 0
		printf "fleet-scale: sanity: %d of %d guest samples (%.2f%%) in the guest process that ran them; %d of the %d sampled processes exact\n",
			right, total, share, exact, nproc
		if (share < 95) {
			print "fleet-scale: under 95%: the generator (test/perf/gen-fleet.c) is wrong" > "/dev/stderr"
			exit 1
		}
	}' "$d/expect" "$work/sanity"
}

results=$work/results
: > "$results"
failed=0

# The largest RssAnon of the children of process $1 (perf under time)
# while it runs, polled every 0.2 s: perf maps the whole perf.data, and
# the file's pages it has read count in its RSS, but not in this.
peak_anon() {
	local c k v _ peak=0

	while kill -0 "$1" 2> /dev/null; do
		# shellcheck disable=SC2013 # pids, separated by spaces
		for c in $(cat "/proc/$1/task/$1/children" 2> /dev/null); do
			while read -r k v _; do
				[ "$k" = RssAnon: ] && [ "$v" -gt "$peak" ] && peak=$v
			done 2> /dev/null < "/proc/$c/status" || true
		done
		sleep 0.2
	done
	echo "$peak"
}

# least A B: the smaller number, B if A is empty
least() {
	awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0 ? b : a) }'
}

# measure SCALE CMD MODE PERF-ARGS...: the best of $runs of each figure, as
# "scale cmd mode wall-s cpu-s rss-kib anon-kib"
measure() {
	local scale=$1 cmd=$2 mode=$3 t a best_t='' best_c='' best_m='' best_a=''
	shift 3
	for _ in $(seq "$runs"); do
		rm -rf "$work/out"
		(ulimit -v "$vmem" && exec /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$perf" "$@") \
			> /dev/null 2> "$work/err" &
		a=$(peak_anon $!)
		if ! wait $!; then
			echo "fleet-scale: FAILED: ${scale}x perf $cmd, $mode:" >&2
			tail -5 "$work/err" >&2
			failed=1
			echo "$scale $cmd $mode fail fail fail fail" >> "$results"
			return
		fi
		read -r t u sy m < <(tail -1 "$work/time")
		best_t=$(least "$best_t" "$t")
		best_c=$(least "$best_c" "$(awk -v u="$u" -v s="$sy" 'BEGIN { print u + s }')")
		best_m=$(least "$best_m" "$m")
		best_a=$(least "$best_a" "$a")
	done
	rm -rf "$work/out"
	echo "$scale $cmd $mode $best_t $best_c $best_m $best_a" | tee -a "$results" |
		awk '{ printf "fleet-scale: %dx %-6s %-5s %8.2f s wall %8.2f s CPU  RSS %6.0f MiB  anon %6.0f MiB\n",
			$1, $2, $3, $4, $5, $6 / 1024, $7 / 1024 }'
}

start=$(date +%s)
first=1
for scale in $scales; do
	d=$(input "$scale")
	if [ $first = 1 ]; then
		sanity "$d"
		first=0
	fi
	sed -n 's/^\(samples\|guest\|processes\|seconds\) /\1=/p' "$d/expect" | paste -sd' ' |
		sed "s/^/fleet-scale: ${scale}x: /; s/\$/, perf.data $(du -m "$d/perf.data" | cut -f1) MB/"
	maps=--guest-maps=$(cat "$d/guest-maps")
	k=--kallsyms=$d/kallsyms
	measure "$scale" report plain report -i "$d/perf.data" "$k" --stdio
	measure "$scale" report maps report -i "$d/perf.data" "$k" --stdio "$maps"
	measure "$scale" script plain script -i "$d/perf.data" "$k"
	measure "$scale" script maps script -i "$d/perf.data" "$k" "$maps"
	measure "$scale" inject plain inject -i "$d/perf.data" -o "$work/out"
	measure "$scale" inject maps inject -i "$d/perf.data" -o "$work/out" "$maps"
done

echo
echo "fleet-scale: $perf, $nvms VMs, SAMPLES=$samples PROCS=$procs per 1x, best of $runs, $(( $(date +%s) - start )) s in all"
awk '$4 != "fail" {
	for (w = 1; w <= 4; w++)
		f[$1, $2, $3, w] = w <= 2 ? $(3 + w) : $(3 + w) / 1024
	if (!($1 in seen)) { seen[$1]; sc[n++] = $1 }
}
END {
	split("report script inject", cmds, " ")
	split("wall (s),CPU (s),peak RSS (MiB),peak anon (MiB)", what, ",")
	printf "%-12s", ""
	for (w = 1; w <= 4; w++)
		printf " |%25s", what[w]
	printf "\n%-5s %-6s", "scale", "cmd"
	for (w = 1; w <= 4; w++)
		printf " |%8s %8s %7s", "plain", "maps", "ratio"
	printf "\n"
	for (i = 0; i < n; i++)
		for (c = 1; c <= 3; c++) {
			s = sc[i]; k = cmds[c]
			if (!((s, k, "plain", 1) in f) || !((s, k, "maps", 1) in f))
				continue
			printf "%-5s %-6s", s "x", k
			for (w = 1; w <= 4; w++) {
				p = f[s, k, "plain", w]; m = f[s, k, "maps", w]; d = w <= 2 ? 1 : 0
				printf " |%8.*f %8.*f %7.2f", d, p, d, m, p ? m / p : 0
			}
			printf "\n"
		}
	if (n < 2)
		exit
	printf "\ngrowth from one scale to the next (linear growth: the scales ratio, 2.00 from 1x to 2x)\n"
	printf "%-12s", ""
	for (w = 1; w <= 4; w++)
		printf " |%*s", 9 * (n - 1), substr(what[w], 1, index(what[w], " (") - 1)
	printf "\n%-6s %-5s", "cmd", "mode"
	for (w = 1; w <= 4; w++) {
		printf " |"
		for (i = 1; i < n; i++)
			printf " %8s", sc[i - 1] "x>" sc[i] "x"
	}
	printf "\n"
	for (c = 1; c <= 3; c++)
		for (md = 0; md < 2; md++) {
			k = cmds[c]; mo = md ? "maps" : "plain"
			printf "%-6s %-5s", k, mo
			for (w = 1; w <= 4; w++) {
				printf " |"
				for (i = 1; i < n; i++) {
					a = f[sc[i - 1], k, mo, w]; b = f[sc[i], k, mo, w]
					if (a > 0 && b > 0)
						printf " %8.2f", b / a
					else
						printf " %8s", "-"
				}
			}
			printf "\n"
		}
}' "$results"
cp "$results" "$cache/results-$(date -u +%Y%m%dT%H%M%SZ)"
exit $failed
