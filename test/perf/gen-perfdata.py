#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Write a synthetic 'perf record --vmcs-ctx' recording in perf's pipe format.
# Usage: gen-perfdata.py OUT [be] [file]
#   One VM (QEMU pid 1000, vCPU threads 1001/1002 "CPU 0/KVM", "CPU 1/KVM")
#   whose two vCPUs share pCPU 0, preempting each other every 10 ticks, so each
#   vCPU is about 50% [steal] (on vcpuN); vCPU 0 runs guest user code of one
#   guest process (cr3 0x1234000), vCPU 1 guest kernel code.  pCPU 1 runs a
#   host process "make" (user mode) half the time and is idle otherwise.
#   'be' writes the file as a big-endian host would (samples only, no
#   sample_id_all), to exercise perf's cross-endian path.  'file' writes a
#   perf.data file (header, one attr, data section, and the HEADER_GUEST_CTX
#   feature that says what bit 25 is) instead of a pipe stream: perf sets
#   evsel->needs_swap only for files.  'nofeat' leaves that feature out, as
#   a perf that does not know it would, so the file must be refused;
#   'feat35other' writes a feature 35 (HEADER_GUEST_CTX's placeholder
#   number) without its magic (as another proposal that claims the number
#   would), which must be refused alike; 'upstream32' adds a feature 32 as
#   upstream perf writes it (HEADER_CPU_DOMAIN_INFO), which this perf does
#   not know and must leave alone.
#   'vms' (with 'file') adds what 'perf record --vmcs-ctx' records for the
#   exact guest clock: a PERF_RECORD_TIME_CONV (host perf ns = host TSC, a
#   1 GHz TSC) and HEADER_GUEST_VMS naming VM 1000 $VMNAME (default
#   "lab-vm-1") with KVM TSC offset 5e9 on both vCPUs; gen-bundle's
#   'reused' bundle has the guest side of that clock.  VMNAME_LEN=N writes
#   N as the name's length instead (0: an empty string, as no perf writes
#   it); VMNAME_NONUL=1 fills the name's 64 bytes without a NUL.
#   Hostile records, as a crafted file may hold them: 'pidm1' and 'pid0'
#   add a guest-mode sample of vCPU 0 whose host pid and tid are -1 or 0;
#   'lostmax' adds a PERF_RECORD_LOST of 2^64-1 samples on pCPU 0.
#   'ident' adds PERF_SAMPLE_IDENTIFIER (id 1, listed as the attr's id in a
#   file), as 'perf record --vmcs-ctx' records it: 'perf inject
#   --guest-maps' needs it.  'times' (with 'file') adds HEADER_NRCPUS (2
#   CPUs) and HEADER_SAMPLE_TIME, which --cpu and --time's percentages need.
#   'late' drops pCPU 1's samples of ticks 1001-1003, as a timer that missed
#   them would: its sample of tick 1004 comes 4 ticks after the previous.
#   'jitter' makes pCPU 1's samples of the odd ticks 1101-1199 come 0.6
#   ticks late: 1.6 ticks after the previous sample, and the next 0.4
#   ticks after them.
#   'vmm' makes the first tick of each of vCPU 0's turns but the first (99
#   ticks) a sample of its thread with no vCPU loaded: QEMU's own code, in
#   user mode, as when it emulates a device for the vCPU.
#   'bids' (with 'file') adds HEADER_BUILD_ID with the host's entries, as
#   perf record writes them: the kernel ([kernel.kallsyms], build-id 20
#   bytes of 0x11) and /usr/bin/make (20 bytes of 0x22).
#   'shift' moves half of vCPU 0's ticks of "other" to "work": "other"
#   when the tick number is a multiple of 8 (150 ticks), "work" otherwise
#   (850), as a second recording of the same guest, for perf diff.
#   'noperiod' leaves PERF_SAMPLE_PERIOD out, as 'perf record -c N'
#   records a fixed period: the attr's sample_period (1 ms, no freq) is
#   each sample's.
#   'ends' ends vCPU 0's thread after the run: switched in after vCPU 1
#   (whose HLT exit is tick 2000), it is sampled in QEMU's code at tick
#   2001 and exits (its last switch-out has tid -1, as perf records an
#   exiting task's), and the host process make (pid 2000) has pCPU 0 for
#   ticks 2002-2101.
import os, struct, sys

