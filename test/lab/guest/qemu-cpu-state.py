#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
# qemu-cpu-state.py PID SOCKET: what QEMU 7.2's TCG holds for its vCPU 0
# besides what its monitor shows, read from the running process's memory
# (Debian's qemu-system-x86 has no debug symbols): whether the CPU may take
# a host interrupt in a nested guest, and whether one is requested.
#
# The registers come from the monitor at SOCKET ('info registers -a', the
# VM stopped for it and the search, then let go on).  The CPU's
# CPUX86State starts with regs[16] in x86 encoding order (RAX RCX RDX RBX
# RSP RBP RSI RDI R8..R15), then eip, eflags, cc_dst, cc_src, cc_src2,
# cc_op, df, hflags (at +176) and hflags2 (at +180)
# (target/i386/cpu.h).  RSP..R15 from the monitor, twelve quadwords, are
# searched for in QEMU's writable mappings but the largest (the guest's
# RAM, where KVM keeps its own copy of the nested guest's registers); a
# match is the CPU's state if its flags are: eflags' always-one bit and
# long mode in hflags.  CPUState (include/hw/core/cpu.h) lies before it
# and holds a pointer to it (env_ptr); before that, nr_cores and
# nr_threads (1, 1), the thread pointer, thread_id (the vCPU thread's
# TID), ..., cflags_next_tb at thread_id + 28 and interrupt_request at
# thread_id + 32.  Prints one line per read, five reads a second apart,
# then a verdict on an interrupt L1 does not get, from those reads and L1's
# local APIC ('info lapic', before and after the reads, the same), when
# the CPU is in a nested guest and L1's APIC holds a deliverable vector
# (above PPR, above what is in service) all along:
#   emulator  GIF clear (VMRUN sets it); or the CPU allowed to take the
#             interrupt (GIF, and under V_INTR_MASKING the host IF that
#             VMRUN saved) and QEMU either has no interrupt requested of
#             it (its APIC raises CPU_INTERRUPT_HARD, or POLL from another
#             thread, whenever a vector is deliverable) or has one and
#             does not take it: on hardware the interrupt would end the
#             nested guest's run (KVM intercepts INTR);
#   L1        the host IF was clear at VMRUN: L1 ran its guest with
#             interrupts off, and nothing can take its CPU back;
#   none      anything else (flags that moved, not in a nested guest, no
#             deliverable vector).
import os
import re
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qemu_monitor import monitor  # noqa: E402

HF = {1 << 3: 'INHIBIT_IRQ', 1 << 14: 'LMA', 1 << 19: 'SMM',
      1 << 20: 'SVME', 1 << 21: 'GUEST'}
HF2 = {1 << 0: 'GIF', 1 << 1: 'HIF', 1 << 2: 'NMI', 1 << 3: 'VINTR',
       1 << 6: 'NPT', 1 << 8: 'VGIF'}
IRQ = {0x2: 'HARD', 0x4: 'EXITTB', 0x10: 'POLL', 0x20: 'HALT',
       0x40: 'SMI', 0x80: 'DEBUG', 0x100: 'VIRQ', 0x200: 'NMI',
       0x400: 'INIT', 0x800: 'SIPI', 0x1000: 'MCE', 0x2000: 'TPR'}
CF_NOIRQ = 0x00100000
# long mode active, as the nested guest's kernel runs (0 to test on firmware)
LONG = int(os.environ.get('QEMU_CPU_STATE_LONG', 1 << 14))


def names(v, table):
    out = [n for m, n in table.items() if v & m == m]
    return '|'.join(out) or '0'


