"""The strict sandbox's system call filter (arena/bots/_seccomp.py, installed by bwrap from
arena/bots/strict.py for every bot and every build):

- the kernel's key rings are out of reach: a bot can neither make a key nor read one the
  host made readable by everyone, so two bots of a game cannot pass a hand through them,
  nor a bot leave one for a later game or run;
- no nested user namespace (``unshare -U``, ``unshare(2)``, ``clone(2)`` with
  ``CLONE_NEWUSER``; ``clone3`` is ENOSYS so that libc falls back to ``clone``), no
  ptrace of its own child, and the rest of the refused list gives its errno, while
  threads, fork, subprocesses and every example bot still work;
- files every sandbox sees carry nothing between sandboxes: file locks (flock, POSIX and
  OFD byte-range locks, leases) fail with ENOLCK, so neither two processes of one bot (the
  twin games of a duplicate set) nor two bots of a game pass bits through them; inotify
  and fanotify are ENOSYS, dnotify (F_NOTIFY) EINVAL; fcntl's other commands work, and
  SQLite in /tmp works with ``?nolock=1``; a build step keeps its locks, not the rest;
- a socket family outside the network namespace (AF_VSOCK above all) is EAFNOSUPPORT,
  while AF_UNIX pairs, TCP on the sandbox's loopback, AF_INET6 and AF_NETLINK work;
- a system call through a foreign ABI (x32, i386) kills the bot, and the arena says why;
- the filter reaches bwrap through a pipe that neither stays open in the arena nor shows
  in the bot; a machine whose numbers the filter does not know has no strict sandbox.

Every test of behaviour runs real programs in real sandboxes (bwrap, setpriv).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import secrets
import shutil
import struct
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
import trio

from arena.bots import BotCrashed, BotSpec, _seccomp, open_bot
from arena.bots.build import run_build
from arena.bots.manifest import find_bot
from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import Level, SandboxSettings
from arena.bots.strict import _probe_strict, strict_support
from arena.engine import GameConfig
from arena.game.players import DEFAULT_TIME, open_pool
from arena.game.referee import play_game

ROOT = Path(__file__).resolve().parents[2]
STRICT = strict_support()
needs_strict = pytest.mark.skipif(not STRICT.ok, reason=f"strict sandbox unavailable: {STRICT.missing}")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the bots of a root arena share the host's key rings")
x86_64 = pytest.mark.skipif(os.uname().machine != "x86_64", reason="the x32 and i386 ABIs are x86_64's")
FAST = replace(DEFAULT_TIME, turn_ms=500, bank_ms=1000, hello_ms=5000)

# The host's own system call numbers, for the test's ctypes calls.
NR = _seccomp.host_arch().numbers if os.uname().machine in _seccomp.ARCHES else {}
KEY_SPEC_USER_KEYRING = -4
KEYCTL_SETPERM, KEYCTL_READ, KEYCTL_INVALIDATE = 5, 11, 21
ALL_RIGHTS_FOR_ALL = 0x3F3F3F3F

# Shared by the probe programs: a raw system call giving (result, errno name or None), and
# the one JSON line they report on stdout.
PRELUDE = textwrap.dedent(f"""\
    import ctypes, errno, json, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    NR = {NR!r}
    def sc(name, *args):
        ctypes.set_errno(0)
        r = libc.syscall(ctypes.c_long(NR[name]), *[a if isinstance(a, (bytes, ctypes.Array)) else ctypes.c_long(a) for a in args])
        return [r, errno.errorcode.get(ctypes.get_errno()) if r == -1 else None]
    def report(**out):
        sys.stdout.write(json.dumps(out) + "\\n"); sys.stdout.flush()
    """)


def probe_folder(folder: Path, body: str) -> Path:
    """A bot folder whose program is ``body`` after :data:`PRELUDE`."""
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(f'name = "{folder.name}"\nrun = ["{{python}}", "probe.py"]\n')
    (folder / "probe.py").write_text(PRELUDE + textwrap.dedent(body))
    return folder


def strict_spec(folder: Path, tmp_path: Path, **env: str) -> BotSpec:
    spec = prepare_bot(find_bot(folder), tmp_path / "build", SandboxSettings(Level.STRICT))
    assert spec.sandbox is not None and spec.sandbox.level is Level.STRICT
    return replace(spec, env={**(spec.env or {}), **env}) if env else spec


async def _first_line(spec: BotSpec) -> bytes:
    async with open_bot(spec) as bot:
        with trio.fail_after(30):
            return await bot.receive_line()


def run_probe(tmp_path: Path, body: str, name: str = "probe", **env: str) -> dict:
    """Run ``body`` (after :data:`PRELUDE`) as a strict bot; the JSON line it reports."""
    spec = strict_spec(probe_folder(tmp_path / name, body), tmp_path, **env)
    return json.loads(trio.run(_first_line, spec))


# -- the key rings ------------------------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)


def _syscall(name: str, *args: object) -> int:
    c_args = [a if isinstance(a, bytes) else ctypes.c_long(a) for a in args]  # type: ignore[arg-type]
    return _libc.syscall(ctypes.c_long(NR[name]), *c_args)


@pytest.fixture
def host_key() -> tuple[int, str, bytes]:
    """A "user" key made by the test (the host, root) in its user key ring, with every
    right for everyone: what a bot of an earlier game could have left. Invalidated after."""
    description = f"sg-test.{secrets.token_hex(6)}"
    payload = b"seat 1 hand: sashimi, pudding, salmon_nigiri"
    key = _syscall("add_key", b"user", description.encode(), payload, len(payload), KEY_SPEC_USER_KEYRING)
    if key < 0:
        pytest.skip(f"this kernel makes no keys (add_key: errno {ctypes.get_errno()})")
    try:
        assert _syscall("keyctl", KEYCTL_SETPERM, key, ALL_RIGHTS_FOR_ALL) == 0, ctypes.get_errno()
        yield key, description, payload
    finally:
        _syscall("keyctl", KEYCTL_INVALIDATE, key)


def _read_as_another_user(key: int) -> bytes:
    """What a process of another user id (forked here, no sandbox) reads of ``key``."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # only system calls until _exit
        try:
            os.close(r)
            os.setgroups([])
            os.setresgid(1_999_999_999, 1_999_999_999, 1_999_999_999)
            os.setresuid(1_999_999_999, 1_999_999_999, 1_999_999_999)
            buf = ctypes.create_string_buffer(4096)
            n = _libc.syscall(ctypes.c_long(NR["keyctl"]), ctypes.c_long(KEYCTL_READ), ctypes.c_long(key), buf,
                              ctypes.c_long(4096))
            os.write(w, buf.raw[:n] if n > 0 else b"")
        finally:
            os._exit(0)
    os.close(w)
    try:
        with os.fdopen(r, "rb") as f:
            return f.read()
    finally:
        os.waitpid(pid, 0)


