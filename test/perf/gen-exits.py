#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Write a perf.data file as 'perf record --vmcs-ctx -e cpu-clock
# -e kvm:kvm_exit -e kvm:kvm_entry' would, with its own tracing data (the
# kvm_exit and kvm_entry formats of a 6.12 host with the vmctx patches), so
# that --guest-view=exits can be tried without a KVM host.
# Usage: gen-exits.py OUT [be] [short]
#   VM pid 1000, vCPU 0 = tid 1001 ("CPU 0/KVM") on pCPU 0: 10 rounds of a
#   guest user sample, then an SVM kvm_exit (reason 0x60, guest_cr3 0x1234000)
#   and its kvm_entry 100 us later.  'short' writes the last kvm_exit as a
#   record of 8 bytes: the common fields and no exit_reason, isa or
#   guest_cr3, as a crafted file may.  'be' writes a big-endian file.
import struct, sys
from perffile import *

out = sys.argv[1]
be = 'be' in sys.argv[2:]
short = 'short' in sys.argv[2:]
E = '>' if be else '<'
f = PerfFile(be)

EXIT_ID, ENTRY_ID = 1301, 1302
EXIT_FMT = '''name: kvm_exit
ID: %d
format:
%s
	field:unsigned int exit_reason;	offset:8;	size:4;	signed:0;
	field:unsigned long guest_rip;	offset:16;	size:8;	signed:0;
	field:u32 isa;	offset:24;	size:4;	signed:0;
	field:u64 info1;	offset:32;	size:8;	signed:0;
	field:u64 info2;	offset:40;	size:8;	signed:0;
	field:u32 intr_info;	offset:48;	size:4;	signed:0;
	field:u32 error_code;	offset:52;	size:4;	signed:0;
	field:unsigned int vcpu_id;	offset:56;	size:4;	signed:0;
	field:u64 requests;	offset:64;	size:8;	signed:0;
	field:unsigned long guest_cr3;	offset:72;	size:8;	signed:0;

print fmt: "vcpu %%u reason %%u cr3 0x%%lx", REC->vcpu_id, REC->exit_reason, REC->guest_cr3
''' % (EXIT_ID, COMMON)
ENTRY_FMT = '''name: kvm_entry
ID: %d
format:
%s
	field:unsigned int vcpu_id;	offset:8;	size:4;	signed:0;
	field:unsigned long rip;	offset:16;	size:8;	signed:0;

print fmt: "vcpu %%u, rip 0x%%lx", REC->vcpu_id, REC->rip
''' % (ENTRY_ID, COMMON)
ST = S_IDENT | S_IP | S_TID | S_TIME | S_CPU | S_PERIOD | S_GUEST_CTX
IDS = {'clock': 11, 'exit': 12, 'entry': 13}

attr, hdr, ctx, common, u4, u8 = f.attr, f.hdr, f.ctx, f.common, f.u4, f.u8

def sample(key, misc, ip, pid, tid, t, c, raw=None):
    return f.sample(IDS[key], misc, ip, pid, tid, t, c, raw)

def comm(pid, tid, name, t):
    return f.comm(pid, tid, name, t, IDS['clock'])

def exit_raw(tid, reason, cr3):
    return (common(tid, EXIT_ID) + struct.pack(E + 'I4xQI4xQQIIIxxxxQ', reason, 0x401010, 2,
            0, 0, 0, 0, 0, 0) + u8(cr3))

def entry_raw(tid):
    return common(tid, ENTRY_ID) + struct.pack(E + 'I4xQ', 0, 0x401010)

T0, TICK = 10**9, 10**6
gctx = ctx(0x1234003, 0x60, 0, VALID | SVM | GUEST | (3 << 4))
none = u8(0)
ev = comm(1000, 1000, 'qemu-system-x86', T0 - 30) + comm(1000, 1001, 'CPU 0/KVM', T0 - 20)
for k in range(10):
    t = T0 + k * TICK
    ev += sample('clock', 5, 0x401010, 1000, 1001, t, gctx)
    raw = exit_raw(1001, 0x60, 0x1234000)
    if short and k == 9:
        raw = raw[:8]
    ev += sample('exit', 1, 0xffffffff81000100, 1000, 1001, t + 1000, none, raw)
    ev += sample('entry', 1, 0xffffffff81000200, 1000, 1001, t + 101000, none, entry_raw(1001))

attrs = [attr(1, 0, 1000, ST, FLAGS | (1 << 10)),
         attr(2, EXIT_ID, 1, ST | S_RAW, FLAGS),
         attr(2, ENTRY_ID, 1, ST | S_RAW, FLAGS)]
f.write(out, attrs, [IDS[k] for k in ('clock', 'exit', 'entry')], ev, [EXIT_FMT, ENTRY_FMT])
