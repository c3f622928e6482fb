#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Write a perf.data file as 'perf record --vmcs-ctx -g -e cpu-clock' would on
# a kernel with guest call chains: guest samples with PERF_SAMPLE_CALLCHAIN
# (their own chain is the host's, empty for a guest: PERF_CONTEXT_KERNEL,
# PERF_CONTEXT_USER), each followed in the same vCPU thread by a
# kvm:kvm_guest_callchain record (the format of a 6.12 host with the vmctx
# patches) whose raw data holds the guest's chain and whose own call chain
# is the host's, so that the joining of the two can be tried without a KVM
# host.
# Usage: gen-chains.py OUT [be] [KIND]
#   VM pid 1000, vCPU 0 = tid 1001 ("CPU 0/KVM") on pCPU 0, 10 rounds of a
#   guest user sample at 0x401010 (guest1.vmctx: "work" of /usr/bin/bench,
#   cr3 0x1234000) and its chain 0x401010 0x402010 0x401050 (work, other,
#   work), walked to the end, whose host chain is two kernel and two user
#   addresses.  A host process "hostsh" has pid 321, bench's guest pid.  KIND makes the records hostile:
#     wrongip   every record's first address is not its sample's IP
#     badloc    every record's ips[] reaches past its raw data
#     bignr     every record claims 100000 entries (more than 127)
#     none      no records at all, 100 samples: more than a thread may hold
#     short     every record is 12 bytes: the common fields and vcpu_id
#   'be' writes a big-endian file.
import struct, sys
from perffile import *

out = sys.argv[1]
be = 'be' in sys.argv[2:]
kind = ([a for a in sys.argv[2:] if a != 'be'] or [''])[0]
E = '>' if be else '<'
f = PerfFile(be)

CHAIN_ID = 1303
CHAIN_FMT = '''name: kvm_guest_callchain
ID: %d
format:
%s
	field:unsigned int vcpu_id;	offset:8;	size:4;	signed:0;
	field:u8 cpl;	offset:12;	size:1;	signed:0;
	field:u8 end;	offset:13;	size:1;	signed:0;
	field:u32 walk_ns;	offset:16;	size:4;	signed:0;
	field:unsigned int nr;	offset:20;	size:4;	signed:0;
	field:__data_loc u64[] ips;	offset:24;	size:4;	signed:0;

print fmt: "vcpu %%u cpl %%u end %%u walk_ns %%u nr %%u", REC->vcpu_id, REC->cpl, REC->end, REC->walk_ns, REC->nr
''' % (CHAIN_ID, COMMON)
ST = S_IDENT | S_IP | S_TID | S_TIME | S_CPU | S_PERIOD | S_CALLCHAIN | S_GUEST_CTX
IDS = {'clock': 11, 'chain': 12}
CTX_KERNEL, CTX_USER = 2**64 - 128, 2**64 - 512

attr, hdr, ctx, common, u4, u8 = f.attr, f.hdr, f.ctx, f.common, f.u4, f.u8

def sample(key, misc, ip, pid, tid, t, chain, c, raw=None):
    return f.sample(IDS[key], misc, ip, pid, tid, t, c, raw, chain)

def comm(pid, tid, name, t):
    return f.comm(pid, tid, name, t, IDS['clock'])

def chain_raw(tid, cpl, ips):
    nr = len(ips)
    loc = 28 | (8 * nr) << 16
    if kind == 'badloc':
        loc = 28 | (8 * nr + 4096) << 16
    if kind == 'bignr':
        nr = 100000
    r = common(tid, CHAIN_ID)
    r += struct.pack(E + 'IBBxxIII', 0, cpl, 0, 1234, nr, loc)
    r += b''.join(u8(x) for x in ips)
    if kind == 'short':
        r = r[:12]
    return r

T0, TICK = 10**9, 10**6
gctx = ctx(0x1234003, 0x60, 0, VALID | SVM | GUEST | (3 << 4))
hctx = ctx(0, 0x60, 0, VALID | SVM | HOST_FOR_VCPU)
guest_chain = [0x401010, 0x402010, 0x401050]
host_chain = [CTX_KERNEL, 0xffffffff81000100, 0xffffffff81000200, CTX_USER, 0x7f0000001000,
              0x7f0000002000]
ev = comm(1000, 1000, 'qemu-system-x86', T0 - 30) + comm(1000, 1001, 'CPU 0/KVM', T0 - 20)
# a host process with bench's guest pid, whose name must not reach bench's
# samples
ev += comm(321, 321, 'hostsh', T0 - 10)
for k in range(100 if kind == 'none' else 10):
    t = T0 + k * TICK
    ev += sample('clock', 5, 0x401010, 1000, 1001, t, [CTX_KERNEL, CTX_USER], gctx)
    if kind == 'none':
        continue
    ips = guest_chain if kind != 'wrongip' else [0x401020] + guest_chain[1:]
    ev += sample('chain', 1, 0xffffffff81000100, 1000, 1001, t + 1000, host_chain, hctx,
                 chain_raw(1001, 3, ips))

attrs = [attr(1, 0, 1000, ST, FLAGS | (1 << 10)),
         attr(2, CHAIN_ID, 1, ST | S_RAW, FLAGS)]
f.write(out, attrs, [IDS[k] for k in ('clock', 'chain')], ev, [CHAIN_FMT])
