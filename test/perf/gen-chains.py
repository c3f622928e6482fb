#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Write a perf.data file as 'perf record --vmcs-ctx -g -e cpu-clock' would on
# a kernel with guest call chains: guest samples of an event with
# attr.defer_callchain whose PERF_SAMPLE_CALLCHAIN is PERF_CONTEXT_GUEST_DEFERRED
# and a cookie, each followed in the same vCPU thread by the
# PERF_RECORD_CALLCHAIN_DEFERRED record KVM wrote to the event with that
# cookie: PERF_CONTEXT_GUEST_USER and the guest's frames, then the host's
# (PERF_CONTEXT_KERNEL, two addresses, PERF_CONTEXT_USER, two addresses),
# so that the merging of the two can be tried without a KVM host.
# Usage: gen-chains.py OUT [be] [KIND]
#   VM pid 1000, vCPU 0 = tid 1001 ("CPU 0/KVM") on pCPU 0, 10 rounds of a
#   guest user sample at 0x401010 (guest1.vmctx: "work" of /usr/bin/bench,
#   cr3 0x1234000) with cookie k + 1, and its chain 0x401010 0x402010
#   0x401050 (work, other, work), walked to the end.  A host process
#   "hostsh" has pid 321, bench's guest pid.  KIND makes the records
#   hostile or missing:
#     wrongcookie  every record's cookie is its sample's + 1000
#     bignr        every record claims 100000 entries (more than it holds)
#     short        every record is 16 bytes: the header and the cookie
#     lost         every other record is missing (the samples with an odd
#                  cookie keep theirs)
#     none         no records at all, 100 samples
#     many         no records, 5000 samples: more than perf holds at once
#     stack        as 'perf record --vmcs-ctx --call-graph dwarf' would: the
#                  samples carry the host's user registers (BP, SP, IP) and
#                  64 bytes of its stack, and each chain record follows a
#                  PERF_RECORD_GUEST_USER_STACK record with the guest's
#                  (BP 0x7ffe0010 + k, SP 0x7ffe0000 + k, IP 0x401010,
#                  64 bytes of 0x5a)
#     stackbad     the same, but every record's stack size claims more than
#                  the record holds, or its dyn_size more than its size
#   'be' writes a big-endian file.
import struct, sys
from perffile import *

out = sys.argv[1]
be = 'be' in sys.argv[2:]
kind = ([a for a in sys.argv[2:] if a != 'be'] or [''])[0]
E = '>' if be else '<'
f = PerfFile(be)

ST = S_IDENT | S_IP | S_TID | S_TIME | S_CPU | S_PERIOD | S_CALLCHAIN | S_GUEST_CTX
IDS = {'clock': 11}
CTX_KERNEL, CTX_USER = 2**64 - 128, 2**64 - 512
CTX_GUEST_USER, CTX_GUEST_DEFERRED = 2**64 - 2560, 2**64 - 2688
RECORD_CALLCHAIN_DEFERRED, MISC_GUEST_USER = 22, 5
RECORD_GUEST_USER_STACK = 23
S_REGS_USER, S_STACK_USER = 1 << 12, 1 << 13
REGS = (1 << 6) | (1 << 7) | (1 << 8)          # BP, SP, IP
stacks = kind in ('stack', 'stackbad')
if stacks:
    ST |= S_REGS_USER | S_STACK_USER
DEFER_CALLCHAIN = 1 << 38

attr, hdr, ctx, u8 = f.attr, f.hdr, f.ctx, f.u8

def regs_stack(bp, sp, ip, fill):
    """REGS_USER (ABI 64, BP, SP, IP) and STACK_USER (64 bytes of fill)"""
    return u8(2) + u8(bp) + u8(sp) + u8(ip) + u8(64) + bytes([fill]) * 64 + u8(64)

def sample(key, misc, ip, pid, tid, t, chain, c):
    if stacks:   # the host's: the VMM thread's user registers and stack
        c = regs_stack(0x7f0000000100, 0x7f0000000080, 0x7f0000001000, 0x11) + c
    return f.sample(IDS[key], misc, ip, pid, tid, t, c, None, chain)

def guest_stack(pid, tid, t, cookie, k):
    """PERF_RECORD_GUEST_USER_STACK: cookie, the regs and stack, the sample_id"""
    body = u8(cookie) + regs_stack(0x7ffe0010 + k, 0x7ffe0000 + k, 0x401010, 0x5a)
    if kind == 'stackbad':
        # the size word (after cookie, abi and three registers)
        at = 8 * 5
        if k % 2:
            body = body[:at] + u8(2**63) + body[at + 8:]
        else:
            body = body[:-8] + u8(4096)
    body += struct.pack(E + 'IIQIIQ', pid, tid, t, 0, 0, IDS['clock'])
    return hdr(RECORD_GUEST_USER_STACK, MISC_GUEST_USER, body)

def comm(pid, tid, name, t):
    return f.comm(pid, tid, name, t, IDS['clock'])

def deferred(pid, tid, t, cookie, ips):
    """PERF_RECORD_CALLCHAIN_DEFERRED: cookie, nr, ips, then the sample_id"""
    nr = 100000 if kind == 'bignr' else len(ips)
    body = u8(cookie) + u8(nr) + b''.join(u8(x) for x in ips)
    if kind == 'short':
        body = u8(cookie)
    body += struct.pack(E + 'IIQIIQ', pid, tid, t, 0, 0, IDS['clock'])
    return hdr(RECORD_CALLCHAIN_DEFERRED, MISC_GUEST_USER, body)

T0, TICK = 10**9, 10**6
gctx = ctx(0x1234003, 0x60, 0, VALID | SVM | GUEST | (3 << 4))
guest_chain = [0x401010, 0x402010, 0x401050]
host_chain = [CTX_KERNEL, 0xffffffff81000100, 0xffffffff81000200, CTX_USER, 0x7f0000001000,
              0x7f0000002000]
ev = comm(1000, 1000, 'qemu-system-x86', T0 - 30) + comm(1000, 1001, 'CPU 0/KVM', T0 - 20)
# a host process with bench's guest pid, whose name must not reach bench's
# samples
ev += comm(321, 321, 'hostsh', T0 - 10)
rounds = {'none': 100, 'many': 5000}.get(kind, 10)
for k in range(rounds):
    t = T0 + k * TICK
    cookie = k + 1
    ev += sample('clock', 5, 0x401010, 1000, 1001, t, [CTX_GUEST_DEFERRED, cookie], gctx)
    if kind in ('none', 'many') or (kind == 'lost' and cookie % 2 == 0):
        continue
    if kind == 'wrongcookie':
        cookie += 1000
    if stacks:
        ev += guest_stack(1000, 1001, t + 500, cookie, k)
    ev += deferred(1000, 1001, t + 1000, cookie, [CTX_GUEST_USER] + guest_chain + host_chain)

attrs = [attr(1, 0, 1000, ST, FLAGS | (1 << 10) | DEFER_CALLCHAIN)]
if stacks:   # sample_regs_user at 80, sample_stack_user at 88
    a = attrs[0]
    attrs[0] = a[:80] + u8(REGS) + struct.pack(E + 'I', 64) + a[92:]
f.write(out, attrs, [IDS['clock']], ev, [])
