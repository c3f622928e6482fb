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

out = sys.argv[1]
be = 'be' in sys.argv[2:]
short = 'short' in sys.argv[2:]
E = '>' if be else '<'

EXIT_ID, ENTRY_ID = 1301, 1302
COMMON = '''	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;
'''
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
    t += u4(1) + b'kvm\0' + u4(2)               # one system, two events
    for f in (EXIT_FMT, ENTRY_FMT):
        t += u8(len(f)) + f.encode()
    t += u4(0)                                  # kallsyms
    t += u4(0)                                  # printk formats
    t += u8(0)                                  # saved cmdlines
    return t

S_IDENT, S_IP, S_TID, S_TIME = 1 << 16, 1 << 0, 1 << 1, 1 << 2
S_CPU, S_PERIOD, S_RAW, S_GUEST_CTX = 1 << 7, 1 << 8, 1 << 10, 1 << 25
ST = S_IDENT | S_IP | S_TID | S_TIME | S_CPU | S_PERIOD | S_GUEST_CTX
VALID, SVM, GUEST = 0x1, 0x4, 0x8
FLAGS = (1 << 18)                               # sample_id_all
IDS = {'clock': 11, 'exit': 12, 'entry': 13}

def attr(typ, config, period, st, flags):
    a = struct.pack(E + 'IIQQQQQ', typ, 128, config, period, st, 0, flags)
    return a + b'\0' * (128 - len(a))

def hdr(typ, misc, body):
    assert (8 + len(body)) % 8 == 0, typ
    return struct.pack(E + 'IHH', typ, misc, 8 + len(body)) + body

def ctx(cr3, exit_reason, vcpu, fl):
    return u8(24) + struct.pack(E + 'QIIII', cr3, 7, exit_reason, vcpu, fl)

def sample(key, misc, ip, pid, tid, t, c, raw=None):
    body = struct.pack(E + 'QQIIQIIQ', IDS[key], ip, pid, tid, t, 0, 0, 1 if raw else 1000000)
    if raw is not None:
        raw += b'\0' * ((8 - (len(raw) + 4) % 8) % 8)
        body += u4(len(raw)) + raw
    return hdr(9, misc, body + c)

def comm(pid, tid, name, t):
    s = name.encode() + b'\0'
    s += b'\0' * ((8 - len(s) % 8) % 8)
    return hdr(3, 0, struct.pack(E + 'II', pid, tid) + s +
               struct.pack(E + 'IIQIIQ', pid, tid, t, 0, 0, IDS['clock']))

def common(tid, typ):
    return struct.pack(E + 'HBBi', typ, 0, 0, tid)

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
ids_sec = b''.join(u8(IDS[k]) for k in ('clock', 'exit', 'entry'))
fattr_size = 128 + 16
attr_off = 104
ids_off = attr_off + fattr_size * 3
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
