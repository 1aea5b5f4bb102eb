"""Opening a results folder's database: the checks before anything is written (an SQLite
file, an arena's, undamaged), WAL mode, the schema brought up to date, and the read-only
opening of the commands that only read (a read-only folder or mount read as it is); also
a store's deal key read without opening it for writing.

SQLite's integrity check reads every page (seconds at 100,000 games), so it is skipped when
the file is exactly as an arena left it after closing it cleanly: that arena writes, last,
a seal beside the database (:data:`SEAL_NAME`: the file's size, inode, modification and
change times; see :func:`_seal`), and an open whose file still matches the seal, with no
``-wal`` file holding changes, skips the check. A file changed by anyone (a byte written, a
truncation, a copy put in its place, a run killed with changes in its ``-wal``) no longer
matches, and is checked.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from arena.store.database import DB_NAME, Store, parse_deal_key
from arena.store.errors import (
    CANTOPEN,
    READONLY,
    StoreError,
    check_parent,
    database_error,
    folder_writable,
    os_error_text,
    rebuild_hint,
)
from arena.store.schema import SCHEMA_VERSION, check_integrity, migrate_schema, read_schema_version


def read_deal_key(root: Path) -> bytes | None:
    """The deal key of the store in folder ``root`` if there is one, read without changing
    anything (None: no store there, or it has no key yet)."""
    path = root / DB_NAME
    if not path.is_file():
        return None
    try:
        conn = _connect_read_only(path)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'deal_key'").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: cannot read its deal key: {exc}") from None
    return None if row is None else parse_deal_key(row[0], f"{path}: meta deal_key")


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that reads the database at ``path`` and never writes it, in a
    read-only folder too. A WAL database's readers share a ``-shm`` file beside it; where
    that file can be neither found nor made (a read-only folder or mount), the database
    is read as an unchanging file (``immutable=1``), which is all of it unless a ``-wal``
    file beside it still holds changes (a writer that was killed): that is said then."""
    uri = path.resolve().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30.0, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
        if code not in (CANTOPEN, READONLY) or folder_writable(path.parent):
            raise
    wal = path.with_name(path.name + "-wal")
    with contextlib.suppress(OSError):
        if wal.stat().st_size > 0:
            import logging

            logging.getLogger(__name__).warning(
                "%s: holds changes a writer did not fold into %s before it ended, and this read-only folder has no "
                "-shm file to read them with: the newest games may be missing here (open the folder once where it "
                "is writable, e.g. `arena leaderboard` there, to fold them in)", wal, path.name,
            )
    return sqlite3.connect(
        f"{uri}?mode=ro&immutable=1", uri=True, timeout=30.0, isolation_level=None, check_same_thread=False
    )