def cpu0_regs(text):
    """RSP, RBP, RSI, RDI and R8..R15 of CPU#0 in the last round, as
    QEMU stores them (in 32-bit mode the monitor shows ESP..EDI only)"""
    rounds = text.split('CPU#0')
    if len(rounds) < 2:
        return None
    r = dict((k.replace('E', 'R', 1) if k[0] == 'E' else k, v) for k, v in
             re.findall(r'\b([RE][A-Z0-9]{1,2}) ?=([0-9a-f]{8}(?:[0-9a-f]{8})?)\b',
                        rounds[-1].split('CPU#1')[0]))
    want = ['RSP', 'RBP', 'RSI', 'RDI']
    if 'R8' in r:
        want += ['R%d' % i for i in range(8, 16)]
    if not all(k in r for k in want):
        return None
    return struct.pack('<%dQ' % len(want), *[int(r[k], 16) for k in want])


def vcpu_tid(pid):
    for t in os.listdir('/proc/%d/task' % pid):
        try:
            with open('/proc/%d/task/%s/comm' % (pid, t)) as f:
                if f.read().strip() == 'CPU 0/TCG':
                    return int(t)
        except OSError:
            pass
    return None


def regions(pid):
    out = []
    with open('/proc/%d/maps' % pid) as f:
        for line in f:
            p = line.split()
            lo, hi = (int(x, 16) for x in p[0].split('-'))
            # anonymous (no path) or the heap, writable
            if p[1].startswith('rw') and (len(p) == 5 or p[5] == '[heap]'):
                out.append((lo, hi))
    if out:
        out.remove(max(out, key=lambda r: r[1] - r[0]))	# the guest's RAM
    return out


def lapic(text):
    """L1's pending vectors, in service vectors and PPR from 'info lapic'"""
    def vecs(key):
        m = re.search(r'^%s\s+(.*)$' % key, text, re.M)
        return [int(v) for v in re.findall(r'\d+', m.group(1))] if m else []
    m = re.search(r'\bPPR 0x([0-9a-f]+)', text)
    return vecs('IRR'), vecs('ISR'), int(m.group(1), 16) if m else None, 'APIC enabled' in text


def main():
    pid, sock = int(sys.argv[1]), sys.argv[2]
    # first as it runs, the monitor's look changing nothing: a spinning
    # nested guest keeps RSP..R15; where they moved (firmware), stopped
    text = monitor(sock, ['info registers -a', 'info lapic'])
    pat = cpu0_regs(text)
    found = search(pid, pat) if pat else None
    stopped = False
    if pat and not found:
        stopped = True
        try:
            text = monitor(sock, ['stop', 'info registers -a', 'info lapic'])
            pat = cpu0_regs(text)
            found = search(pid, pat) if pat else None
        finally:
            monitor(sock, ['cont'])
    if pat is None:
        print('qemu-cpu-state: no CPU#0 registers from the monitor')
        return
    if not found:
        print('qemu-cpu-state: CPU#0\'s registers not found in QEMU\'s memory')
        return
    reads = report(pid, *found, stopped)
    # L1's APIC again after the reads: a vector pending at both looks,
    # five seconds apart, is no interrupt on its way
    before = lapic(text.split('local APIC state for CPU 0')[-1])
    after = lapic(monitor(sock, ['info lapic']).split('local APIC state for CPU 0')[-1])
    if before != after:
        print('qemu-cpu-state: verdict: none (L1\'s local APIC changed during the reads: %s, then %s)' %
              (before, after))
        return
    verdict(reads, after)


def verdict(reads, apic):
    """what the reads say of an interrupt that L1 does not get"""
    irr, isr, ppr, enabled = apic
    first = reads[0]
    if any(r != first for r in reads[1:]) or first[2] is None:
        print('qemu-cpu-state: verdict: none (the flags moved between reads, or no interrupt_request)')
        return
    hflags, hflags2, irq = first
    top = max(irr) if irr else None
    if not hflags & (1 << 21):
        print('qemu-cpu-state: verdict: none (the CPU is not in a nested guest)')
        return
    if top is None or ppr is None or not enabled or (top & 0xf0) <= (ppr & 0xf0) or \
            (isr and (top & 0xf0) <= (max(isr) & 0xf0)):
        print('qemu-cpu-state: verdict: none (L1\'s local APIC has no deliverable vector: IRR %s ISR %s PPR %s)' %
              (irr, isr, ppr))
        return
    if not hflags2 & 1:
        print('qemu-cpu-state: verdict: emulator (GIF clear in a nested guest, which VMRUN sets)')
    elif hflags2 & (1 << 3) and not hflags2 & (1 << 1):
        print('qemu-cpu-state: verdict: L1 (its VMRUN ran with interrupts off: V_INTR_MASKING and the host IF clear; vector %d pending)' % top)
    elif not irq & 0x12:
        print('qemu-cpu-state: verdict: emulator (L1\'s vector %d pending and deliverable, PPR 0x%x, the CPU allowed to take it, and no interrupt requested of it)' %
              (top, ppr))
    else:
        print('qemu-cpu-state: verdict: emulator (L1\'s vector %d pending and deliverable, the CPU allowed to take it, interrupt_request %x, not taken)' %
              (top, irq))


