#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only
# The pprof exports load in go tool pprof (Debian's golang-go), and say what
# the scenarios' schedules imply: vmctx-scenarios exports three VMs on one pCPU
# (Tables 12/13, 500 rounds of 20-tick slots) and two vCPUs on one pCPU
# (Tables 8/9, 750 slots each); pprof's totals, -tagfocus, -tagroot and
# labels are checked against the counts those parameters give, and against
# the folded stacks of the same export.  A hostile guest's names reach
# pprof's output escaped.  A profile that test-profile makes (stacks of
# depth 1 to 50, unnamed frames, string and numeric labels) reads back with
# its stacks, values and labels whole.  Skipped (77) where go is not
# installed.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
go=${GO:-}
[ -n "$go" ] || go=go
if ! command -v "$go" >/dev/null 2>&1; then
	echo "check-export: SKIP: go is not installed (apt-get install golang-go)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# go tool pprof reads local files; keep go offline and its caches here.
HOME=$tmp GOCACHE=$tmp/cache GOPATH=$tmp/go GOFLAGS= GOPROXY=off GOTOOLCHAIN=local
export HOME GOCACHE GOPATH GOFLAGS GOPROXY GOTOOLCHAIN

demo=$builddir/test/vmctx-scenarios
rc=0
fail() {
	echo "check-export: FAIL: $*" >&2
	rc=1
}

pprof() {
	"$go" tool pprof -symbolize=none "$@" 2>"$tmp/pprof.err" || {
		cat "$tmp/pprof.err" >&2
		return 1
	}
}

# total SAMPLE_INDEX [pprof options] FILE: what the samples -top keeps add up to
total() {
	si=$1
	shift
	pprof -sample_index="$si" -top -nodefraction=0 -nodecount=1000000 "$@" |
		sed -n 's/^Showing nodes accounting for \([0-9.a-z]*\), .*/\1/p'
}

expect() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# The sum of a folded file's counts, optionally of the lines matching a pattern.
folded_sum() {
	awk -v pat="${2:-}" 'pat == "" || index($0, pat) { n += $NF } END { print n + 0 }' "$1"
}

$demo -x pprof:"$tmp/vms.pb.gz" -x folded:"$tmp/vms.folded" vms
$demo -x pprof:"$tmp/vcpus.pb.gz" -x folded:"$tmp/vcpus.folded" vcpus
# Rows are in text order, not in the order of the session's hash table
# (which follows pointers, so changes from run to run): same bytes again.
$demo -x pprof:"$tmp/again.pb.gz" -x folded:"$tmp/again.folded" vms
cmp -s "$tmp/vms.pb.gz" "$tmp/again.pb.gz" || fail "two runs give two pprof files"
cmp -s "$tmp/vms.folded" "$tmp/again.folded" || fail "two runs give two folded files"

# --- three VMs: C = 500 rounds, L = 20 ---------------------------------------
C=500 L=20
guest=$((C * (L - 1)))			# each VM's guest ticks
user=$((guest - guest / 20))		# 1 tick in 20 of the mix is the guest kernel's
# VM k's time: every tick from its first (tick 1 + (k - 1) L) on
vm1=$((3 * C * L - 1)) vm2=$((3 * C * L - 1 - L)) vm3=$((3 * C * L - 1 - 2 * L))
host=$((3 * C))				# one kworker tick per slot
all=$((vm1 + vm2 + vm3 + host))

pprof -raw "$tmp/vms.pb.gz" >"$tmp/raw" || fail "go tool pprof -raw cannot read vms.pb.gz"
grep -qx 'samples/count cpu/nanoseconds\[dflt\]' "$tmp/raw" || fail "-raw: sample types"
grep -qx 'PeriodType: cpu nanoseconds' "$tmp/raw" || fail "-raw: period type"
grep -qx 'Period: 1000000' "$tmp/raw" || fail "-raw: period"
grep -qx 'Comment: VM2: guestOS2, QEMU pid 1002' "$tmp/raw" || fail "-raw: the VMs' comments"
labels='class:\[guest_user\] guest_comm:\[libquantum\] guest_pid:\[200\] vcpu:\[0\]'
grep -q "$labels vm:\\[guestOS3\\] vm_pid:\\[1003\\]" "$tmp/raw" ||
	fail "-raw: a guest user sample's labels"
grep -q 'class:\[host_os\] guest_comm:\[\[host\]\] vm:\[\[host\]\]$' "$tmp/raw" ||
	fail "-raw: a host sample's labels"

expect "all samples" "$(total samples "$tmp/vms.pb.gz")" "$all"
expect "all samples, folded" "$(folded_sum "$tmp/vms.folded")" "$all"
expect "cpu time" "$(total cpu -unit=ms "$tmp/vms.pb.gz")" "${all}ms"
expect "guestOS1" "$(total samples -tagfocus=vm=guestOS1 "$tmp/vms.pb.gz")" "$vm1"
expect "guestOS3" "$(total samples -tagfocus=vm=guestOS3 "$tmp/vms.pb.gz")" "$vm3"
expect "the host's work" "$(total samples -tagfocus=class=host "$tmp/vms.pb.gz")" "$host"
expect "guest user" "$(total samples -tagfocus=class=guest_user "$tmp/vms.pb.gz")" $((3 * user))
expect "guest kernel" "$(total samples '-tagfocus=guest_comm=\[guest kernel\]' "$tmp/vms.pb.gz")" \
	$((3 * (guest - user)))
