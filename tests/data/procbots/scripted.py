"""A test bot driven by its stdin: each line is one command (see the branches below).

Exits 0 at the end of its stdin. Uses raw binary stdio and flushes after each write,
as every real bot must.
"""

import os
import signal
import sys
import time

out = sys.stdout.buffer
err = sys.stderr.buffer


def write(data: bytes, *, pause: float = 0.0) -> None:
    out.write(data)
    out.flush()
    if pause:
        time.sleep(pause)


for raw in sys.stdin.buffer:
    command, _, arg = raw.rstrip(b"\r\n").partition(b" ")
    if command == b"echo":
        write(arg + b"\n")
    elif command == b"crlf":
        write(arg + b"\r\n")
    elif command == b"split":  # one reply in several writes
        write(b"hel", pause=0.05)
        write(b"lo wo", pause=0.05)
        write(b"rld\n")
    elif command == b"multi":  # several replies in one write
        write(b"one\ntwo\r\nthree\n")
    elif command == b"long":  # an overlong line in pieces, then a normal one
        size, piece = int(arg), 20_000
        for start in range(0, size, piece):
            write(b"x" * min(piece, size - start), pause=0.01)
        write(b"\nafter\n")
    elif command == b"sleep":  # answer late
        time.sleep(float(arg))
        write(b"late\n")
    elif command == b"silent":  # never answer
        pass
    elif command == b"stderr":  # flood stderr, then answer
        size, piece = int(arg), 1 << 20
        for start in range(0, size, piece):
            err.write(b"e" * min(piece, size - start))
        err.write(b"\nstderr-end\n")
        err.flush()
        write(b"ok\n")
    elif command == b"partial":  # half a line, then exit
        write(b"abc")
        sys.exit(4)
    elif command == b"closeout":  # close stdout, stay alive reading stdin
        out.close()
        os.close(1)
        for _ in sys.stdin.buffer:
            pass
        sys.exit(0)
    elif command == b"exit":
        err.write(b"goodbye from scripted\n")
        err.flush()
        sys.exit(int(arg))
    elif command == b"kill":
        os.kill(os.getpid(), signal.SIGKILL)
    else:
        write(b"unknown " + command + b"\n")