def search(pid, pat):
    """the CPU's CPUX86State and its CPUState's thread_id, or None"""
    tid = vcpu_tid(pid)
    mem = open('/proc/%d/mem' % pid, 'rb', buffering=0)
    env = None
    for lo, hi in regions(pid):
        if hi - lo > (1 << 30):
            continue
        try:
            mem.seek(lo)
            buf = mem.read(hi - lo)
        except OSError:
            continue
        at = buf.find(pat)
        while at >= 0:
            base = at - 4 * 8
            eflags, = struct.unpack_from('<Q', buf, base + 136)
            hflags, = struct.unpack_from('<I', buf, base + 176)
            if eflags & 2 and hflags & LONG == LONG:
                env = (lo + base, lo, buf)
                break
            at = buf.find(pat, at + 1)
        if env:
            break
    if not env:
        return None
    addr, lo, buf = env
    # CPUState: the pointer to env, then thread_id before it
    ptr = buf.rfind(struct.pack('<Q', addr), max(0, addr - lo - (1 << 20)), addr - lo)
    state = None
    if ptr >= 0 and tid:
        t = buf.rfind(struct.pack('<i', tid), max(0, ptr - 4096), ptr)
        while t >= 0:
            nc, nt = struct.unpack_from('<ii', buf, t - 16)
            if t % 8 == 0 and nc == 1 and nt == 1 and buf[t + 17] == 1:
                state = lo + t
                break
            t = buf.rfind(struct.pack('<i', tid), max(0, ptr - 4096), t)
    return addr, tid, state


def report(pid, addr, tid, state, stopped):
    """five reads a second apart, printed; (hflags, hflags2,
    interrupt_request or None) each"""
    mem = open('/proc/%d/mem' % pid, 'rb', buffering=0)
    print('qemu-cpu-state: CPUX86State at 0x%x, CPUState.thread_id (TID %s) at %s (found %s)' %
          (addr, tid, '0x%x' % state if state else 'not found',
           'with the VM stopped for a moment' if stopped else 'as it ran'))
    reads = []
    for i in range(5):
        mem.seek(addr + 128)
        eip, eflags = struct.unpack('<QQ', mem.read(16))
        mem.seek(addr + 176)
        hflags, hflags2 = struct.unpack('<II', mem.read(8))
        irq = None
        line = 'qemu-cpu-state: read %d: eip %x eflags %x hflags %x (CPL %d %s) hflags2 %x (%s)' % (
            i + 1, eip, eflags, hflags, hflags & 3, names(hflags, HF), hflags2, names(hflags2, HF2))
        if state:
            mem.seek(state + 23)
            exit_request = mem.read(1)[0]
            mem.seek(state + 28)
            cflags, irq = struct.unpack('<II', mem.read(8))
            line += ' interrupt_request %x (%s) cflags_next_tb %x%s exit_request %d' % (
                irq, names(irq, IRQ), cflags,
                ' (NOIRQ)' if cflags != 0xffffffff and cflags & CF_NOIRQ else '', exit_request)
        print(line, flush=True)
        reads.append((hflags, hflags2, irq))
        time.sleep(1)
    return reads


main()
