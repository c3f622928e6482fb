#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
# qemu_monitor.py SOCKET ROUNDS CMD...: ask QEMU's human monitor, listening
# on the unix socket SOCKET, each CMD in turn, ROUNDS times, and print its
# answers (carriage returns dropped).  A round ends when the monitor has
# been silent for 5 s, so that rounds come some seconds apart.  As a
# module, monitor() serves qemu-cpu-state.py.
import socket
import sys
import time


def monitor(path, cmds, rounds=1, quiet=3.0, out=None):
    """the monitor's answers to CMDS, ROUNDS times, each round's written
    to OUT as it comes when OUT is given; the monitor's banner dropped"""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(quiet)
    s.connect(path)

    def drain():
        buf = b''
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                buf += d
        except socket.timeout:
            pass
        return buf.decode('latin-1').replace('\r', '')
    drain()
    text = ''
    for _ in range(rounds):
        for c in cmds:
            s.sendall(c.encode() + b'\n')
            time.sleep(0.3)
        time.sleep(0.1)
        answer = drain()
        if out:
            out.write(answer)
            out.flush()
        text += answer
    s.close()
    return text


if __name__ == '__main__':
    monitor(sys.argv[1], sys.argv[3:], int(sys.argv[2]), 5.0, sys.stdout)
