"""A bot that plays legally until its trigger, then misbehaves in one way.

    python hostile.py BEHAVIOUR [TRIGGER] [ARG...]

TRIGGER is the act (counted from 1, across games) at which the behaviour starts; ``0``
means at once, before answering hello. ARGs are what some behaviours need (paths to
snoop on, a port to connect to). Standard library only: it must run in any sandbox.
Whatever it finds out, it says on stderr (``REPORT key=value``), where the tests read it
from the replay.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import select
import signal
import socket
import sys
import threading
import time

BEHAVIOUR = sys.argv[1]
TRIGGER = int(sys.argv[2]) if len(sys.argv) > 2 else 2
ARGS = sys.argv[3:]


def report(key: str, value: object) -> None:
    sys.stderr.write(f"REPORT {key}={value}\n")
    sys.stderr.flush()


def sleep_forever() -> None:
    while True:
        time.sleep(3600)


def send(obj: dict) -> None:
    if FLOOD.running:
        FLOOD.send(obj, 0.0)
        return
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def attempt(key: str, action) -> None:  # noqa: ANN001
    """Try something the sandbox should refuse; report what happened."""
    try:
        result = action()
        report(key, f"ALLOWED {result!r}"[:200])
    except Exception as exc:  # noqa: BLE001
        report(key, f"blocked {type(exc).__name__}: {exc}"[:200])


def misbehave() -> None:
    b = BEHAVIOUR
    if b == "hang":
        sleep_forever()
    elif b == "huge_line":
        sys.stdout.write("x" * (10 * 1024 * 1024))  # 10 MB, no newline
        sys.stdout.flush()
        sleep_forever()
    elif b == "flood_lines":
        while True:
            sys.stdout.write("junk junk junk " * 20 + "\n")
    elif b == "garbage":
        sys.stdout.buffer.write(b"\xff\xfe\x00\x81 not json \xc3\x28\n")
        sys.stdout.flush()
        sleep_forever()
    elif b == "crash":
        raise RuntimeError("hostile bot crashes on purpose")
    elif b == "exit0":
        sys.stdout.flush()
        os._exit(0)
    elif b == "fork_bomb":
        bomb()
    elif b == "double_fork":
        double_fork()
    elif b == "memory_hog":
        hog = []
        while True:
            hog.append(bytearray(8 * 1024 * 1024))  # touched pages: counted at once
    elif b == "cpu_spin":
        if os.fork() == 0:  # a child spins a whole core (no lock shared with the player)
            spin()
    elif b == "huge_file":
        huge_file()
    elif b == "many_fds":
        many_fds()
    elif b == "network":
        network()
    elif b == "snoop":
        snoop()
    elif b == "kill_parent":
        kill_parent()
    elif b == "flood_stderr":
        threading.Thread(target=flood_stderr, daemon=True).start()
    elif b == "signal_self":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif b == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif b == "stale_flood":
        FLOOD.start()
    elif b in BAD_REPLIES or b in ("slow_once", "slow_always"):
        pass  # these change the replies themselves (see answer)
    else:
        raise SystemExit(f"unknown behaviour {b!r}")


#: Replies that are wrong in one way, from the trigger on (``{re}`` the request id,
#: ``{card}`` a card of a legal play).
BAD_REPLIES: dict[str, bytes] = {
    # Invalid UTF-8 inside a string the referee would otherwise skip (debug).
    "bad_utf8": b'{"type":"action","re":{re},"cards":[{card}],"debug":"caf\xc3 \xff\xfe"}',
    # Recursion: a debug value nested 20000 arrays deep (40 kB, under the line cap).
    "deep_json": b'{"type":"action","re":{re},"cards":[{card}],"debug":' + b"[" * 20000 + b"]" * 20000 + b"}",
    "huge_number": b'{"type":"action","re":{re},"cards":[1e999]}',
    # Duplicate keys: the last one counts (msgspec), here a card the bot does not hold.
    "duplicate_keys": b'{"type":"action","re":{re},"cards":[{card}],"cards":[100000]}',
    "lone_surrogate": b'{"type":"action","re":{re},"cards":[{card}],"debug":"\\ud800 alone"}',
    "nan": b'{"type":"action","re":{re},"cards":[{card}],"debug":NaN}',
    "wrong_shape": b'{"type":"action","re":{re},"cards":{"first":{card}}}',
    "illegal": b'{"type":"action","re":{re},"cards":[100000]}',
}


def answer(msg: dict, reply: dict) -> None:
    """Send ``reply`` to ``msg`` (an act), or what the behaviour sends instead."""
    b = BEHAVIOUR
    if b in BAD_REPLIES:
        line = BAD_REPLIES[b].replace(b"{re}", str(msg["id"]).encode()).replace(b"{card}", str(reply["cards"][0]).encode())
        sys.stdout.buffer.write(line + b"\n")
        sys.stdout.flush()
        return
    if b == "stale_flood":
        # The real answer only once every other seat's deadline has passed (or after
        # ARGS[0] seconds), behind the flood.
        me = msg["seat"]
        others = [bank for seat, bank in enumerate(msg["banks_ms"]) if seat != me] or [0]
        hold = float(ARGS[0]) if ARGS else (msg["time_ms"] - msg["banks_ms"][me] + max(others) + 300) / 1000
        FLOOD.send(reply, hold)
        return
    if b in ("slow_once", "slow_always"):
        # Just past this act's deadline: the reply arrives stale, while the referee waits
        # for the next request's (which it must not count for).
        report("late_by_ms", ARGS[0] if ARGS else 40)
        time.sleep(msg["time_ms"] / 1000 + (float(ARGS[0]) if ARGS else 40) / 1000)
    send(reply)


def spin() -> None:
    while True:
        pass


F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032


class Flood:
    """Keeps stdout (enlarged to 1 MiB) always full of valid but stale replies, from one
    writer thread that also sends the real replies, each when it is due (one writer:
    a big write is not atomic, and a reply must not land inside a stale line)."""

    STALE = b'{"type":"ack","re":0}\n'

    def __init__(self) -> None:
        self.running = False
        self.lock = threading.Lock()
        self.pending: list[tuple[float, bytes]] = []

    def start(self) -> None:
        try:
            fcntl.fcntl(1, F_SETPIPE_SZ, 1 << 20)
        except OSError as exc:
            report("pipe_size", f"not enlarged: {exc}")
        self.running = True
        threading.Thread(target=self.write, daemon=True).start()

    def send(self, obj: dict, delay: float) -> None:
        with self.lock:
            self.pending.append((time.monotonic() + delay, (json.dumps(obj) + "\n").encode()))

    def write(self) -> None:
        chunk = self.STALE * (65536 // len(self.STALE))
        while True:
            now = time.monotonic()
            with self.lock:
                due = [p for p in self.pending if p[0] <= now]
                self.pending = [p for p in self.pending if p[0] > now]
            for _, data in due:
                os.write(1, data)
            os.write(1, chunk)


FLOOD = Flood()


def tee_hold(hold_s: float, hold_acts: int, think_s: float) -> None:
    """Answers every request at once, but reads it with tee(2) (a copy: the bytes stay
    in stdin, shrunk to one page), so that the next request does not fit and the
    referee's write waits; meanwhile it "thinks" (spins) for ``hold_s``, up to
    ``hold_acts`` times a game, then drains the old requests to let the new one in,
    and answers that one after ``think_s`` more (so that the two together, not each
    alone, exceed a deadline). It reports how long each request was held out
    (``REPORT held_s=...``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fcntl.fcntl(0, F_SETPIPE_SZ, 4096)
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
    kept: list[int] = []  # lengths of the handled requests still at the head of stdin

    def new_line(timeout: float | None = None) -> bytes | None:
        if not select.select([0], [], [], timeout)[0]:
            return None
        n = libc.tee(0, w, ctypes.c_size_t(1 << 20), 2)  # SPLICE_F_NONBLOCK
        data = os.read(r, n) if n > 0 else b""
        if not data and not kept:
            raise SystemExit(0)  # the end of the input
        rest = data[sum(kept):]
        return rest[: rest.index(b"\n") + 1] if b"\n" in rest else None

    def pipe_full() -> bool:
        n = libc.tee(0, w, ctypes.c_size_t(1 << 20), 2)
        size = len(os.read(r, n)) if n > 0 else 0
        return size >= fcntl.fcntl(0, F_GETPIPE_SZ)

    def drop_oldest() -> None:
        n, got = kept.pop(0), 0
        while got < n:
            got += len(os.read(0, n - got))

    def say(obj: dict) -> None:
        os.write(1, (json.dumps(obj) + "\n").encode())

    held = 0
    slow = False  # the request after a hold: answered after think_s
    while True:
        line = new_line()
        while line is None:  # it is coming: make room if the pipe is full
            line = new_line(0.02)
            if line is None and kept:
                drop_oldest()
            elif line is None and pipe_full():  # a request longer than the pipe (acts grow with the game)
                fcntl.fcntl(0, F_SETPIPE_SZ, 1 << 20)
        kept.append(len(line))
        msg = json.loads(line)
        kind, rid = msg["type"], msg["id"]
        if kind == "act":
            if slow:
                time.sleep(think_s)
                slow = False
            say({"type": "action", "re": rid, **msg["legal"][0]})
            if held < hold_acts:
                start = time.monotonic()
                while time.monotonic() - start < hold_s:
                    if new_line(0) is not None:  # it got in after all: its clock runs
                        break
                else:
                    held += 1
                    slow = True
                    report("held_s", f"{time.monotonic() - start:.3f}")
        elif kind == "hello":
            say({"type": "hello", "re": rid, "version": 1, "name": "hostile-tee", "bot_version": "1"})
        elif kind == "game_start":
            held = 0
            say({"type": "ready", "re": rid})
        elif kind == "game_over":
            say({"type": "ack", "re": rid})
        else:
            return


def flood_stderr() -> None:
    line = ("noise " * 30 + "\n").encode()
    while True:
        os.write(2, line)


def bomb() -> None:
    """Every process forks as fast as the system lets it; refused forks are retried
    after a short sleep (so the bomb holds the process cap, without spinning the CPU).
    The bot itself goes on playing."""
    if os.fork() != 0:
        return
    os.setsid()
    refused = 0
    while True:
        try:
            os.fork()
        except OSError:
            refused += 1
            time.sleep(0.05)


def double_fork() -> None:
    """A grandchild in a new session, orphaned, holding the bot's pipes open, that lives on."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            sleep_forever()
        os._exit(0)
    os.wait()


def write(path: str) -> int:
    with open(path, "w") as f:
        return f.write("planted")


def read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(64)


def huge_file() -> None:
    tmp = os.environ.get("TMPDIR", "/tmp")
    attempt("write_own_folder", lambda: write("planted.txt"))
    for target in ARGS:  # places outside the sandbox
        attempt(f"write {target}", lambda t=target: write(t))
    chunk = b"\0" * (1024 * 1024)
    written = 0
    try:
        with open(os.path.join(tmp, "big.bin"), "wb") as f:
            while written < 4096 * len(chunk):
                f.write(chunk)
                f.flush()
                written += len(chunk)
    except OSError as exc:
        report("huge_file", f"stopped after {written // len(chunk)} MB: {exc}")


def many_fds() -> None:
    fds = []
    try:
        for _ in range(100_000):
            fds.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as exc:
        report("many_fds", f"{len(fds)} opened, then {exc.strerror}")
    for fd in fds:
        os.close(fd)


def network() -> None:
    port = int(ARGS[0]) if ARGS else 9
    attempt("tcp", lambda: socket.create_connection(("127.0.0.1", port), timeout=2).close())
    attempt("dns", lambda: socket.getaddrinfo("example.com", 80))


def snoop() -> None:
    for path in ARGS:
        if os.path.isdir(path):
            attempt(f"read {path}", lambda p=path: os.listdir(p))
        else:
            attempt(f"read {path}", lambda p=path: read(p))
    attempt("list_parent", lambda: os.listdir(".."))


def kill_parent() -> None:
    attempt("kill_parent", lambda: os.kill(os.getppid(), signal.SIGKILL))
    attempt("kill_all", lambda: os.kill(-1, signal.SIGKILL))


def main() -> None:
    if BEHAVIOUR == "tee_hold":
        hold_s, hold_acts, think_s = [*ARGS, *["10", "3", "0"][len(ARGS) :]][:3]  # defaults for the missing
        tee_hold(float(hold_s), int(hold_acts), float(think_s))
        return
    acts = 0
    triggered = False
    if TRIGGER == 0:
        triggered = True
        misbehave()
    for line in sys.stdin:
        msg = json.loads(line)
        kind, rid = msg["type"], msg["id"]
        if kind == "act":
            acts += 1
            if acts == TRIGGER and not triggered:
                triggered = True
                misbehave()
            if triggered and BEHAVIOUR == "cpu_spin":
                time.sleep(0.08)  # a slow (legal) player: the game lasts while the child spins
            play = msg["legal"][0]
            reply = {"type": "action", "re": rid, "cards": play["cards"]}
            if play.get("dummy_card") is not None:
                reply["dummy_card"] = play["dummy_card"]
            if triggered and (BEHAVIOUR != "slow_once" or acts == TRIGGER):
                answer(msg, reply)
            else:
                send(reply)
        elif kind == "hello":
            send({"type": "hello", "re": rid, "version": 1, "name": f"hostile-{BEHAVIOUR}", "bot_version": "1"})
        elif kind == "game_start":
            send({"type": "ready", "re": rid})
        elif kind == "game_over":
            send({"type": "ack", "re": rid})
        elif kind == "shutdown":
            if triggered and BEHAVIOUR == "ignore_term":
                sleep_forever()  # ignores the request and SIGTERM: only SIGKILL ends it
            break


if __name__ == "__main__":
    main()