out = sys.argv[1]
be = 'be' in sys.argv[2:]
filemode = 'file' in sys.argv[2:]
nofeat = 'nofeat' in sys.argv[2:]
feat35other = 'feat35other' in sys.argv[2:]
upstream32 = 'upstream32' in sys.argv[2:]
GUEST_CTX_MAGIC = 0x4755455354435458  # "GUESTCTX", HEADER_GUEST_CTX's first u64
vms = 'vms' in sys.argv[2:]
pidm1 = 'pidm1' in sys.argv[2:]
pid0 = 'pid0' in sys.argv[2:]
lostmax = 'lostmax' in sys.argv[2:]
late = 'late' in sys.argv[2:]
jitter = 'jitter' in sys.argv[2:]
ident = 'ident' in sys.argv[2:]
times = 'times' in sys.argv[2:]
vmm = 'vmm' in sys.argv[2:]
shift = 'shift' in sys.argv[2:]
bids = 'bids' in sys.argv[2:]
ends = 'ends' in sys.argv[2:]
noperiod = 'noperiod' in sys.argv[2:]
TSC_OFFSET = 5000000000
E = '>' if be else '<'

PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME = 1 << 0, 1 << 1, 1 << 2
PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD = 1 << 7, 1 << 8
PERF_SAMPLE_GUEST_CTX = 1 << 25
PERF_SAMPLE_IDENTIFIER = 1 << 16
ST = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
     PERF_SAMPLE_PERIOD | PERF_SAMPLE_GUEST_CTX
if ident:
    ST |= PERF_SAMPLE_IDENTIFIER
if noperiod:
    ST &= ~PERF_SAMPLE_PERIOD
SAMPLE_ID = 1
VALID, VMX, SVM, GUEST, HOSTV = 0x1, 0x2, 0x4, 0x8, 0x40
KERNEL, USER, GKERNEL, GUSER = 1, 2, 4, 5
SWITCH_OUT, SWITCH_PREEMPT = 0x2000, 0x4000
sample_id_all = not be

buf = bytearray()
def hdr(typ, misc, body):
    size = 8 + len(body)
    assert size % 8 == 0, (typ, size)
    return struct.pack(E + 'IHH', typ, misc, size) + body

def id_sample(pid, tid, time, cpu):
    if not sample_id_all:
        return b''
    return struct.pack(E + 'IIQII', pid, tid, time, cpu, 0) + \
        (struct.pack(E + 'Q', SAMPLE_ID) if ident else b'')

# pipe header
buf += struct.pack(E + 'QQ', 0x32454c4946524550, 16)
# PERF_RECORD_HEADER_ATTR: software cpu-clock, 1000 Hz
flags = (1 << 10)  # freq
if sample_id_all:
    flags |= 1 << 18
if be or noperiod:
    flags &= ~(1 << 10)  # a fixed period: 1 ms
attr = struct.pack(E + 'IIQQQQQ', 1, 128, 0, 1000000 if be or noperiod else 1000, ST, 0, flags)
attr += b'\0' * (128 - len(attr))
buf += hdr(64, 0, attr)

def comm(pid, tid, name, time):
    s = name.encode() + b'\0'
    s += b'\0' * ((8 - len(s) % 8) % 8)
    return hdr(3, 0, struct.pack(E + 'II', pid, tid) + s + id_sample(pid, tid, time, 0))

# The PERF_SAMPLE_GUEST_CTX block: a u64 size, then struct perf_guest_ctx
# (cr3; asid, exit_reason; vcpu_id, flags), or size 0 without a vCPU.
def sample(misc, ip, pid, tid, time, cpu, ctx):
    cr3, asid, exit_reason, vcpu, fl = ctx
    body = struct.pack(E + 'Q', SAMPLE_ID) if ident else b''
    body += struct.pack(E + 'QIIQII', ip, pid, tid, time, cpu, 0)
    if not noperiod:
        body += struct.pack(E + 'Q', 1000000)
    if fl:
        body += struct.pack(E + 'QQIIII', 24, cr3, asid, exit_reason, vcpu, fl)
    else:
        body += struct.pack(E + 'Q', 0)
    return hdr(9, misc, body)

def switch(out, preempt, pid, tid, time, cpu, npid, ntid):
    misc = (SWITCH_OUT if out else 0) | (SWITCH_PREEMPT if preempt else 0)
    return hdr(15, misc, struct.pack(E + 'II', npid, ntid) + id_sample(pid, tid, time, cpu))