READ_KEY = """\
    key = int(os.environ["KEY_ID"])
    buf = ctypes.create_string_buffer(4096)
    read = sc("keyctl", KEYCTL_READ, key, buf, 4096)
    try:
        with open("/proc/keys") as f:
            listing = f.read()
    except OSError as exc:
        listing = f"unreadable: {exc.strerror}"
    mine = sc("add_key", b"user", b"sg.stash", b"hand", 4, KEY_SPEC_USER_KEYRING)
    asked = sc("request_key", b"user", os.environ["KEY_NAME"].encode(), 0, 0)
    report(uid=os.getuid(), read=read, data=buf.raw[:max(read[0], 0)].decode(), listing=listing, add_key=mine,
           request_key=asked)
"""
KEY_CONSTANTS = f"KEYCTL_READ, KEY_SPEC_USER_KEYRING = {KEYCTL_READ}, {KEY_SPEC_USER_KEYRING}\n"


@needs_strict
@needs_root
def test_a_strict_bot_can_neither_make_a_key_nor_read_one_the_host_left_readable(
    host_key: tuple[int, str, bytes], tmp_path: Path
) -> None:
    key, description, payload = host_key
    # Without the filter, any other user id reads it: the hole the filter closes.
    assert _read_as_another_user(key) == payload

    out = run_probe(tmp_path, KEY_CONSTANTS + textwrap.dedent(READ_KEY), KEY_ID=str(key), KEY_NAME=description)
    assert out["uid"] != 0
    assert out["read"] == [-1, "EPERM"] and out["data"] == ""
    assert out["add_key"] == [-1, "EPERM"] and out["request_key"] == [-1, "EPERM"]
    assert description not in out["listing"] and out["listing"].startswith("unreadable")


COLLUDER = """\
    # Publishes its hand in a kernel key readable by all, waits, then reads its partner's.
    import time
    def publish(tag, payload):
        k = sc("add_key", b"user", tag.encode(), payload, len(payload), -4)
        if k[0] < 0:
            print("add_key refused", k[1], file=sys.stderr, flush=True)
            return
        sc("keyctl", 5, k[0], 0x3F3F3F3F)
    def peek(prefix):
        out = {}
        try:
            lines = open("/proc/keys").read().splitlines()
        except OSError as exc:
            print("/proc/keys:", exc.strerror, file=sys.stderr, flush=True)
            lines = []
        for line in lines:
            f = line.split()
            if len(f) >= 9 and f[7] == "user" and f[8].startswith(prefix):
                buf = ctypes.create_string_buffer(4096)
                n = sc("keyctl", 11, int(f[0], 16), buf, 4096)[0]
                if n > 0:
                    out[f[8].rstrip(":")] = json.loads(buf.raw[:n])
        return out
    def send(m):
        sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
    me = gid = None
    for line in sys.stdin:
        msg = json.loads(line)
        kind, i = msg["type"], msg.get("id")
        if kind == "hello":
            send({"type": "hello", "re": i, "version": 1, "name": "team"})
        elif kind == "game_start":
            me, gid = msg["seat"], msg["game_id"]
            send({"type": "ready", "re": i})
        elif kind == "act":
            hand = [c["card"] for c in msg["hand"]]
            publish(f"sg.{gid}.{msg['round']}.{msg['turn']}.{me}", json.dumps(hand).encode())
            publish(f"deal.{msg['round']}.{msg['turn']}.{me}", json.dumps(hand).encode())  # for a later game
            time.sleep(0.05)
            theirs = {k: v for k, v in peek(f"sg.{gid}.{msg['round']}.{msg['turn']}.").items() if not k.endswith(f".{me}")}
            older = peek("deal.")
            print("PARTNER", json.dumps(theirs), "EARLIER", json.dumps(older), file=sys.stderr, flush=True)
            send({"type": "action", "re": i, **msg["legal"][0]})
        elif kind == "game_over":
            send({"type": "ack", "re": i})
        else:
            break
"""


