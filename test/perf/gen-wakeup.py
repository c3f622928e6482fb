#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Rewrite a real 'perf record -e kvm:kvm_vcpu_wakeup -e cpu-clock -a' perf.data
# (for its tracing data and event descriptions) into a synthetic --vmcs-ctx
# recording that exercises the kvm_vcpu_wakeup path of perf report
# --guest-maps: GUEST_CTX is added to every attr and the data section is
# replaced.  Usage: gen-wakeup.py IN OUT [nowakeup]
#
# pCPU 0, VM pid 1000, vCPU 0 = tid 1001 ("CPU 0/KVM"), host "make" pid 2000:
#   ticks   0- 99  vCPU 0 runs guest user code
#   tick  100      vCPU 0 exits on HLT (host-for-vCPU sample) and blocks
#   ticks 101-199  "make" runs on pCPU 0
#   tick  150      kvm_vcpu_wakeup for vCPU 0 (runnable again from here)
#   tick  200      vCPU 0 switched in, runs guest user code to tick 299
# Expected for vCPU 0: ~200 USER, ~50 idle (halted), ~50 steal (woken, not run).
import struct, sys

src, dst = sys.argv[1], sys.argv[2]
no_wakeup = 'nowakeup' in sys.argv[3:]
d = bytearray(open(src, 'rb').read())
magic, hsize, attr_size = struct.unpack_from('<QQQ', d, 0)
a_off, a_size, d_off, d_size, t_off, t_size = struct.unpack_from('<QQQQQQ', d, 24)
feat = struct.unpack_from('<4Q', d, 72)
GUEST_CTX = 1 << 25
ids = {}
for off in range(a_off, a_off + a_size, attr_size):
    typ, size, config = struct.unpack_from('<IIQ', d, off)
    st, = struct.unpack_from('<Q', d, off + 24)
    struct.pack_into('<Q', d, off + 24, st | GUEST_CTX)
    # clear exclude_guest (bit 20 of the flags word), as --vmcs-ctx does
    fl, = struct.unpack_from('<Q', d, off + 40)
    struct.pack_into('<Q', d, off + 40, fl & ~(1 << 20))
    if typ == 1 and config == 0:
        struct.pack_into('<Q', d, off + 16, 1000)	# 1000 Hz, as the ticks below
    i_off, i_size = struct.unpack_from('<QQ', d, off + attr_size - 16)
    idl = struct.unpack_from('<%dQ' % (i_size // 8), d, i_off)
    key = {2: 'tp', 1: 'clock' if config == 0 else 'dummy'}[typ]
    ids[key] = idl[0]
nfeat = sum(bin(x).count('1') for x in feat)
ftab_off = d_off + d_size
ftab = [struct.unpack_from('<QQ', d, ftab_off + 16 * i) for i in range(nfeat)]

VALID, SVM, GUEST, HOSTV = 0x1, 0x4, 0x8, 0x40
def hdr(typ, misc, body):
    assert (8 + len(body)) % 8 == 0
    return struct.pack('<IHH', typ, misc, 8 + len(body)) + body
def idsample(pid, tid, t, cpu, ident):
    return struct.pack('<IIQIIQ', pid, tid, t, cpu, 0, ident)
def ctx(cr3, exit_reason, vcpu, fl):
    return struct.pack('<QIIIIQ', cr3, 7, exit_reason, vcpu, fl, 0)
def sample(misc, ip, pid, tid, t, cpu, c, ident, raw=None):
    body = struct.pack('<QQIIQIIQ', ident, ip, pid, tid, t, cpu, 0, 1000000)
    if raw is not None:
        body += struct.pack('<I', len(raw)) + raw
    return hdr(9, misc, body + c)
def comm(pid, tid, name, t):
    s = name.encode() + b'\0'
    s += b'\0' * ((8 - len(s) % 8) % 8)
    return hdr(3, 0, struct.pack('<II', pid, tid) + s + idsample(pid, tid, t, 0, ids['dummy']))
def switch(out, preempt, pid, tid, t, cpu):
    misc = (0x2000 if out else 0) | (0x4000 if preempt else 0)
    return hdr(15, misc, struct.pack('<II', 0, 0) + idsample(pid, tid, t, cpu, ids['dummy']))

T0, TICK = 10**9, 10**6
ev = bytearray()
ev += comm(1000, 1000, 'qemu-system-x86', T0 - 30)
ev += comm(1000, 1001, 'CPU 0/KVM', T0 - 20)
ev += comm(2000, 2000, 'make', T0 - 10)
gctx = ctx(0x1234003, 0x60, 0, VALID | SVM | GUEST | (3 << 4))
none = ctx(0, 0, 0, 0)
for k in range(300):
    t = T0 + k * TICK
    if k < 100 or k >= 200:
        if k == 200:
            ev += switch(False, False, 1000, 1001, t - 1000, 0)
        ev += sample(5, 0x401010, 1000, 1001, t, 0, gctx, ids['clock'])
    elif k == 100:
        ev += sample(1, 0xffffffff81555555, 1000, 1001, t, 0,
                     ctx(0, 0x78, 0, VALID | SVM | HOSTV), ids['clock'])
        ev += switch(True, False, 1000, 1001, t + 1000, 0)
    else:
        if k == 150 and not no_wakeup:
            # common_type 41, flags, preempt, pid; ns, waited, valid; padding
            raw = struct.pack('<HBBiQBB', 41, 0, 0, 1001, 50 * TICK, 1, 1) + b'\0' * 2
            ev += sample(1, 0xffffffff81666666, 1000, 1001, t - 500, 0,
                         ctx(0, 0x78, 0, VALID | SVM | HOSTV), ids['tp'], raw)
        ev += sample(2, 0x400123, 2000, 2000, t, 0, none, ids['clock'])

out = d[:d_off] + ev
struct.pack_into('<Q', out, 24 + 24, len(ev))
# feature sections keep their order and sizes; rebuild the table offsets
pos = d_off + len(ev) + 16 * nfeat
tab = bytearray()
body = bytearray()
for off, size in ftab:
    tab += struct.pack('<QQ', pos + len(body), size)
    body += d[off:off + size]
out += tab + body
open(dst, 'wb').write(out)
print('%s: ids %s, %d feature sections' % (dst, ids, nfeat))
