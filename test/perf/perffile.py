# SPDX-License-Identifier: GPL-2.0
# What the checks' generators of tracepoint recordings (gen-exits.py,
# gen-chains.py) share: a perf.data file of one byte order, with its own
# tracing data (the kvm formats the generator gives), the hostname and
# HEADER_GUEST_CTX features, and the records they write into it.
import struct

COMMON = '''	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;
'''
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

S_IP, S_TID, S_TIME, S_CALLCHAIN = 1 << 0, 1 << 1, 1 << 2, 1 << 5
S_CPU, S_PERIOD, S_RAW, S_IDENT, S_GUEST_CTX = 1 << 7, 1 << 8, 1 << 10, 1 << 16, 1 << 25
VALID, SVM, GUEST, HOST_FOR_VCPU = 0x1, 0x4, 0x8, 0x40
FLAGS = (1 << 18)                               # sample_id_all


class PerfFile:
    def __init__(self, be):
        self.be = be
        self.E = '>' if be else '<'

    def u4(self, v):
        return struct.pack(self.E + 'I', v)

    def u8(self, v):
        return struct.pack(self.E + 'Q', v)

    def tracing_data(self, formats):
        # tools/perf/util/trace-event-read.c, version 0.6; system kvm
        t = b'\x17\x08\x44tracing0.6\0' + bytes([1 if self.be else 0, 8]) + self.u4(4096)
        t += b'header_page\0' + self.u8(len(HEADER_PAGE)) + HEADER_PAGE.encode()
        t += b'header_event\0' + self.u8(len(HEADER_EVENT)) + HEADER_EVENT.encode()
        t += self.u4(0)                             # ftrace formats
        t += self.u4(1) + b'kvm\0' + self.u4(len(formats))
        for f in formats:
            t += self.u8(len(f)) + f.encode()
        t += self.u4(0)                             # kallsyms
        t += self.u4(0)                             # printk formats
        t += self.u8(0)                             # saved cmdlines
        return t

    def attr(self, typ, config, period, st, flags):
        # the bitfields (flags: bit 0 disabled, 10 freq, ...) as a compiler
        # lays them out: a big-endian machine's start at the top bit, which
        # perf undoes by swapping the bytes and then each byte's bits
        if self.E == '>':
            flags = int('{:064b}'.format(flags)[::-1], 2)
        a = struct.pack(self.E + 'IIQQQQQ', typ, 128, config, period, st, 0, flags)
        return a + b'\0' * (128 - len(a))

    def hdr(self, typ, misc, body):
        assert (8 + len(body)) % 8 == 0, typ
        return struct.pack(self.E + 'IHH', typ, misc, 8 + len(body)) + body

    def ctx(self, cr3, exit_reason, vcpu, fl):
        return self.u8(24) + struct.pack(self.E + 'QIIII', cr3, 7, exit_reason, vcpu, fl)

    def comm(self, pid, tid, name, t, ident):
        s = name.encode() + b'\0'
        s += b'\0' * ((8 - len(s) % 8) % 8)
        return self.hdr(3, 0, struct.pack(self.E + 'II', pid, tid) + s +
                        struct.pack(self.E + 'IIQIIQ', pid, tid, t, 0, 0, ident))

    def sample(self, ident, misc, ip, pid, tid, t, c, raw=None, chain=None):
        """IDENTIFIER, IP, TID, TIME, CPU, PERIOD, [CALLCHAIN], [RAW], GUEST_CTX (c)"""
        body = struct.pack(self.E + 'QQIIQIIQ', ident, ip, pid, tid, t, 0, 0,
                           1 if raw else 1000000)
        if chain is not None:
            body += self.u8(len(chain)) + b''.join(self.u8(x) for x in chain)
        if raw is not None:
            raw += b'\0' * ((8 - (len(raw) + 4) % 8) % 8)
            body += self.u4(len(raw)) + raw
        return self.hdr(9, misc, body + c)

    def common(self, tid, typ):
        return struct.pack(self.E + 'HBBi', typ, 0, 0, tid)

    def write(self, out, attrs, ids, ev, formats):
        """attrs: attribute records, one id each (ids, in order); ev: the data"""
        ids_sec = b''.join(self.u8(i) for i in ids)
        fattr_size = 128 + 16
        attr_off = 104
        ids_off = attr_off + fattr_size * len(attrs)
        data_off = ids_off + len(ids_sec)
        fattrs = b''.join(a + self.u8(ids_off + 8 * i) + self.u8(8) for i, a in enumerate(attrs))
        # adds_features: HEADER_TRACING_DATA (1), HEADER_HOSTNAME (3), HEADER_GUEST_CTX (35)
        host = b'vmctx-lab'.ljust(64, b'\0')
        feats = [self.tracing_data(formats), self.u4(len(host)) + host,
                 struct.pack(self.E + 'QII', 0x4755455354435458, 25, 1)]
        bits = (1 << 1) | (1 << 3) | (1 << 35)
        fhdr = struct.pack(self.E + 'QQQ', 0x32454c4946524550, 104, fattr_size)
        fhdr += struct.pack(self.E + 'QQQQQQ', attr_off, len(fattrs), data_off, len(ev), 0, 0)
        fhdr += struct.pack(self.E + 'QQQQ', bits, 0, 0, 0)
        buf = fhdr + fattrs + ids_sec + ev
        off = len(buf) + 16 * len(feats)
        for f in feats:
            buf += self.u8(off) + self.u8(len(f))
            off += len(f)
        for f in feats:
            buf += f
        open(out, 'wb').write(buf)
        print('%s: %d bytes, %s-endian' % (out, len(buf), 'big' if self.be else 'little'))