def _play(specs: list[BotSpec], seed: int):  # noqa: ANN202
    async def main():  # noqa: ANN202
        async with open_pool() as pool:
            players = [pool.player(s) for s in specs]
            return await play_game(players, GameConfig(len(specs)), seed=seed, time_settings=FAST)

    return trio.run(main)


@needs_strict
def test_two_colluding_bots_cannot_pass_a_hand_through_the_key_rings_in_a_game_or_to_a_later_one(
    tmp_path: Path,
) -> None:
    specs = [strict_spec(probe_folder(tmp_path / name, COLLUDER), tmp_path) for name in ("team_a", "team_b")]
    for seed in (5, 6):  # two games, fresh processes: nothing of the first reaches the second
        record = _play(specs, seed)
        assert record.status == "complete", record.void_reason
        assert record.replay.faults == [], [(f.seat, f.kind, f.message) for f in record.replay.faults]
        for seat, err in enumerate(record.replay.stderr):
            seen = re.findall(r"^PARTNER (.*) EARLIER (.*)$", err, re.M)
            assert seen, f"seat {seat} did not play: {err[-500:]}"
            assert all(json.loads(a) == {} and json.loads(b) == {} for a, b in seen), err[-2000:]
            assert "add_key refused EPERM" in err


# -- namespaces, other processes, the rest of the list ----------------------------------------

NAMESPACES = f"""\
    import subprocess, threading
    CLONE_NEWUSER, CLONE_NEWNS, CLONE_FILES, SIGCHLD = {_seccomp.CLONE_NEWUSER}, {_seccomp.CLONE_NEWNS}, 0x400, 17
    out = {{}}
    tool = subprocess.run(["unshare", "-U", "-r", "id", "-u"], capture_output=True, text=True)
    out["unshare -U -r"] = [tool.returncode, tool.stdout.strip(), tool.stderr.strip()]
    out["unshare(NEWUSER)"] = sc("unshare", CLONE_NEWUSER)
    out["unshare(NEWNS)"] = sc("unshare", CLONE_NEWNS)
    child = sc("clone", CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)
    if child[0] == 0:
        os._exit(0)  # a child made in spite of the filter: the assertion below fails
    out["clone(NEWUSER)"] = child
    out["clone3"] = sc("clone3", 0, 0)
    out["setns"] = sc("setns", 0, 0)
    # What bots do need still works: a thread, fork, a subprocess, unshare of no namespace.
    box = []
    t = threading.Thread(target=box.append, args=(1,)); t.start(); t.join()
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    out["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    out["thread"] = box
    out["subprocess"] = subprocess.run(["true"]).returncode
    out["unshare(FILES)"] = sc("unshare", CLONE_FILES)
    report(**out)
"""


@needs_strict
def test_a_strict_bot_cannot_make_a_user_namespace_or_any_other(tmp_path: Path) -> None:
    out = run_probe(tmp_path, NAMESPACES)
    code, stdout, stderr = out["unshare -U -r"]
    assert code != 0 and stdout == "" and "Operation not permitted" in stderr, out["unshare -U -r"]
    assert out["unshare(NEWUSER)"] == [-1, "EPERM"]
    assert out["unshare(NEWNS)"] == [-1, "EPERM"]
    assert out["clone(NEWUSER)"] == [-1, "EPERM"]
    assert out["clone3"] == [-1, "ENOSYS"]  # so that libc falls back to clone, whose flags are checked
    assert out["setns"] == [-1, "EPERM"]
    assert (out["fork"], out["thread"], out["subprocess"], out["unshare(FILES)"]) == (7, [1], 0, [0, None])


TRACER = """\
    import signal, time
    PTRACE_ATTACH, PTRACE_TRACEME = 16, 0
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    buf = ctypes.create_string_buffer(8)
    local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)
    remote = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)
    out = {
        "ptrace(ATTACH child)": sc("ptrace", PTRACE_ATTACH, pid, 0, 0),
        "process_vm_readv(child)": sc("process_vm_readv", pid, ctypes.addressof(local), 1, ctypes.addressof(remote), 1, 0),
        "ptrace(TRACEME)": sc("ptrace", PTRACE_TRACEME, 0, 0, 0),
    }
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    report(**out)
"""


@needs_strict
def test_a_strict_bot_cannot_trace_or_read_its_own_child(tmp_path: Path) -> None:
    out = run_probe(tmp_path, TRACER)
    assert out == {
        "ptrace(ATTACH child)": [-1, "EPERM"], "process_vm_readv(child)": [-1, "EPERM"], "ptrace(TRACEME)": [-1, "EPERM"],
    }


# Calls safe to make with all-zero arguments whatever happens (no namespace, no fork).
_PLAIN = sorted(
    (name, refusal.errno)
    for refusal in _seccomp.REFUSED
    if not refusal.only
    for name in refusal.names
    if name in NR
)


@needs_strict
def test_every_refused_call_gives_its_errno_and_personality_only_the_harmless_personas(tmp_path: Path) -> None:
    body = f"""\
        out = {{name: sc(name, 0, 0, 0, 0, 0, 0) for name in {[n for n, _ in _PLAIN]!r}}}
        out["personality(query)"] = sc("personality", 0xFFFFFFFF)
        out["personality(PER_LINUX)"] = sc("personality", 0)
        out["personality(ADDR_NO_RANDOMIZE)"] = sc("personality", 0x0040000)
        out["personality(READ_IMPLIES_EXEC)"] = sc("personality", 0x0400000)
        report(**out)
    """
    out = run_probe(tmp_path, body)
    for name, number in _PLAIN:
        assert out[name] == [-1, errno.errorcode[number]], (name, out[name])
    assert out["personality(query)"][1] is None and out["personality(PER_LINUX)"][1] is None
    assert out["personality(ADDR_NO_RANDOMIZE)"] == [-1, "EPERM"]
    assert out["personality(READ_IMPLIES_EXEC)"] == [-1, "EPERM"]


