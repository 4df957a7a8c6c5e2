#!/usr/bin/env python3
"""Sends control commands to a running fakecri: ctl.py CONTROL_SOCKET JSON [JSON...]

Each JSON argument is one command (see README); each reply is printed as one line.
Exits 1 when a reply has "ok": false, 2 when the fake cannot be reached.
"""
import json
import socket
import sys


def send(path, *cmds):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    f = s.makefile("rwb")
    out = []
    for c in cmds:
        f.write(((c if isinstance(c, str) else json.dumps(c)) + "\n").encode())
        f.flush()
        out.append(json.loads(f.readline()))
    f.close()
    s.close()
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 64
    try:
        replies = send(argv[1], *argv[2:])
    except OSError as e:
        print("ctl.py: %s: %s" % (argv[1], e), file=sys.stderr)
        return 2
    rc = 0
    for r in replies:
        print(json.dumps(r, sort_keys=True))
        if not r.get("ok"):
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
