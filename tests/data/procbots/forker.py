"""A test bot that leaves processes behind.

``tree``: forks a helper child (stays in the bot's process group), and a double-forked
grandchild that calls setsid() and ignores SIGTERM; the middle process exits after
``--mid-delay`` seconds. Replies ``"<child pid> <grandchild pid>"``.
``orphan-exit``: forks a setsid() child that keeps stdout open, replies with its pid and
exits with status 5 at once (before any periodic scan can see the child).

``--no-subreaper`` turns off the child-subreaper flag the arena gives the bot, so that
the orphaned grandchild is re-parented to the arena instead of to the bot.
"""

import ctypes
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def sleep_forever() -> None:
    while True:
        time.sleep(1)


def tree(mid_delay: float) -> bytes:
    child = os.fork()
    if child == 0:
        sleep_forever()
    r, w = os.pipe()
    mid = os.fork()
    if mid == 0:
        os.close(r)
        grandchild = os.fork()
        if grandchild == 0:
            os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            os.write(w, str(os.getpid()).encode())
            os.close(w)
            sleep_forever()
        os.close(w)
        time.sleep(mid_delay)
        os._exit(0)
    os.close(w)
    grandchild = int(os.read(r, 64))
    os.close(r)
    os.waitpid(mid, 0)
    return f"{child} {grandchild}\n".encode()


def main() -> None:
    if "--no-subreaper" in sys.argv:
        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    mid_delay = 0.0
    if "--mid-delay" in sys.argv:
        mid_delay = float(sys.argv[sys.argv.index("--mid-delay") + 1])
    for raw in sys.stdin.buffer:
        command = raw.strip()
        if command == b"tree":
            reply = tree(mid_delay)
        elif command == b"orphan-exit":
            orphan = os.fork()
            if orphan == 0:
                os.setsid()
                sleep_forever()
            sys.stdout.buffer.write(b"%d\n" % orphan)
            sys.stdout.buffer.flush()
            os._exit(5)
        else:
            reply = b"unknown\n"
        sys.stdout.buffer.write(reply)
        sys.stdout.buffer.flush()


main()
