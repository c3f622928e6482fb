#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Turn a host recording of a program into what 'perf record --vmcs-ctx
# --call-graph dwarf' would record of that program running in a guest, so
# that perf's unwinding of guest stacks can be tried on real stacks and
# real CFI without a KVM host.
#
# Usage: gen-guest-dwarf.py IN BIN OUT BUNDLE
#   IN      perf record -e cpu-clock --call-graph dwarf of BIN (little-endian)
#   BIN     the program, built without frame pointers
#   OUT     the recording to write: each user-mode sample of BIN in IN becomes
#           a guest sample of VM pid 1000 (vCPU thread 1001), guest process
#           321 (root 0x1234000), with a deferred chain (cookie k + 1) whose
#           PERF_RECORD_GUEST_USER_STACK record holds IN's registers and
#           stack of that sample, and whose chain record holds the IP alone
#           (user chains excluded, as dwarf mode asks), then two host
#           kernel frames
#   BUNDLE  VM 1000's bundle: process 321 mapping BIN's text where IN saw it
#           mapped, BIN's function symbols (nm -S) and its .eh_frame_hdr and
#           .eh_frame (x-unwind records)
#   HOSTILE (optional) puts tables in the bundle that no unwinder should
#           follow far, in place of BIN's:
#           loop      one FDE over the whole text whose rule gives each
#                     frame itself as its caller (CFA = RSP, the return
#                     address the same), a chain with no end
#           offstack  one FDE whose CFA lies 1 MiB above RSP, beyond the
#                     copied stack
#           badhdr    BIN's tables, the .eh_frame_hdr's search table
#                     pointing 2 GiB past its section
#           big       BIN's .eh_frame_hdr and a .eh_frame of 15 MiB (under
#                     the bundle's 16 MiB a table): BIN's, then bytes of
#                     0xff to the end
# Prints how many samples it wrote.
import base64, gzip, struct, subprocess, sys
from perffile import *

inp, binary, out, bundle = sys.argv[1:5]
hostile = sys.argv[5] if len(sys.argv) > 5 else None
data = open(inp, 'rb').read()
magic, hsize, attr_size = struct.unpack_from('<8sQQ', data, 0)
assert magic == b'PERFILE2', 'not a little-endian perf.data'
attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<QQQQ', data, 24)

