"""One writer per results folder: :func:`results_lock`, an OS lock on ``arena.lock``
(released by the OS when its holder dies), with a note of its holder for a command that
waits; a store writer process given its fd holds it too."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from arena.store.errors import READ_ONLY_ERRNOS, StoreError, check_parent, os_error_text

LOCK_NAME = "arena.lock"


#: What a waiting command reads of the holder's note at most.
_NOTE_BYTES = 4096


@dataclass(slots=True)
class ResultsLock:
    """The held lock of a results folder. ``fd`` is the open lock file: a child process
    given it (``pass_fds``) holds the lock too, until it exits (flock belongs to the open
    file, which the child shares)."""

    path: Path
    fd: int
    depth: int = 1


_held: dict[tuple[Path, int], ResultsLock] = {}
_held_guard = threading.Lock()


def _holder(fd: int) -> str:
    """Who holds the lock, from the note its holder wrote: command, pid, since when."""
    try:
        note = json.loads(os.pread(fd, _NOTE_BYTES, 0) or b"{}")
        pid, command, started = int(note["pid"]), str(note["command"])[:200], float(note["started"])
    except (OSError, ValueError, TypeError, KeyError):
        return "another arena command (it has not said which yet)"
    since = time.strftime("%H:%M:%S", time.localtime(started))
    if not _pid_alive(pid):
        return f"{command} (pid {pid}, ended; its store writer is still recording its last games) since {since}"
    return f"{command} (pid {pid}) since {since}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def results_lock(root: Path, command: str, *, on_wait: Callable[[str], None] | None = None) -> Iterator[ResultsLock]:
    """Hold the one-writer lock of results folder ``root`` (made if missing): an exclusive
    ``flock`` on ``root/arena.lock``. If another process holds it, ``on_wait`` is told who
    (default: a logged warning) and this waits until it is released (Ctrl-C stops the
    wait: KeyboardInterrupt). The OS releases it when its holder ends, killed or not.
    Re-entrant within a thread: an inner ``results_lock`` of the same folder returns at
    once (another thread of the process waits, as another process would). The file stays (removing a lock file races with its next taker), with a note
    of its last holder (pid, command, start time) for the waiting ones; a store writer
    that outlives its arena keeps the lock, and the note then says so."""
    if root.exists() and not root.is_dir():
        raise StoreError(f"{root}: results location is a file, not a folder")
    path = root / LOCK_NAME
    check_parent(root)
    try:
        root.mkdir(exist_ok=True)
        key = (path.resolve(), threading.get_ident())  # (another thread waits like another process)
    except OSError as exc:
        raise StoreError(f"{root}: cannot make the results folder: {os_error_text(exc)}") from None
    with _held_guard:
        held = _held.get(key)
        if held is not None:
            held.depth += 1
    if held is not None:
        try:
            yield held
        finally:
            with _held_guard:
                held.depth -= 1
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno in READ_ONLY_ERRNOS:
            raise StoreError(
                f"{root}: the results folder is read-only ({exc.strerror or exc}): {command} writes it; "
                "give a writable results folder (`arena leaderboard`, `games`, `report --out DIR` and `verify` "
                "read this one as it is)"
            ) from None
        raise StoreError(f"{path}: cannot open the results folder's lock: {os_error_text(exc)}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            message = f"waiting for {root}: {_holder(fd)} writes it; Ctrl-C to stop"
            if on_wait is None:
                import logging

                logging.getLogger(__name__).warning("%s", message)
            else:
                on_wait(message)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            raise StoreError(f"{path}: cannot lock the results folder: {exc.strerror or exc}") from None
        note = json.dumps({"pid": os.getpid(), "command": command, "started": time.time()}).encode()
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, note, 0)
        except OSError as exc:
            raise StoreError(f"{root}: cannot write in the results folder: {os_error_text(exc)}") from None
        lock = ResultsLock(path, fd)
        with _held_guard:
            _held[key] = lock
        try:
            yield lock
        finally:
            with _held_guard:
                del _held[key]
    finally:
        os.close(fd)