@needs_strict
def test_a_build_step_runs_under_the_same_filter_but_may_lock_files(tmp_path: Path) -> None:
    # cargo and go lock their caches; a build ends before any game, so its locks reach none.
    folder = probe_folder(tmp_path / "builder", CHANNELS + f"""\
    me = os.path.abspath(__file__)
    report(add_key=sc("add_key", b"user", b"sg.build", b"x", 1, {KEY_SPEC_USER_KEYRING}),
           unshare=sc("unshare", {_seccomp.CLONE_NEWUSER}), vsock=sc("socket", 40, 1, 0),
           placed=publish(me, [1, 2]), channels=channels(me, os.path.dirname(me)))
""")
    sandbox = SandboxSettings(Level.STRICT).for_bot(folder)
    result = run_build("builder", sandbox, [sys.executable, "probe.py"], folder, {"PATH": "/usr/bin:/bin"}, 30)
    assert result.returncode == 0, result.output
    out = json.loads(result.output.decode().splitlines()[-1])
    channels = out.pop("channels")
    assert out == {"add_key": [-1, "EPERM"], "unshare": [-1, "EPERM"], "vsock": [-1, "EAFNOSUPPORT"],
                   "placed": ["ok", "ok"]}
    locks = ("F_SETLK", "F_SETLKW", "F_GETLK", "F_OFD_SETLKW", "lockf", "flock", "F_SETLEASE", "F_GETLEASE")
    assert {name: channels.pop(name) for name in locks} == {
        "F_SETLK": "ok", "F_SETLKW": "ok", "F_GETLK": "ok", "F_OFD_SETLKW": "ok", "lockf": "ok", "flock": "ok",
        "F_SETLEASE": ["ok", 0], "F_GETLEASE": ["ok", 0],
    }
    assert channels == {name: v for name, v in REFUSED_CHANNELS.items() if name not in locks}  # no watches


# -- file locks, inotify, socket families ----------------------------------------------------------

# Every cross-sandbox channel of the files every sandbox sees, tried on ``path``: locks
# (OFD, POSIX, flock, leases), inotify, fanotify, dnotify. Each entry: the errno name, or
# "ok". ``publish`` leaves OFD read locks at offsets 100 + k for k in it; ``peek`` lists the
# offsets in 100..163 where another process holds one (F_OFD_GETLK, as lockspy does).
CHANNELS = """\
    import fcntl, signal, struct
    signal.signal(signal.SIGIO, signal.SIG_IGN)  # where dnotify works, it signals every access
    F_RDLCK, F_WRLCK, F_UNLCK, SEEK_SET = 0, 1, 2, 0
    F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_GETLEASE, F_NOTIFY = 36, 37, 38, 1024, 1025, 1026
    def flock_struct(kind, start):
        return struct.pack("hhqqi4x", kind, SEEK_SET, start, 1, 0)
    def outcome(fn, *args):
        try:
            r = fn(*args)
        except OSError as exc:
            return errno.errorcode[exc.errno]
        return ["ok", r] if isinstance(r, int) else "ok"
    held = []
    def publish(path, bits):
        fd = os.open(path, os.O_RDONLY)
        held.append(fd)
        return [outcome(fcntl.fcntl, fd, F_OFD_SETLK, flock_struct(F_RDLCK, 100 + k)) for k in bits]
    def peek(path):
        fd = os.open(path, os.O_RDONLY)
        seen, calls = [], set()
        for k in range(64):
            try:
                got = fcntl.fcntl(fd, F_OFD_GETLK, flock_struct(F_WRLCK, 100 + k))
            except OSError as exc:
                calls.add(errno.errorcode[exc.errno])
                continue
            calls.add("ok")
            if struct.unpack("hhqqi4x", got)[0] != F_UNLCK:
                seen.append(k)
        os.close(fd)
        return seen, sorted(calls)
    def channels(path, directory):
        fd = os.open(path, os.O_RDONLY)
        out = {
            "F_SETLK": outcome(fcntl.fcntl, fd, fcntl.F_SETLK, flock_struct(F_RDLCK, 0)),
            "F_SETLKW": outcome(fcntl.fcntl, fd, fcntl.F_SETLKW, flock_struct(F_RDLCK, 0)),
            "F_GETLK": outcome(fcntl.fcntl, fd, fcntl.F_GETLK, flock_struct(F_WRLCK, 0)),
            "F_OFD_SETLKW": outcome(fcntl.fcntl, fd, F_OFD_SETLKW, flock_struct(F_RDLCK, 1)),
            "lockf": outcome(fcntl.lockf, fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, 2),
            "flock": outcome(fcntl.flock, fd, fcntl.LOCK_SH | fcntl.LOCK_NB),
            "F_SETLEASE": outcome(fcntl.fcntl, fd, F_SETLEASE, F_RDLCK),
            "F_GETLEASE": outcome(fcntl.fcntl, fd, F_GETLEASE),
            "inotify_init1": sc("inotify_init1", 0),
            "inotify_add_watch": sc("inotify_add_watch", 0, path.encode(), 0xFFF),
            "fanotify_init": sc("fanotify_init", 0x200, 0),  # FAN_REPORT_FID: open to the unprivileged
        }
        if "inotify_init" in NR:
            out["inotify_init"] = sc("inotify_init")
        dfd = os.open(directory, os.O_RDONLY)
        out["F_NOTIFY"] = outcome(fcntl.fcntl, dfd, F_NOTIFY, 0x80000001)  # DN_ACCESS | DN_MULTISHOT
        # What fcntl is for otherwise still works.
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        out["other commands"] = [
            flags & os.O_ACCMODE == os.O_RDONLY,
            fcntl.fcntl(fd, fcntl.F_SETFD, fcntl.FD_CLOEXEC) == 0,
            fcntl.fcntl(fd, fcntl.F_GETFD) == fcntl.FD_CLOEXEC,
            fcntl.fcntl(fd, fcntl.F_DUPFD, 10) >= 10,
            fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 20) >= 20,
        ]
        return out
"""