def open_store(root: Path, *, create: bool = True, check: bool = True, read_only: bool = False) -> Store:
    """Open (or, with ``create``, make) the results store in folder ``root``. A file that
    is not an arena database, one made by a newer arena, or (with ``check``, the default)
    a damaged one is an error naming it and, for damage, how to rebuild it; nothing in it
    is changed then. ``check=False`` is for a process that opens a store another has just
    checked (the tournament's writer).

    ``read_only=True`` (for the commands that only read: leaderboard, games, report,
    verify) opens the database without the right to write it, so that a read-only results
    folder (a mount, a copy handed out, ``chmod -R a-w``) is read as it is; only a store made
    by an older arena, whose schema must first be brought up to date, needs writing then
    (done when the folder allows it, else an error saying so)."""
    path = root / DB_NAME
    if root.exists() and not root.is_dir():
        raise StoreError(f"{root}: results location is a file, not a folder")
    if not path.exists():
        if not create or read_only:
            raise StoreError(f"{path}: no results database here (run `arena run` first, or pass the results folder)")
        check_parent(root)
        try:
            root.mkdir(exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{root}: cannot make the results folder: {os_error_text(exc)}") from None
    elif path.is_dir():
        raise StoreError(f"{path}: is a folder, not a results database")
    else:
        try:
            with path.open("rb") as f:
                head = f.read(16)
        except OSError as exc:
            raise StoreError(f"{path}: cannot read the results database: {exc.strerror or exc}") from None
        if head and head != b"SQLite format 3\x00":
            hint = f"; if it is this folder's results database, damaged: {rebuild_hint(root)}" if (root / "replays").is_dir() else ""
            raise StoreError(f"{path}: not an SQLite database (refusing to touch it){hint}")
    if read_only:
        store = _open_read_only(root, path, check)
        if store is not None:
            return store
        check = False  # checked just now: an older schema, in a folder that may be written
    with _closed_on_failure(path) as opened:
        # Autocommit mode: every write goes through an explicit BEGIN IMMEDIATE ...
        # COMMIT (see write_transaction), so that each game and each migration is atomic.
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
        opened.append(conn)
        if check and not is_sealed(path):  # first: nothing is written to a damaged file
            check_integrity(conn, path)
        _use_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        migrate_schema(conn, path)
    # Closed cleanly by this arena (checked or sealed at open, written by it since): sealed.
    return Store(root, conn, after_close=lambda: _seal(path))


@contextlib.contextmanager
def _closed_on_failure(path: Path) -> Iterator[list[sqlite3.Connection]]:
    """Around the opening of the database at ``path``: the connections put in the list
    yielded are closed if anything fails, and an SQLite error is worded as the store's."""
    opened: list[sqlite3.Connection] = []
    try:
        yield opened
    except BaseException as exc:
        for conn in opened:
            conn.close()
        if isinstance(exc, sqlite3.DatabaseError):
            raise database_error(path, exc) from None
        raise


def _open_read_only(root: Path, path: Path, check: bool) -> Store | None:
    """The store at ``path`` opened read-only (see :func:`open_store`); None when its schema
    is older than this arena's and the folder may be written (then it is opened to be
    brought up to date)."""
    with _closed_on_failure(path) as opened:
        conn = _connect_read_only(path)
        opened.append(conn)
        if check and not is_sealed(path):
            check_integrity(conn, path)
        version = read_schema_version(conn, path)
        if version < SCHEMA_VERSION:
            opened.clear()
            conn.close()
            if folder_writable(root):
                return None
            raise StoreError(
                f"{path}: made by an older arena (schema {version}; this one reads {SCHEMA_VERSION}), and the folder "
                "is read-only, so it cannot be brought up to date here: open it once where it can be written"
            )
        conn.execute("PRAGMA query_only = ON")
    return Store(root, conn)


def _use_wal(conn: sqlite3.Connection, wait_s: float = 30.0) -> None:
    """Put the file in WAL mode (it stays so): a no-op once it is. Changing the mode takes
    the file for itself and SQLite does not wait for that (no busy handler), so when
    other processes are making the same new store at that very moment it is tried again."""
    give_up = time.monotonic() + wait_s
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > give_up:
                raise
            time.sleep(0.01)


# -- the seal: the database as an arena last left it ------------------------------------

#: Beside the database: what its file was when an arena last closed it cleanly.
SEAL_NAME = DB_NAME + ".seal"
#: A seal is never larger than this (it is a few numbers): a larger file is no seal.
_SEAL_LIMIT = 4096
#: The seal is written only once the file's times are this much in the past: file times come
#: from the kernel's coarse clock (a tick, at most 10 ms, behind), and a change made within the
#: tick of the sealed one could otherwise leave every time as it was.
_SETTLE_NS = 25_000_000
#: How many times the file may change under the sealing before it gives up (no seal then).
_SEAL_TRIES = 5


def _fingerprint(path: Path) -> dict[str, int] | None:
    """The database file as the seal keeps it, or None when it cannot be sealed: missing, a
    ``-wal`` beside it holding changes (a connection still open, or a writer that was killed:
    the file alone is not the store), or times of whole seconds only (a file system too
    coarse to tell a later change by its times)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    try:
        if os.stat(path.with_name(path.name + "-wal")).st_size > 0:
            return None
    except FileNotFoundError:
        pass
    except OSError:
        return None
    if st.st_mtime_ns % 1_000_000_000 == 0 and st.st_ctime_ns % 1_000_000_000 == 0:
        return None
    return {"size": st.st_size, "inode": st.st_ino, "device": st.st_dev, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}


def is_sealed(path: Path) -> bool:
    """Whether the database at ``path`` is exactly as an arena left it after a clean close
    (its seal matches the file, and no ``-wal`` beside it holds changes): then SQLite's
    integrity check of every page may be skipped. Anything unreadable or unexpected: False."""
    now = _fingerprint(path)
    if now is None:
        return False
    try:
        with path.with_name(SEAL_NAME).open("rb") as f:
            seal = json.loads(f.read(_SEAL_LIMIT + 1))
    except (OSError, ValueError):
        return False
    return seal == {"format": 1, **now}


def _seal(path: Path) -> None:
    """Write the seal of the database at ``path`` (just closed by this arena, with nothing
    damaged found), atomically; when the file cannot be sealed (see :func:`_fingerprint`: e.g.
    another connection is still open), remove any seal instead, so that the next open checks.
    Failing to write it only costs the next open its check."""
    seal_path = path.with_name(SEAL_NAME)
    if is_sealed(path):
        return  # (closed without a change: the seal is this file's already)
    for _ in range(_SEAL_TRIES):
        before = _fingerprint(path)
        if before is None:
            break
        wait = _SETTLE_NS - (time.time_ns() - max(before["mtime_ns"], before["ctime_ns"]))
        if wait > 0:
            time.sleep(wait / 1e9)
        if _fingerprint(path) != before:
            continue  # changed meanwhile (another process): look again
        tmp = seal_path.with_name(f".{SEAL_NAME}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps({"format": 1, **before}), encoding="utf-8")
            tmp.replace(seal_path)
            return
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
            break
    with contextlib.suppress(OSError):
        seal_path.unlink()
