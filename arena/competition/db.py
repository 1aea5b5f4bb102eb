"""The competition's rows in the results store: a short-lived connection per operation (the
web application calls from several threads, the ladder from its own process), each write one
``BEGIN IMMEDIATE`` transaction. The store is opened once per process with the store's own
code (its checks at open, WAL, the migrations up to the schema that holds these tables)."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from arena.store.database import DB_NAME
from arena.store.opening import open_store
from arena.store.schema import write_transaction

_opened: set[Path] = set()
_opening = threading.Lock()


def _ensure_store(results: Path) -> Path:
    key = results.resolve()
    with _opening:
        if key not in _opened:
            open_store(results).close()  # checks, WAL, migrations (raises StoreError naming the file)
            _opened.add(key)
    return key / DB_NAME


@contextlib.contextmanager
def connect(results: Path) -> Iterator[sqlite3.Connection]:
    """A connection to the store of ``results`` (made if missing), closed after the block."""
    conn = sqlite3.connect(_ensure_store(results), timeout=30.0, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        yield conn
    finally:
        conn.close()


@contextlib.contextmanager
def transaction(results: Path) -> Iterator[sqlite3.Connection]:
    """:func:`connect`, inside one write transaction (all of the block's writes, or none)."""
    with connect(results) as conn, write_transaction(conn):
        yield conn


def now() -> str:
    """The time of a row, UTC, to the second (ISO 8601, sortable as text)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ago(seconds: int) -> str:
    """The time of :func:`now` ``seconds`` ago."""
    return datetime.fromtimestamp(datetime.now(UTC).timestamp() - seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def seconds_until(stamp: str, after_s: int) -> int:
    """Whole seconds from now until ``after_s`` past ``stamp`` (a :func:`now`), at least 1."""
    then = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp() + after_s
    return max(1, int(then - datetime.now(UTC).timestamp()) + 1)