# VMPID/VMCOMM: use a live process as the QEMU process (VM naming from /proc)
VM = int(os.environ.get('VMPID', '1000'))
VMCOMM = os.environ.get('VMCOMM', 'qemu-system-x86')
T0 = 1000000000
TICK = 1000000
if vms:
    # PERF_RECORD_TIME_CONV: time_shift 31, time_mult 2^31, time_zero 0,
    # time_cycles, time_mask, cap_user_time_zero 1, cap_user_time_short 0
    buf += hdr(79, 0, struct.pack(E + 'QQQQQBB6x', 31, 1 << 31, 0, 0, 0, 1, 0))
buf += comm(VM, VM, VMCOMM, T0 - 10)
buf += comm(VM, 1001, 'CPU 0/KVM', T0 - 9)
buf += comm(VM, 1002, 'CPU 1/KVM', T0 - 8)
buf += comm(2000, 2000, 'make', T0 - 7)

HLT_SVM = 0x78
EXTINT_SVM = 0x60
N = 2000
running = 0
for k in range(N):
    t = T0 + k * TICK
    if sample_id_all and k % 10 == 0 and k:
        prev, nxt = running, 1 - running
        buf += switch(True, True, VM, 1001 + prev, t - 1000, 0, VM, 1001 + nxt)
        buf += switch(False, False, VM, 1001 + nxt, t - 500, 0, VM, 1001 + prev)
        running = nxt
    elif not sample_id_all:
        running = (k // 10) % 2
    tid = 1001 + running
    if vmm and running == 0 and k % 20 == 0 and k:
        buf += sample(USER, 0x555555554123, VM, tid, t, 0, (0, 0, 0, 0, 0))
    elif running == 0:
        # guest user code of the guest process, in function "work" or "other"
        ip = 0x401010 if k % (8 if shift else 4) else 0x402010
        buf += sample(GUSER, ip, VM, tid, t, 0,
                      (0x1234000 | 0x3, 7, EXTINT_SVM, 0, VALID | SVM | GUEST | (3 << 4)))
    else:
        buf += sample(GKERNEL, 0xffffffff81001010, VM, tid, t, 0,
                      (0x5678000, 8, EXTINT_SVM, 1, VALID | SVM | GUEST))
    # pCPU 1: host user process half the time, idle the other half
    t1 = t + 10 + (TICK * 6 // 10 if jitter and k % 2 and 1101 <= k <= 1199 else 0)
    if late and 1001 <= k <= 1003:
        pass
    elif k % 2:
        buf += sample(USER, 0x400123, 2000, 2000, t1, 1, (0, 0, 0, 0, 0))
    else:
        buf += sample(KERNEL, 0xffffffff81234567, 0, 0, t1, 1, (0, 0, 0, 0, 0))

if ends:
    t = T0 + (N + 1) * TICK
    buf += switch(True, True, VM, 1002, t - 1000, 0, VM, 1001)
    buf += switch(False, False, VM, 1001, t - 500, 0, VM, 1002)
    buf += sample(USER, 0x555555554123, VM, 1001, t, 0, (0, 0, 0, 0, 0))
    buf += switch(True, False, VM, 0xffffffff, t + 200, 0, 2000, 2000)
    buf += switch(False, False, 2000, 2000, t + 300, 0, VM, 0xffffffff)
    for k in range(N + 2, N + 102):
        buf += sample(USER, 0x400123, 2000, 2000, T0 + k * TICK, 0, (0, 0, 0, 0, 0))
# one host-for-vcpu sample: KVM exit handling for vCPU 1 after an HLT exit
buf += sample(KERNEL, 0xffffffff81555555, VM, 1002, T0 + N * TICK, 0,
              (0, 8, HLT_SVM, 1, VALID | SVM | HOSTV))
# a vCPU's guest-mode context with no host process for its VM
for bad in ([0xffffffff] if pidm1 else []) + ([0] if pid0 else []):
    buf += sample(GUSER, 0x401010, bad, bad, T0 + N * TICK + 1000, 0,
                  (0x1234000 | 0x3, 7, EXTINT_SVM, 0, VALID | SVM | GUEST | (3 << 4)))
if lostmax:
    # PERF_RECORD_LOST: id, lost, then the sample_id of pCPU 0
    buf += hdr(2, 0, struct.pack(E + 'QQ', 0, 2**64 - 1) + id_sample(VM, 1001, T0 + N * TICK + 2000, 0))
if filemode:
    # drop the pipe header and the attr event, wrap the rest in a file header
    events = buf[16 + 8 + 128:]
    # the attr's ids, if any, right after the attrs section
    ids = struct.pack(E + 'Q', SAMPLE_ID) if ident else b''
    fattr = attr + struct.pack(E + 'QQ', 104 + 128 + 16 if ident else 0, len(ids))
    fhdr = struct.pack(E + 'QQQ', 0x32454c4946524550, 104, len(fattr))
    fhdr += struct.pack(E + 'QQQQQQ', 104, len(fattr), 104 + len(fattr) + len(ids),
                        len(events), 0, 0)
    # adds_features: HEADER_HOSTNAME (3), which perf needs to tell how a
    # swapped file's bitmap was written, and HEADER_GUEST_CTX (32): sample_type
    # magic, bit 25, block version 1.  The section table follows the data, one
    # {offset, size} per feature in bit order, then the features themselves.
    host = b'vmctx-lab'.ljust(64, b'\0')
    feats = []
    bits = 0
    if bids:
        # HEADER_BUILD_ID (2): the host's kernel and make, as perf record
        # writes them (pid -1, the host; names padded to 64 bytes)
        f = b''
        for misc, bid, name in ((KERNEL, 0x11, b'[kernel.kallsyms]'),
                                (USER, 0x22, b'/usr/bin/make')):
            name = (name + b'\0').ljust(64, b'\0')
            f += struct.pack(E + 'IHHi', 67, misc | 1 << 15, 8 + 4 + 24 + len(name), -1)
            f += bytes([bid]) * 20 + struct.pack(E + 'BBH', 20, 0, 0) + name
        feats.append(f)
        bits |= 1 << 2
    feats.append(struct.pack(E + 'I', len(host)) + host)
    bits |= 1 << 3
    if times:
        # HEADER_NRCPUS (7): CPUs available, online
        feats.append(struct.pack(E + 'II', 2, 2))
        bits |= 1 << 7
    if times:
        # HEADER_SAMPLE_TIME (21): the first and last samples' times
        feats.append(struct.pack(E + 'QQ', T0, T0 + N * TICK + 10))
        bits |= 1 << 21
    if upstream32:
        # HEADER_CPU_DOMAIN_INFO as upstream writes it (a version, then
        # counts and strings): 32 bytes whose meaning this perf does not know
        feats.append(struct.pack(E + 'IIQQQ', 1, 2, 3, 4, 5))
        bits |= 1 << 32
    if not nofeat:
        # 'feat35other': feature 35 as another proposal might use it (here
        # the first draft of this one: bit and version, no magic)
        if feat35other:
            feats.append(struct.pack(E + 'II', 25, 1))
        else:
            feats.append(struct.pack(E + 'QII', GUEST_CTX_MAGIC, 25, 1))
        bits |= 1 << 35
    if vms:
        # HEADER_GUEST_VMS: one VM, its name as a perf_header_string
        name = os.environ.get('VMNAME', 'lab-vm-1').encode() + b'\0'
        name = name.ljust((len(name) + 63) // 64 * 64, b'\0')
        if os.environ.get('VMNAME_NONUL'):
            name = b'A' * 64
        nlen = int(os.environ.get('VMNAME_LEN', len(name)))
        if nlen == 0:
            name = b''
        f = struct.pack(E + 'II', 1, VM) + struct.pack(E + 'I', nlen) + name
        f += struct.pack(E + 'I', 2)
        for vcpu in (0, 1):
            f += struct.pack(E + 'QqQI', vcpu | 1 << 32, TSC_OFFSET, 0, 0)
        feats.append(f)
        bits |= 1 << 36
    fhdr += struct.pack(E + 'QQQQ', bits, 0, 0, 0)
    buf = fhdr + fattr + ids + events
    off = len(buf) + 16 * len(feats)
    for f in feats:
        buf += struct.pack(E + 'QQ', off, len(f))
        off += len(f)
    for f in feats:
        buf += f
open(out, 'wb').write(buf)
print('%s: %d bytes, %s-endian' % (out, len(buf), 'big' if be else 'little'))
