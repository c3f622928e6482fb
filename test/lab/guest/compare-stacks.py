#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""compare-stacks.py [-a ALIASES] NAME PID HOST GUEST [TOP] [DEPTH]: the DWARF run's
stacks of one guest program (NAME, pid PID in the guest), as the host's
perf script --guest-maps gives them (HOST) and as the guest's own perf
script gives them from the guest's own recording (GUEST: Debian's
linux-perf, the reference).  Both are perf script -F comm,pid,tid,ip,sym,dso
output, with --no-inline (a frame is an address: its name the symbol
table's, never an inlined function's in its place).  The user-mode samples of PID only (a leaf in the guest kernel is
left out on both sides); a frame is its function and its object's file
name (the host names a guest's object /vmctx-guest/QEMU-PID/PATH, the
guest PATH); the host's frames after the guest's (KVM's, the VMM's) are
cut.  For each of the TOP (10) functions the guest's samples fall in most,
its stacks up to DEPTH (5) frames, on each side: the share of the
host's samples whose stack is one the guest's perf gave for that function
(the host's chains that equal the guest's), and the overlap of the two
distributions (the sum over stacks of the smaller share: the two
recordings sample different instants, so this one moves with sampling
noise, some 10 points at 40 samples a function).  Prints both for each
function and overall, weighted by the guest's samples; exits 1 if under
90% of the host's samples have a stack the guest's perf gave, if the
distributions overlap under 80%, or if a side has too few samples.
ALIASES: lines "OBJECT ADDRESS NAME" (nm -D of each object, its file
name first): names at one address of one object are one function, which
two perfs may call by different names (libc's malloc and __libc_malloc);
each is compared as the first of them."""
import collections
import os
import sys


def parse(path, pid):
    """the user-mode samples of pid: each a tuple of frames, leaf first"""
    out = []
    hdr = None
    frames = []

    def flush():
        if hdr is None or not frames:
            return
        f = hdr.split()
        if len(f) < 2 or f[1].split('/')[0] != pid:
            return
        s = frames
        if s[0][1].startswith('/vmctx-guest/'):
            # the host's view: the guest's frames end where the host's
            # begin; the guest's files are /vmctx-guest/QEMU-PID/PATH
            n = 0
            while n < len(s) and s[n][1].startswith('/vmctx-guest/'):
                n += 1
            s = [(sym, '/' + dso.split('/', 3)[3]) for sym, dso in s[:n]]
        s = tuple((sym, os.path.basename(dso)) for sym, dso in s)
        if 'kernel' not in s[0][1] and s[0][1] != '[unknown]':
            out.append(s)

    with open(path, encoding='utf-8', errors='replace') as fh:
        for line in fh:
            line = line.rstrip('\n')
            if not line.strip():
                flush()
                hdr, frames = None, []
            elif line.startswith('\t') and hdr is not None:
                body = line.strip().split(' ', 1)
                if len(body) < 2:
                    continue
                rest = body[1]
                i = rest.rfind(' (')
                sym, dso = (rest[:i], rest[i + 2:-1]) if i >= 0 else (rest, '')
                frames.append((sym, dso))
            else:
                flush()
                hdr, frames = line, []
        flush()
    return out


def aliases(path):
    """(object, name) -> the first name at that name's address"""
    at = collections.defaultdict(list)
    with open(path, encoding='utf-8', errors='replace') as fh:
        for line in fh:
            w = line.split()
            if len(w) == 3:
                at[(w[0], w[1])].append(w[2])
    canon = {}
    for (obj, _), names in at.items():
        first = min(names)
        for n in names:
            canon[(obj, n)] = first
    return canon


def main():
    canon = {}
    if len(sys.argv) > 2 and sys.argv[1] == '-a':
        canon = aliases(sys.argv[2])
        del sys.argv[1:3]
    if len(sys.argv) < 5:
        sys.exit('usage: compare-stacks.py NAME PID HOST GUEST [TOP] [DEPTH]')
    name, pid, hpath, gpath = sys.argv[1:5]
    top = int(sys.argv[5]) if len(sys.argv) > 5 else 10
    depth = int(sys.argv[6]) if len(sys.argv) > 6 else 5
    def canonical(s):
        return tuple((canon.get((f[1], f[0]), f[0]), f[1]) for f in s)
    host = [canonical(s) for s in parse(hpath, pid)]
    guest = [canonical(s) for s in parse(gpath, pid)]
    print('compare-stacks: %s (pid %s): %d user samples from the host, %d from the guest\'s own perf'
          % (name, pid, len(host), len(guest)))
    if len(host) < 200 or len(guest) < 200:
        print('compare-stacks:   MISS %s: too few samples to compare (want 200 a side)' % name)
        return 1
    leaves = collections.Counter(s[0] for s in guest)
    hl = collections.defaultdict(collections.Counter)
    gl = collections.defaultdict(collections.Counter)
    for s in host:
        hl[s[0]][s[:depth]] += 1
    for s in guest:
        gl[s[0]][s[:depth]] += 1
    tot = same = weight = hw = 0.0
    for leaf, n in leaves.most_common(top):
        hc, gc = hl[leaf], gl[leaf]
        hn, gn = sum(hc.values()), sum(gc.values())
        ov = sum(min(hc[k] / hn, gc[k] / gn) for k in gc) if hn else 0.0
        eq = sum(v for k, v in hc.items() if k in gc)
        tot += ov * n
        weight += n
        same += eq
        hw += hn
        best = gc.most_common(1)[0][0]
        print('compare-stacks:   %s %s (%s): %d of the host\'s %d samples with a stack the guest\'s %d gave; distributions %.1f%% alike; the guest\'s most frequent: %s'
              % (name, leaf[0], leaf[1], eq, hn, gn, 100 * ov,
                 ';'.join('%s (%s)' % f for f in reversed(best))))
    equal = 100 * same / hw if hw else 0.0
    overall = 100 * tot / weight
    print('compare-stacks:   %s %s: %.1f%% of the host\'s %d samples in its top %d functions (%.0f%% of its guest samples) have a stack, up to %d frames, that the guest\'s own perf gave (at least 90%%)'
          % ('ok  ' if equal >= 90 else 'MISS', name, equal, hw, top, 100 * weight / len(guest), depth))
    print('compare-stacks:   %s %s: the stacks\' distributions %.1f%% alike, host and guest (at least 80%%)'
          % ('ok  ' if overall >= 80 else 'MISS', name, overall))
    return 0 if equal >= 90 and overall >= 80 else 1


if __name__ == '__main__':
    sys.exit(main())
