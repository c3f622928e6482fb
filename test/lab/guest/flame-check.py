#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""flame-check.py DOM WANT [PROCESS]: check the flame graph that go tool pprof -http
drew of the chain run's pprof export, as headless Chromium left its page
(--dump-dom, after the page's scripts ran).  The graph is d3-flame-graph's
SVG: one <g class="frame" name=F transform="translate(X,Y)" width=W> per
box, a box's callees in the row below it and within its width.  From the
boxes alone, as a reader sees them:
  - a stack of boxes runs from a host frame of KVM down through the guest
    process tree (or PROCESS: tree-nofp) into its own frames: tree_start, run, caller_a or
    caller_b, tree_mix (libtree.so), leaf;
  - caller_a's boxes below run are WANT percent (+-0.5, the boxes'
    pixels) as wide as caller_a's and caller_b's together: the share of
    the ticks the export holds (check-chains.sh judges that share against
    the one tree was built with).
Prints the stack it found; exits 1 if a check missed.

flame-check.py --stack DOM NAME...: a stack of boxes holds the NAMEs in
their order (others between them allowed), and the last NAME's box has
callees of at least five names (the DWARF run's perl: from KVM through
perl's interpreter loop into its ops).  Prints the widest such stack and
the last NAME's widest callees."""
import html.parser
import re
import sys

GUEST = ['tree', 'tree_start', 'run', None, 'tree_mix', 'leaf']
HOST = ('kvm_vcpu_ioctl', 'kvm_arch_vcpu_ioctl_run')


class Frames(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.frames = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag != 'g' or 'frame' not in (a.get('class') or '').split():
            return
        m = re.match(r'translate\(([-0-9.e]+),([-0-9.e]+)\)', a.get('transform') or '')
        try:
            w = float(a.get('width'))
        except (TypeError, ValueError):
            return
        if m and w > 0:
            self.frames.append((float(m.group(1)), float(m.group(2)), w, a.get('name') or ''))


def boxes(path):
    p = Frames()
    with open(path, encoding='utf-8', errors='replace') as f:
        p.feed(f.read())
    return p.frames


def tree_of(frames):
    """parent(box) and stack(box), from the boxes' rows and extents"""
    rows = {}
    for fr in frames:
        rows.setdefault(round(fr[1], 1), []).append(fr)
    ys = sorted(rows)
    step = min((b - a for a, b in zip(ys, ys[1:])), default=0)
    eps = 0.01

    def parent(fr):
        for q in rows.get(round(fr[1] - step, 1), []):
            if q[0] <= fr[0] + eps and q[0] + q[2] >= fr[0] + fr[2] - eps:
                return q
        return None

    def stack(fr):
        s = [fr]
        while s[-1][1] > ys[0] and parent(s[-1]):
            s.append(parent(s[-1]))
        return [q[3] for q in reversed(s)]
    return parent, stack


def main_stack(path, names):
    frames = boxes(path)
    print('flame-check: %d boxes in the flame graph' % len(frames))
    parent, stack = tree_of(frames)
    for fr in sorted((q for q in frames if q[3] == names[-1]), key=lambda q: -q[2]):
        s = stack(fr)
        it = iter(s)
        if all(n in it for n in names):
            kids = {}
            for q in frames:
                if parent(q) == fr:
                    kids[q[3]] = kids.get(q[3], 0) + q[2]
            top = sorted(kids, key=lambda k: -kids[k])
            good = len(kids) >= 5
            print('flame-check:   ok   a stack from the host into the guest: %s' % ';'.join(s))
            print('flame-check:   %-4s %d callees of %s: %s' % ('ok' if good else 'MISS', len(kids), names[-1],
                  ', '.join('%s %.0f%%' % (k, 100 * kids[k] / fr[2]) for k in top[:8])))
            return 0 if good else 1
    print('flame-check:   MISS no stack of boxes holds %s' % ' ... '.join(names))
    return 1


def main():
    if len(sys.argv) > 3 and sys.argv[1] == '--stack':
        sys.exit(main_stack(sys.argv[2], sys.argv[3:]))
    if len(sys.argv) not in (3, 4):
        sys.exit('usage: flame-check.py DOM WANT [PROCESS]')
    if len(sys.argv) == 4:
        GUEST[0] = sys.argv[3]
    want = float(sys.argv[2])
    frames = boxes(sys.argv[1])
    print('flame-check: %d boxes in the flame graph' % len(frames))
    parent, stack = tree_of(frames)

    ok = True
    # the widest leaf box whose stack holds the host's KVM and then tree's
    # frames, in order
    best = None
    for fr in sorted((q for q in frames if q[3] == 'leaf'), key=lambda q: -q[2]):
        names = stack(fr)
        tail = names[-len(GUEST):]
        if (len(tail) == len(GUEST) and
                all(w is None or w == n for w, n in zip(GUEST, tail)) and
                tail[3] in ('caller_a', 'caller_b') and
                any(n in HOST for n in names[:-len(GUEST)])):
            best = names
            break
    if best:
        print('flame-check:   ok   one stack from the host into the guest: %s' % ';'.join(best))
    else:
        ok = False
        print('flame-check:   MISS no stack of boxes runs from KVM into tree_start;run;caller_*;tree_mix;leaf')
        for fr in sorted((q for q in frames if q[3] == 'leaf'), key=lambda q: -q[2])[:3]:
            print('flame-check:        leaf under %s' % ';'.join(stack(fr)))
    # the callers' widths below run
    width = {'caller_a': 0.0, 'caller_b': 0.0}
    for fr in frames:
        if fr[3] in width:
            par = parent(fr)
            if par and par[3] == 'run':
                width[fr[3]] += fr[2]
    total = width['caller_a'] + width['caller_b']
    if total > 0:
        share = 100 * width['caller_a'] / total
        good = abs(share - want) <= 0.5
        ok = ok and good
        print('flame-check:   %-4s caller_a %.2f%% of the callers\' width below run (the export\'s ticks %.2f%%, +-0.5)' %
              ('ok' if good else 'MISS', share, want))
    else:
        ok = False
        print('flame-check:   MISS no caller_a or caller_b box below run')
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