# the events: sample_type, regs mask and stack size by id
events = []
for off in range(attrs_off, attrs_off + attrs_size, attr_size):
    st, = struct.unpack_from('<Q', data, off + 24)
    regs, stack = struct.unpack_from('<QI', data, off + 80)
    ids_off, ids_size = struct.unpack_from('<QQ', data, off + attr_size - 16)
    ids = struct.unpack_from('<%dQ' % (ids_size // 8), data, ids_off)
    events.append((st, regs, stack, ids))
clock = [e for e in events if e[0] & (1 << 13)][0]     # the one with STACK_USER
ST_IN, REGS, STACK = clock[0], clock[1], clock[2]
NREGS = bin(REGS).count('1')

def parse_sample(rec):
    """the fields of a sample of the clock event: ip, pid, tid, regs, stack"""
    p, s = 8, {}
    def u64():
        nonlocal p
        v, = struct.unpack_from('<Q', rec, p)
        p += 8
        return v
    for bit, name in ((16, 'ident'), (0, 'ip'), (1, 'tid'), (2, 'time'), (3, 'addr'),
                      (6, 'id'), (9, 'stream'), (7, 'cpu'), (8, 'period')):
        if ST_IN & (1 << bit):
            s[name] = u64()
    assert not ST_IN & (1 << 4), 'no read format'
    if ST_IN & (1 << 5):
        nr = u64()
        p += 8 * nr
    assert not ST_IN & ((1 << 10) | (1 << 11)), 'no raw or branch stack'
    abi = u64()
    s['regs'] = struct.unpack_from('<%dQ' % NREGS, rec, p) if abi else None
    p += 8 * NREGS if abi else 0
    size = u64()
    s['stack'] = b''
    if size:
        stack = rec[p:p + size]
        p += size
        dyn = u64()
        s['stack'] = stack[:dyn]
    return s

text = None
samples = []
off = data_off
while off < data_off + data_size:
    typ, misc, size = struct.unpack_from('<IHH', data, off)
    rec = data[off:off + size]
    if typ == 10:       # MMAP2: BIN's executable mapping
        pid, tid, start, length, pgoff = struct.unpack_from('<IIQQQ', rec, 8)
        prot, = struct.unpack_from('<I', rec, 8 + 8 + 24 + 24)
        name = rec[8 + 8 + 24 + 24 + 8:].split(b'\0')[0].decode()
        if name.endswith('/' + binary.split('/')[-1]) and prot & 4:
            text = (start, start + length, pgoff)
    elif typ == 9 and (misc & 7) == 2:
        s = parse_sample(rec)
        if s['regs'] and s['stack']:
            samples.append(s)
    off += size
assert text, 'no executable mapping of %s in %s' % (binary, inp)
samples = [s for s in samples if text[0] <= s['ip'] < text[1]]

# the recording
f = PerfFile(False)
u8, hdr, ctx = f.u8, f.hdr, f.ctx
S_REGS_USER, S_STACK_USER = 1 << 12, 1 << 13
ST = S_IDENT | S_IP | S_TID | S_TIME | S_CPU | S_PERIOD | S_CALLCHAIN | S_REGS_USER | S_STACK_USER | S_GUEST_CTX
IDS = {'clock': 11}
CTX_KERNEL, CTX_GUEST_USER, CTX_GUEST_DEFERRED = 2**64 - 128, 2**64 - 2560, 2**64 - 2688
T0, TICK = 10**9, 10**6
gctx = ctx(0x1234003, 0x60, 0, VALID | SVM | GUEST | (3 << 4))

def sample_id(pid, tid, t):
    return struct.pack('<IIQIIQ', pid, tid, t, 0, 0, IDS['clock'])

ev = f.comm(1000, 1000, 'qemu-system-x86', T0 - 30, IDS['clock'])
ev += f.comm(1000, 1001, 'CPU 0/KVM', T0 - 20, IDS['clock'])
for k, s in enumerate(samples):
    t, cookie = T0 + k * TICK, k + 1
    # the sample's own user registers and stack are the host's: none here
    ev += f.sample(IDS['clock'], 5, s['ip'], 1000, 1001, t, u8(0) + u8(0) + gctx, None,
                   [CTX_GUEST_DEFERRED, cookie])
    stack = s['stack'] + b'\0' * ((8 - len(s['stack']) % 8) % 8)
    body = u8(cookie) + u8(2) + b''.join(u8(r) for r in s['regs'])
    body += u8(len(stack)) + stack + u8(len(s['stack'])) + sample_id(1000, 1001, t + 500)
    ev += hdr(23, 5, body)
    ips = [CTX_GUEST_USER, s['ip'], CTX_KERNEL, 0xffffffff81000100]
    body = u8(cookie) + u8(len(ips)) + b''.join(u8(x) for x in ips) + sample_id(1000, 1001, t + 1000)
    ev += hdr(22, 5, body)
DEFER_CALLCHAIN, EXCLUDE_CALLCHAIN_USER = 1 << 38, 1 << 22
a = f.attr(1, 0, 1000, ST, FLAGS | (1 << 10) | DEFER_CALLCHAIN | EXCLUDE_CALLCHAIN_USER)
a = a[:80] + u8(REGS) + struct.pack('<I', STACK) + a[92:]
f.write(out, [a], [IDS['clock']], ev, [])

# the bundle: BIN's text mapped where IN saw it, its functions, its tables
start, end, pgoff = text
syms = []
for line in subprocess.run(['nm', '-S', '--defined-only', binary], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    w = line.split()
    if len(w) == 4 and w[2] in 'Tt':
        syms.append((int(w[0], 16), int(w[1], 16), w[3]))
syms = sorted(set(syms))
sections = {}
image = open(binary, 'rb').read()
for line in subprocess.run(['readelf', '-SW', binary], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    w = line.replace('[ ', '[').split()
    for name in ('.eh_frame_hdr', '.eh_frame'):
        if name in w:
            i = w.index(name)
            addr, offset, size = int(w[i + 2], 16), int(w[i + 3], 16), int(w[i + 4], 16)
            sections[name] = (addr, image[offset:offset + size])
def uleb(v):
    b = b''
    while True:
        c, v = v & 0x7f, v >> 7
        b += bytes([c | (0x80 if v else 0)])
        if not v:
            return b

def hostile_tables(kind, hdr_addr, eh_addr, text_lo, text_hi):
    """(.eh_frame_hdr, .eh_frame) at those addresses: a CIE (RA in column
    16, CFA = RSP + 8, RA at CFA - 8) and one FDE over [text_lo, text_hi)
    whose instructions are the kind's"""
    def pad(b):
        return b + b'\0' * ((-len(b)) % 8)     # DW_CFA_nop
    cie = b'\0\0\0\0' + b'\x01zR\0' + uleb(1) + b'\x78' + uleb(16) + uleb(1) + b'\x1b'
    cie += b'\x0c\x07\x08' + b'\x90\x01'      # def_cfa rsp+8; offset r16, cfa-8
    cie = pad(struct.pack('<I', 0) + cie)[4:]
    cie = struct.pack('<I', len(cie)) + cie
    if kind == 'loop':
        ins = b'\x0c\x07\x00' + b'\x08\x10'    # def_cfa rsp+0; same_value r16
    else:
        ins = b'\x0c\x07' + uleb(1 << 20)      # def_cfa rsp+1 MiB
    fde_at = len(cie)
    body = struct.pack('<I', fde_at + 4)        # back to the CIE
    body += struct.pack('<i', text_lo - (eh_addr + fde_at + 8))
    body += struct.pack('<i', text_hi - text_lo) + uleb(0) + ins
    body = pad(struct.pack('<I', 0) + body)[4:]
    eh = cie + struct.pack('<I', len(body)) + body + b'\0\0\0\0'
    hdr = bytes([1, 0x1b, 0x03, 0x3b]) + struct.pack('<i', eh_addr - (hdr_addr + 4))
    hdr += struct.pack('<I', 1) + struct.pack('<ii', text_lo - hdr_addr, eh_addr + fde_at - hdr_addr)
    return hdr, eh

if hostile in ('loop', 'offstack'):
    (ha, _), (ea, _) = sections['.eh_frame_hdr'], sections['.eh_frame']
    lo = min(a for a, n, _ in syms)
    hi = max(a + n for a, n, _ in syms)
    h, e = hostile_tables(hostile, ha, ea, lo, hi)
    sections = {'.eh_frame_hdr': (ha, h), '.eh_frame': (ea, e)}
elif hostile == 'badhdr':
    ha, h = sections['.eh_frame_hdr']
    n, = struct.unpack_from('<I', h, 8)
    h = bytearray(h)
    for i in range(n):
        struct.pack_into('<i', h, 12 + 8 * i + 4, 0x7ffffff0)
    sections['.eh_frame_hdr'] = (ha, bytes(h))
elif hostile == 'big':
    ea, e = sections['.eh_frame']
    sections['.eh_frame'] = (ea, e + b'\xff' * (15 * 2**20 - len(e)))
elif hostile:
    sys.exit('gen-guest-dwarf.py: no hostile kind %s' % hostile)
lines = ['vmctx-bundle 1',
         'counts tasks=1 objects=1 maps=1 syms=%d kmods=0 ksyms=0' % len(syms),
         'identity hostname=guest1 release=6.1.0-test boot_id=boot-1',
         'clock tsc_khz=0 tsc=0 ns=0', 'cr3_mask 0x0',
         'task 0 root=0x1234000 pid=321 tgid=321 start=0 exit=- comm=dw',
         'object 0 build_id=- path=/usr/bin/dw']
lines += ['sym 0 0x%x 0x%x %s' % s for s in syms]
for name, kind in (('.eh_frame_hdr', 'eh_frame_hdr'), ('.eh_frame', 'eh_frame')):
    addr, raw = sections[name]
    for o in range(0, len(raw), 45000):
        lines.append('x-unwind 0 %s vaddr=0x%x size=%d off=%d %s' %
                     (kind, addr, len(raw), o, base64.b64encode(raw[o:o + 45000]).decode()))
# the text's first byte is file offset pgoff, at vaddr pgoff (a PIE's text)
lines.append('map 0 0x%x 0x%x pgoff=0x%x bias=0x%x object=0 path=/usr/bin/dw' %
             (start, end, pgoff, start - pgoff))
lines.append('end')
with gzip.open(bundle, 'wb') as z:
    z.write(('\n'.join(lines) + '\n').encode())
print(len(samples))
