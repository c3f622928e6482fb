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
#   addresses.  KIND makes the records hostile:
#     wrongip   every record's first address is not its sample's IP
#     badloc    every record's ips[] reaches past its raw data
#     bignr     every record claims 100000 entries (more than 127)
#     none      no records at all, 100 samples: more than a thread may hold
#     short     every record is 12 bytes: the common fields and vcpu_id
#   'be' writes a big-endian file.
import struct, sys

out = sys.argv[1]
be = 'be' in sys.argv[2:]
kind = ([a for a in sys.argv[2:] if a != 'be'] or [''])[0]
E = '>' if be else '<'

CHAIN_ID = 1303
COMMON = '''	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;
'''
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
HEADER_PAGE = '''	field: u64 timestamp;	offset:0;	size:8;	signed:0;
	field: local_t commit;	offset:8;	size:8;	signed:1;
	field: int overwrite;	offset:8;	size:1;	signed:1;
	field: char data;	offset:16;	size:4080;	signed:1;
'''
HEADER_EVENT = '''# compressed entry header
	type_len    :    5 bits
	time_delta  :   27 bits
	array       :   32 bits

	padding     : type == 29
	time_extend : type == 30
	time_stamp : type == 31
	data max type_len  == 28
'''

def u4(v): return struct.pack(E + 'I', v)
def u8(v): return struct.pack(E + 'Q', v)

def tracing_data():
    # tools/perf/util/trace-event-read.c, version 0.6
    t = b'\x17\x08\x44tracing0.6\0' + bytes([1 if be else 0, 8]) + u4(4096)
    t += b'header_page\0' + u8(len(HEADER_PAGE)) + HEADER_PAGE.encode()
    t += b'header_event\0' + u8(len(HEADER_EVENT)) + HEADER_EVENT.encode()
    t += u4(0)                                  # ftrace formats
    t += u4(1) + b'kvm\0' + u4(1)               # one system, one event
    t += u8(len(CHAIN_FMT)) + CHAIN_FMT.encode()
    t += u4(0)                                  # kallsyms
    t += u4(0)                                  # printk formats
    t += u8(0)                                  # saved cmdlines
    return t

S_IDENT, S_IP, S_TID, S_TIME = 1 << 16, 1 << 0, 1 << 1, 1 << 2
S_CPU, S_PERIOD, S_CALLCHAIN, S_RAW, S_GUEST_CTX = 1 << 7, 1 << 8, 1 << 5, 1 << 10, 1 << 25
ST = S_IDENT | S_IP | S_TID | S_TIME | S_CPU | S_PERIOD | S_CALLCHAIN | S_GUEST_CTX
VALID, SVM, GUEST, HOST_FOR_VCPU = 0x1, 0x4, 0x8, 0x40
FLAGS = (1 << 18)                               # sample_id_all
IDS = {'clock': 11, 'chain': 12}
CTX_KERNEL, CTX_USER = 2**64 - 128, 2**64 - 512

def attr(typ, config, period, st, flags):
    a = struct.pack(E + 'IIQQQQQ', typ, 128, config, period, st, 0, flags)
    return a + b'\0' * (128 - len(a))

def hdr(typ, misc, body):
    assert (8 + len(body)) % 8 == 0, typ
    return struct.pack(E + 'IHH', typ, misc, 8 + len(body)) + body

def ctx(cr3, exit_reason, vcpu, fl):
    return u8(24) + struct.pack(E + 'QIIII', cr3, 7, exit_reason, vcpu, fl)

def sample(key, misc, ip, pid, tid, t, chain, c, raw=None):
    # IDENTIFIER, IP, TID, TIME, CPU, PERIOD, CALLCHAIN, RAW, GUEST_CTX
    body = struct.pack(E + 'QQIIQIIQ', IDS[key], ip, pid, tid, t, 0, 0, 1 if raw else 1000000)
    body += u8(len(chain)) + b''.join(u8(x) for x in chain)
    if raw is not None:
        raw += b'\0' * ((8 - (len(raw) + 4) % 8) % 8)
        body += u4(len(raw)) + raw
    return hdr(9, misc, body + c)

def comm(pid, tid, name, t):
    s = name.encode() + b'\0'
    s += b'\0' * ((8 - len(s) % 8) % 8)
    return hdr(3, 0, struct.pack(E + 'II', pid, tid) + s +
               struct.pack(E + 'IIQIIQ', pid, tid, t, 0, 0, IDS['clock']))

def chain_raw(tid, cpl, ips):
    nr = len(ips)
    loc = 28 | (8 * nr) << 16
    if kind == 'badloc':
        loc = 28 | (8 * nr + 4096) << 16
    if kind == 'bignr':
        nr = 100000
    r = struct.pack(E + 'HBBi', CHAIN_ID, 0, 0, tid)
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
ids_sec = b''.join(u8(IDS[k]) for k in ('clock', 'chain'))
fattr_size = 128 + 16
attr_off = 104
ids_off = attr_off + fattr_size * 2
data_off = ids_off + len(ids_sec)
fattrs = b''.join(a + u8(ids_off + 8 * i) + u8(8) for i, a in enumerate(attrs))
# adds_features: HEADER_TRACING_DATA (1), HEADER_HOSTNAME (3), HEADER_GUEST_CTX (32)
host = b'vmctx-lab'.ljust(64, b'\0')
feats = [tracing_data(), u4(len(host)) + host, struct.pack(E + 'QII', 0x4755455354435458, 25, 1)]
bits = (1 << 1) | (1 << 3) | (1 << 32)
fhdr = struct.pack(E + 'QQQ', 0x32454c4946524550, 104, fattr_size)
fhdr += struct.pack(E + 'QQQQQQ', attr_off, len(fattrs), data_off, len(ev), 0, 0)
fhdr += struct.pack(E + 'QQQQ', bits, 0, 0, 0)
buf = fhdr + fattrs + ids_sec + ev
off = len(buf) + 16 * len(feats)
for f in feats:
    buf += u8(off) + u8(len(f))
    off += len(f)
for f in feats:
    buf += f
open(out, 'wb').write(buf)
print('%s: %d bytes, %s-endian' % (out, len(buf), 'big' if be else 'little'))