REFUSED_CHANNELS = {
    "F_SETLK": "ENOLCK", "F_SETLKW": "ENOLCK", "F_GETLK": "ENOLCK", "F_OFD_SETLKW": "ENOLCK", "lockf": "ENOLCK",
    "flock": "ENOLCK", "F_SETLEASE": "ENOLCK", "F_GETLEASE": "ENOLCK", "F_NOTIFY": "EINVAL",
    "inotify_init1": [-1, "ENOSYS"], "inotify_add_watch": [-1, "ENOSYS"], "fanotify_init": [-1, "ENOSYS"],
    "other commands": [True] * 5,
}
if "inotify_init" in NR:
    REFUSED_CHANNELS["inotify_init"] = [-1, "ENOSYS"]

# Process 1 leaves locks on its own (read-only) program; process 2, a fresh process of the
# same bot (the twin game of a duplicate set), reads them; both then try every channel.
LOCKSPY = """\
    me = os.path.abspath(__file__)
    placed = publish(me, [0, 3, 5]) if os.environ["ROLE"] == "first" else []
    seen, peeked = peek(me)
    report(placed=placed, seen=seen, peeked=peeked, channels=channels(me, os.path.dirname(me)))
    sys.stdin.readline()  # alive, locks held, until the test is done
"""


async def _two_processes(first: BotSpec, second: BotSpec) -> tuple[dict, dict]:
    async with open_bot(first) as a:
        with trio.fail_after(30):
            one = json.loads(await a.receive_line())
        async with open_bot(second) as b:
            with trio.fail_after(30):
                two = json.loads(await b.receive_line())
    return one, two


@needs_strict
def test_two_processes_of_one_bot_pass_nothing_through_file_locks_or_file_watches(tmp_path: Path) -> None:
    folder = probe_folder(tmp_path / "lockspy", CHANNELS + LOCKSPY)
    # Without the filter, the second process reads the first one's locks: the hole it closes.
    plain = [sys.executable, str(folder / "probe.py")]
    with subprocess.Popen(plain, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "ROLE": "first"}) as p:
        assert json.loads(p.stdout.readline())["placed"] == ["ok"] * 3
        second = subprocess.run(plain, input=b"\n", capture_output=True, env={**os.environ, "ROLE": "second"}, timeout=30)
        p.communicate(b"\n", timeout=30)
    assert json.loads(second.stdout)["seen"] == [0, 3, 5]

    spec = strict_spec(folder, tmp_path)
    one, two = trio.run(_two_processes, replace(spec, env={**spec.env, "ROLE": "first"}),
                        replace(spec, env={**spec.env, "ROLE": "second"}))
    assert one["placed"] == ["ENOLCK"] * 3
    assert two["seen"] == [] and two["peeked"] == ["ENOLCK"]
    assert one["channels"] == two["channels"] == REFUSED_CHANNELS, (one["channels"], two["channels"])


COLLUDING_LOCKER = """\
    # Publishes its hand size as OFD locks on /usr/bin/env (seat 0 at bits 0-5, seat 1 at
    # 32-37), then decodes its partner's; and tries the other channels on shared files.
    import time
    def send(m):
        sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
    SHARED = os.path.realpath("/usr/bin/env")
    me = None
    for line in sys.stdin:
        msg = json.loads(line)
        kind, i = msg["type"], msg.get("id")
        if kind == "hello":
            send({"type": "hello", "re": i, "version": 1, "name": "team"})
        elif kind == "game_start":
            me = msg["seat"]
            send({"type": "ready", "re": i})
        elif kind == "act":
            n = len(msg["hand"])
            placed = publish(SHARED, [32 * me + b for b in range(6) if n >> b & 1])
            time.sleep(0.05)
            seen, peeked = peek(SHARED)
            theirs = sum(1 << (k % 32) for k in seen if k // 32 != me)
            print("CALLS", json.dumps({"placed": sorted(set(placed)), "peeked": peeked}), "PARTNER", theirs,
                  file=sys.stderr, flush=True)
            if msg["round"] == 1 and msg["turn"] == 1:
                print("CHANNELS", json.dumps(channels(SHARED, "/usr/share")), file=sys.stderr, flush=True)
            send({"type": "action", "re": i, **msg["legal"][0]})
        elif kind == "game_over":
            send({"type": "ack", "re": i})
        else:
            break
"""


