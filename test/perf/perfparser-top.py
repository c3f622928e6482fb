#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
# perfparser-top.py FILE [EVENT]: what hotspot shows, read from the stream
# its parser (hotspot-perfparser --output FILE) writes: each symbol's self
# cost of EVENT (default cpu-clock; the first frame of each sample, as
# hotspot's Bottom Up view counts it), most first, one per line:
# "name<TAB>binary<TAB>cost<TAB>share %".  The stream: "QPERFSTREAM\0", a
# version, then messages (a little-endian u32 size, then QDataStream,
# big-endian): a type byte and its fields.  Only the messages read here
# are parsed; a sample without a period weighs its event's period.
import struct, sys

def rd(fmt, b, o):
    v = struct.unpack_from(fmt, b, o)
    return v, o + struct.calcsize(fmt)

def qba(b, o):
    (n,), o = rd('>I', b, o)
    if n == 0xffffffff:
        return b'', o
    return b[o:o + n], o + n

data = open(sys.argv[1], 'rb').read()
want = sys.argv[2] if len(sys.argv) > 2 else 'cpu-clock'
if not data.startswith(b'QPERFSTREAM\0'):
    sys.exit('perfparser-top: not a perfparser stream')
o = 12 + 4
strings, syms, attrs, periods, parents, cost = {}, {}, {}, {}, {}, {}
while o < len(data):
    (size,), o = rd('<I', data, o)
    msg, o = data[o:o + size], o + size
    if not msg:
        continue
    t = msg[0]
    if t == 5:      # StringDefinition
        (i,), p = rd('>i', msg, 1)
        s, _ = qba(msg, p)
        strings[i] = s.decode('utf-8', 'replace')
    elif t == 3:    # LocationDefinition: id, address, file, pid, line, column, parent
        (i, addr, f, pid, line, col, parent), _ = rd('>iQiIiii', msg, 1)
        parents[i] = parent
    elif t == 4:    # SymbolDefinition: location id, name, binary, ...
        (loc, name, binary), _ = rd('>iii', msg, 1)
        syms[loc] = (name, binary)
    elif t == 11:   # AttributesDefinition: id, type, config, name id
        (i, typ, cfg, name, freq, fp), _ = rd('>iIQi?Q', msg, 1)
        attrs[i] = name
        periods[i] = 0 if freq else fp
    elif t == 13:   # Sample
        (pid, tid, time, cpu), p = rd('>iiQI', msg, 1)
        (n,), p = rd('>I', msg, p)
        frames = struct.unpack_from('>%di' % n, msg, p)
        p += 4 * n + 1
        (nv,), p = rd('>I', msg, p)
        for k in range(nv):
            (a, v), p = rd('>iQ', msg, p)
            name = strings.get(attrs.get(a), '')
            # perf names an event with its modifiers: "cpu-clock:HG"
            if (name != want and not name.startswith(want + ':')) or not frames:
                continue
            # a sample without a period stands for its event's (as hotspot counts)
            v = v or periods.get(a, 0) or 1
            # a location's symbol may be its function's location's
            loc = frames[0]
            for _ in range(64):
                if loc in syms or parents.get(loc, -1) < 0:
                    break
                loc = parents[loc]
            key = syms.get(loc, (-1, -1))
            cost[key] = cost.get(key, 0) + v
total = sum(cost.values()) or 1
for (name, binary), v in sorted(cost.items(), key=lambda kv: -kv[1]):
    try:
        print('%s\t%s\t%d\t%.2f' % (strings.get(name, '??'), strings.get(binary, ''), v,
                                   100.0 * v / total))
    except BrokenPipeError:
        break