# VM2's steal: VM1's slots after its first tick, VM3's slots, the kworker's
expect "guestOS2's steal" \
	"$(total samples -tagfocus=vm=guestOS2 -tagignore=class=guest "$tmp/vms.pb.gz")" \
	$((guest - (L - 1) + guest + host - 2))
expect "guestOS2's steal, folded" "$(folded_sum "$tmp/vms.folded" "guestOS2 (VM2);[steal];")" \
	$((guest - (L - 1) + guest + host - 2))

# -tagroot: the VM, then the process, as in the folded stacks
pprof -sample_index=samples -top -tagroot=vm,guest_comm "$tmp/vms.pb.gz" >"$tmp/top"
cum() {
	awk -v name="$1" '{ line = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", line) }
		line == name { print $4 }' "$tmp/top"
}
expect "-tagroot guestOS1" "$(cum guestOS1)" "$vm1"
expect "-tagroot guestOS2" "$(cum guestOS2)" "$vm2"
expect "-tagroot libquantum" "$(cum libquantum)" $((3 * user))
expect "-tagroot [host]" "$(cum '[host]')" "$host"
expect "-tagroot [steal]" "$(cum '[steal]')" \
	"$(folded_sum "$tmp/vms.folded" ';[steal];')"
expect "[steal] (VM2) is a frame of its own" "$(cum '[steal] (VM2)')" \
	"$(folded_sum "$tmp/vms.folded" ';[steal] (VM2) ')"
expect "quantum_toffoli" "$(cum quantum_toffoli)" $((3 * guest * 12 / 20))

# --- two vCPUs of one VM: C = 750 slots each, L = 20 -------------------------
C=750
expect "vcpu0" "$(total samples '-tagfocus=vcpu=^0$' "$tmp/vcpus.pb.gz")" $((2 * C * L))
expect "vcpu1" "$(total samples '-tagfocus=vcpu=^1$' "$tmp/vcpus.pb.gz")" $((2 * C * L - L))
expect "vcpu0 stolen by vcpu1" \
	"$(total samples '-tagfocus=vcpu=^0$' '-focus=^\[steal\] \(on vcpu1\)$' "$tmp/vcpus.pb.gz")" \
	$((C * L))
# vcpu1 runs libquantum(2): its guest ticks but the guest kernel's
expect "libquantum(2)" \
	"$(total samples '-tagfocus=guest_comm=libquantum\(2\)' "$tmp/vcpus.pb.gz")" \
	$((C * (L - 1) - C * (L - 1) / 20))
expect "vcpus: all samples, folded" "$(folded_sum "$tmp/vcpus.folded")" \
	"$(total samples "$tmp/vcpus.pb.gz")"

# --- a hostile guest's names ------------------------------------------------
"$builddir/test/test-export" "$tmp" >/dev/null
pprof -raw "$tmp/hostile.pb.gz" >"$tmp/hostile.raw" ||
	fail "go tool pprof -raw cannot read hostile.pb.gz"
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$tmp/hostile.raw"; then
	fail "pprof prints a guest's raw control bytes"
fi
grep -qF 'guest_comm:[a;b c\x0a]' "$tmp/hostile.raw" || fail "-raw: the escaped comm"
grep -qF 'vm:[h;o\x1bst]' "$tmp/hostile.raw" || fail "-raw: the escaped VM name"
grep -qF 'f;g\x07 99' "$tmp/hostile.raw" || fail "-raw: the escaped symbol"

# --- a profile the caller makes (test-profile.c, shared_prefixes() and 50 frames)
"$builddir/test/test-profile" "$tmp" >/dev/null
pprof -raw "$tmp/profile.pb.gz" >"$tmp/profile.raw" ||
	fail "go tool pprof -raw cannot read profile.pb.gz"
expect "profile: all samples" "$(total samples "$tmp/profile.pb.gz")" \
	"$(folded_sum "$tmp/profile.folded")"
expect "profile: cpu" "$(total cpu "$tmp/profile.pb.gz")" "390ns"
expect "profile: vm x" "$(total samples -tagfocus=vm=x "$tmp/profile.pb.gz")" 6
expect "profile: the 50 frames of the deep stack" \
	"$(awk '$1 == 11 && $2 == "110:" { print NF - 2 }' "$tmp/profile.raw")" 50
grep -qF 'vcpu:[-1]' "$tmp/profile.raw" || fail "-raw: a numeric label"
grep -q ' libc\.so\.6 *$' "$tmp/profile.raw" || fail "-raw: the mapping of the unnamed frame"
grep -q '^ *[0-9]*: 0x1a2b M=[0-9]* *$' "$tmp/profile.raw" ||
	fail "-raw: the unnamed frame's location, its address and no function"

[ "$rc" = 0 ] &&
	echo "check-export: go tool pprof reads the exports and a profile, and they hold their counts"
exit $rc