@needs_strict
def test_two_colluding_bots_of_a_game_pass_nothing_through_locks_on_a_shared_file(tmp_path: Path) -> None:
    specs = [strict_spec(probe_folder(tmp_path / name, CHANNELS + COLLUDING_LOCKER), tmp_path)
             for name in ("lock_a", "lock_b")]
    record = _play(specs, seed=11)
    assert record.status == "complete", record.void_reason
    assert record.replay.faults == [], [(f.seat, f.kind, f.message) for f in record.replay.faults]
    for seat, err in enumerate(record.replay.stderr):
        seen = re.findall(r"^CALLS (.*) PARTNER (\d+)$", err, re.M)
        assert seen, f"seat {seat} did not play: {err[-500:]}"
        for calls, partner in seen:
            assert int(partner) == 0, err[-2000:]
            assert json.loads(calls)["peeked"] == ["ENOLCK"] and set(json.loads(calls)["placed"]) <= {"ENOLCK"}
        (tried,) = re.findall(r"^CHANNELS (.*)$", err, re.M)
        assert json.loads(tried) == REFUSED_CHANNELS


INOTIFY_SPY = """\
    # inotify through libc, as the inotify repro does: a watch on shared files in /usr.
    libc.inotify_init1.restype = ctypes.c_int
    ctypes.set_errno(0)
    fd = libc.inotify_init1(0)
    init = [fd, errno.errorcode.get(ctypes.get_errno()) if fd < 0 else None]
    watch = None
    if fd >= 0:
        watch = libc.inotify_add_watch(fd, os.path.realpath("/usr/bin/env").encode(), 0x20)  # IN_OPEN
    report(init=init, watch=watch)
"""


@needs_strict
def test_a_strict_bot_cannot_watch_a_file_every_sandbox_sees(tmp_path: Path) -> None:
    out = run_probe(tmp_path, INOTIFY_SPY)
    assert out == {"init": [-1, "ENOSYS"], "watch": None}


SOCKETS = """\
    import socket, threading
    families = {"AF_VSOCK": 40, "AF_ALG": 38, "AF_PACKET": 17, "AF_KEY": 15, "AF_TIPC": 30, "AF_RDS": 21,
                "AF_BLUETOOTH": 31, "AF_CAN": 29, "AF_XDP": 44, "AF_APPLETALK": 5, "AF_MAX": 46, "-1": -1}
    SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET = 1, 2, 5
    refused = {}
    for name, family in families.items():
        refused[name] = [sc("socket", family, SOCK_STREAM, 0), sc("socket", family, SOCK_DGRAM, 0),
                         sc("socket", family, SOCK_SEQPACKET, 0)]
    pair = (ctypes.c_int * 2)()
    refused["socketpair(AF_VSOCK)"] = sc("socketpair", 40, SOCK_STREAM, 0, pair)
    try:
        socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
        refused["python AF_VSOCK"] = "made"
    except OSError as exc:
        refused["python AF_VSOCK"] = errno.errorcode[exc.errno]
    # What stays allowed: AF_UNIX pairs, TCP on the sandbox's own loopback, IPv6, netlink.
    a, b = socket.socketpair()
    a.sendall(b"pudding"); unix = b.recv(16).decode()
    server = socket.create_server(("127.0.0.1", 0))
    def serve():
        conn, _ = server.accept()
        with conn:
            conn.sendall(conn.recv(16).upper())
    t = threading.Thread(target=serve); t.start()
    with socket.create_connection(server.getsockname(), timeout=10) as c:
        c.sendall(b"tempura"); tcp = c.recv(16).decode()
    t.join()
    six = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); six.close()
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0); nl.bind((0, 0)); nl.close()
    report(refused=refused, unix=unix, tcp=tcp, ipv6_netlink=True)
"""


@needs_strict
def test_a_strict_bot_opens_no_socket_outside_its_network_namespace_but_unix_and_loopback_work(
    tmp_path: Path,
) -> None:
    out = run_probe(tmp_path, SOCKETS)
    refused = out.pop("refused")
    assert refused.pop("python AF_VSOCK") == "EAFNOSUPPORT"
    assert refused.pop("socketpair(AF_VSOCK)") == [-1, "EAFNOSUPPORT"]
    assert refused == {name: [[-1, "EAFNOSUPPORT"]] * 3 for name in refused}, refused
    assert out == {"unix": "pudding", "tcp": "TEMPURA", "ipv6_netlink": True}


SQLITE = """\
    import sqlite3
    out = {}
    for name, uri in (("default", "file:/tmp/a.db"), ("nolock", "file:/tmp/b.db?nolock=1")):
        try:
            db = sqlite3.connect(uri, uri=True)
            db.execute("create table t (x)"); db.execute("insert into t values (42)"); db.commit()
            out[name] = db.execute("select x from t").fetchall()
            db.close()
        except sqlite3.Error as exc:
            out[name] = str(exc)
    report(**out)
"""


@needs_strict
def test_sqlite_in_tmp_works_with_nolock(tmp_path: Path) -> None:
    out = run_probe(tmp_path, SQLITE)
    assert out["nolock"] == [[42]]
    assert out["default"] == "database is locked"  # what docs/sandbox.md says: without nolock, no lock


# -- foreign ABIs ----------------------------------------------------------------------------------

async def _crash_after_first_line(spec: BotSpec) -> tuple[bytes, str]:
    async with open_bot(spec) as bot:
        with trio.fail_after(30):
            first = await bot.receive_line()
            with pytest.raises(BotCrashed) as crash:
                await bot.receive_line()
            return first, str(crash.value)


@needs_strict
@x86_64
def test_an_x32_system_call_kills_the_bot_and_the_arena_says_why(tmp_path: Path) -> None:
    body = """\
        report(step="before")
        r = libc.syscall(ctypes.c_long(0x40000000 | 39))  # x32 getpid: unfiltered, ENOSYS where x32 is off
        report(step="after", result=r)
    """
    spec = strict_spec(probe_folder(tmp_path / "x32", body), tmp_path)
    first, message = trio.run(_crash_after_first_line, spec)
    assert json.loads(first) == {"step": "before"}
    assert "through an ABI the strict sandbox's filter does not allow" in message and "SIGSYS" in message, message


I386_C = r"""
#include <stdio.h>
int main(void) {
    printf("{\"step\": \"before\"}\n");
    fflush(stdout);
    long r;
    __asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory");  /* i386 getpid */
    printf("{\"step\": \"after\", \"result\": %ld}\n", r);
    return 0;
}
"""


@needs_strict
@x86_64
@pytest.mark.skipif(shutil.which("cc") is None, reason="a C compiler (cc) is needed")
def test_an_i386_system_call_kills_the_bot(tmp_path: Path) -> None:
    folder = tmp_path / "i386"
    folder.mkdir()
    (folder / "main.c").write_text(I386_C)
    subprocess.run(["cc", "-O0", "-o", str(folder / "bot"), str(folder / "main.c")], check=True, timeout=60)
    (folder / "bot.toml").write_text('name = "i386"\nrun = ["./bot"]\n')
    unfiltered = subprocess.run([str(folder / "bot")], capture_output=True, text=True, timeout=10)
    if '"after"' not in unfiltered.stdout:
        pytest.skip("this kernel runs no i386 system calls at all")
    first, message = trio.run(_crash_after_first_line, strict_spec(folder, tmp_path))
    assert json.loads(first) == {"step": "before"}
    assert "through an ABI the strict sandbox's filter does not allow" in message and "SIGSYS" in message, message


# -- how the filter is handed over -------------------------------------------------------------------

def _open_fds() -> set[int]:
    return {int(n) for n in os.listdir("/proc/self/fd")}


@needs_strict
def test_the_filters_pipe_is_closed_in_the_arena_and_absent_from_the_bot(tmp_path: Path) -> None:
    body = """\
        fds = sorted(int(n) for n in os.listdir("/proc/self/fd"))
        report(fds=fds, status=[l for l in open("/proc/self/status") if l.startswith(("Seccomp:", "NoNewPrivs:"))])
    """
    spec = strict_spec(probe_folder(tmp_path / "fds", body), tmp_path)
    trio.run(_first_line, spec)  # the first start probes and caches what it needs
    before = _open_fds()
    out = json.loads(trio.run(_first_line, spec))
    assert _open_fds() == before
    assert out["fds"] == [0, 1, 2, 3]  # 3: the listing's own
    assert "Seccomp:\t2\n" in out["status"] and "NoNewPrivs:\t1\n" in out["status"]


def test_a_machine_the_filter_has_no_table_for_has_no_strict_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.uname()
    fake = os.uname_result((real.sysname, real.nodename, real.release, real.version, "riscv64"))
    _seccomp.program.cache_clear()
    monkeypatch.setattr(_seccomp.os, "uname", lambda: fake)
    try:
        with pytest.raises(_seccomp.UnsupportedMachine, match="x86_64 and aarch64 only, not riscv64"):
            _seccomp.program()
        if sys.platform.startswith("linux") and shutil.which("bwrap"):
            support = _probe_strict()
            assert not support.ok and "not riscv64" in support.missing
    finally:
        monkeypatch.undo()
        _seccomp.program.cache_clear()


# -- the program's bytes -----------------------------------------------------------------------------

def _header_numbers(path: Path, prefixes: tuple[str, ...]) -> dict[str, int]:
    numbers = {}
    for line in path.read_text().splitlines():
        m = re.match(r"#define __NR(?:3264)?_(\w+)\s+(\d+)\s*$", line)
        if m and any(line.startswith(p) for p in prefixes):
            numbers[m.group(1)] = int(m.group(2))
    return numbers


@pytest.mark.parametrize(("arch", "header"), [
    ("x86_64", ["/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"]),
    ("aarch64", ["/usr/include/asm-generic/unistd.h"]),
])
def test_the_tables_numbers_are_the_kernel_headers(arch: str, header: list[str]) -> None:
    found = next((Path(h) for h in header if Path(h).exists()), None)
    if found is None:
        pytest.skip(f"no kernel headers for {arch} here")
    numbers = _header_numbers(found, ("#define __NR",))
    table = _seccomp.ARCHES[arch].numbers
    every_name = {n for r in _seccomp.REFUSED for n in r.names}
    assert set(table) <= every_name
    checked = {name: nr for name, nr in table.items() if name in numbers}
    assert checked == {name: numbers[name] for name in checked}
    assert len(checked) >= len(table) - 2  # only calls newer than the headers go unchecked (open_tree_attr)


def test_the_program_checks_the_arch_first_and_jumps_only_forward_within_it() -> None:
    for arch in _seccomp.ARCHES.values():
        prog = _seccomp.program_for(arch)
        insns = [_seccomp._INSN.unpack_from(prog, i) for i in range(0, len(prog), 8)]
        assert len(prog) % 8 == 0 and len(insns) < 4096
        assert insns[0] == (0x20, 0, 0, 4)  # A = seccomp_data.arch
        assert insns[1][0] == 0x15 and insns[1][3] == arch.audit  # the native arch, else...
        kill = 1 + 1 + insns[1][2]
        assert insns[kill] == (0x06, 0, 0, _seccomp.RET_KILL_PROCESS)  # ...the process dies
        for pc, (code, jt, jf, _k) in enumerate(insns):
            if code & 0x07 == 0x05:  # a jump: both targets inside the program
                assert pc + 1 + max(jt, jf) < len(insns)
        assert insns[-1][0] == 0x06  # the program ends in a return


def _run_filter(prog: bytes, arch: _seccomp.Arch, nr: int, *args: int) -> int:
    """What the program returns for system call ``nr`` with ``args`` (a classic BPF
    interpreter for the four instructions the filter uses)."""
    data = struct.pack("=iIQ6Q", nr, arch.audit, 0, *args, *[0] * (6 - len(args)))
    insns = [_seccomp._INSN.unpack_from(prog, i) for i in range(0, len(prog), 8)]
    pc, a = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:
            a = struct.unpack_from("=I", data, k)[0]
        elif code in (0x15, 0x45):
            pc += jt if (a == k if code == 0x15 else a & k) else jf
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"instruction {pc}: unexpected code {code:#x}")
        pc += 1


@pytest.mark.parametrize("arch", sorted(_seccomp.ARCHES))
def test_the_program_refuses_locks_at_game_time_only_and_socket_families_outside_the_allow_list(arch: str) -> None:
    table = _seccomp.ARCHES[arch]
    game, build = _seccomp.program_for(table), _seccomp.program_for(table, build=True)
    allow, nr = _seccomp.RET_ALLOW, table.numbers

    def refused(e: int) -> int:
        return _seccomp.RET_ERRNO | e

    locks = (5, 6, 7, 36, 37, 38, 1024, 1025)
    for cmd in range(0, 1100):
        expected = refused(errno.ENOLCK) if cmd in locks else refused(errno.EINVAL) if cmd == 1026 else allow
        assert _run_filter(game, table, nr["fcntl"], 3, cmd) == expected, cmd
        assert _run_filter(build, table, nr["fcntl"], 3, cmd) == (refused(errno.EINVAL) if cmd == 1026 else allow)
    assert _run_filter(game, table, nr["fcntl"], 3, (1 << 32) | 6) == refused(errno.ENOLCK)  # cmd is 32-bit
    assert _run_filter(game, table, nr["flock"], 3, 2) == refused(errno.ENOLCK)
    assert _run_filter(build, table, nr["flock"], 3, 2) == allow
    for name in ("inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark"):
        if name in nr:
            assert _run_filter(game, table, nr[name]) == _run_filter(build, table, nr[name]) == refused(errno.ENOSYS)
    for family in [*range(0, 64), 0xFFFFFFFF]:
        expected = allow if family in (1, 2, 10, 16) else refused(errno.EAFNOSUPPORT)
        for prog in (game, build):
            assert _run_filter(prog, table, nr["socket"], family, 1, 0) == expected, family
            assert _run_filter(prog, table, nr["socketpair"], family, 1, 0, 0) == expected, family
    # The rest of the list is unchanged, for builds too; other calls are allowed.
    for prog in (game, build):
        assert _run_filter(prog, table, nr["keyctl"], 11) == refused(errno.EPERM)
        assert _run_filter(prog, table, nr["clone"], _seccomp.CLONE_NEWUSER) == refused(errno.EPERM)
        assert _run_filter(prog, table, nr["clone"], 0x11) == allow
        assert _run_filter(prog, table, 0) == allow  # read on x86_64, io_setup on aarch64
    assert len(build) < len(game) < 128 * 8  # small: a few instructions per refused call


def test_the_assembler_refuses_a_jump_it_cannot_encode() -> None:
    with pytest.raises(ValueError, match="unknown label"):
        _seccomp.assemble([(0x15, "nowhere", 0, 1)])
    with pytest.raises(ValueError, match="do not fit"):
        _seccomp.assemble(["back", (0x06, 0, 0, 0), (0x15, "back", 0, 1)])
    with pytest.raises(ValueError, match="do not fit"):
        _seccomp.assemble([(0x15, "far", 0, 1), *[(0x06, 0, 0, 0)] * 300, "far", (0x06, 0, 0, 0)])


# -- every example bot still plays ----------------------------------------------------------------

@needs_strict
@pytest.mark.skipif(shutil.which("node") is None or shutil.which("cc") is None, reason="node and cc are needed")
def test_every_example_bot_plays_a_short_run_under_the_filter(tmp_path: Path) -> None:
    results = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "run", "--bots", str(ROOT / "example_bots"), "--results", str(results),
         "--games", "6", "--players", "2", "--sandbox", "strict", "--no-report"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    board = json.loads((results / "leaderboard.json").read_text())
    names = {p.name for p in (ROOT / "example_bots").iterdir() if (p / "bot.toml").exists()}
    assert not board["skipped"], board["skipped"]
    played = {row["bot"]: row for row in board["rows"]}
    assert set(played) == names
    assert all(row["games"] >= 1 and not row["faults"] for row in played.values()), played

