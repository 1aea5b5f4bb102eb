"""The seal of a store closed cleanly: the common open skips SQLite's full check, and any
change behind the arena's back (a byte written, a truncation, a copy in its place, a writer
killed with changes in its -wal) is still checked."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import arena.store.opening as opening
from arena.store.database import DB_NAME
from arena.store.errors import StoreError
from arena.store.opening import SEAL_NAME, is_sealed, open_store


def _made(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    with open_store(results) as store:
        store.deal_key()
        store.bot("a", "1", "0" * 64, "bots/a")
    return results


def _checks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each full check an open runs, recorded (the check itself still runs)."""
    seen: list[Path] = []
    real = opening.check_integrity

    def counting(conn, path):  # noqa: ANN001, ANN202
        seen.append(path)
        real(conn, path)

    monkeypatch.setattr(opening, "check_integrity", counting)
    return seen


def test_a_store_closed_cleanly_is_opened_again_without_the_full_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = _made(tmp_path)
    assert (results / SEAL_NAME).is_file() and is_sealed(results / DB_NAME)
    seen = _checks(monkeypatch)
    for read_only in (False, True, False):
        with open_store(results, create=False, read_only=read_only) as store:
            assert [b.name for b in store.bots().values()] == ["a"]
    assert seen == []
    assert is_sealed(results / DB_NAME)  # a reader's -wal of no changes keeps the seal good


def _damage_first_table_page(db: Path) -> None:
    with db.open("r+b") as f:
        f.seek(4096 + 8)
        f.write(b"\xff" * 64)


@pytest.mark.parametrize("change", ["bytes written", "truncated", "replaced by a copy", "touched back"])
def test_a_file_changed_behind_the_arenas_back_is_checked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    results = _made(tmp_path)
    db = results / DB_NAME
    before = os.stat(db)
    if change == "bytes written":
        _damage_first_table_page(db)
    elif change == "truncated":
        os.truncate(db, before.st_size - 4096)
    elif change == "replaced by a copy":
        shutil.copy2(db, tmp_path / "copy")
        (tmp_path / "copy").replace(db)  # same bytes, same times: another file
    else:  # damaged, then its times put back as they were: the change time still tells
        _damage_first_table_page(db)
        os.utime(db, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert not is_sealed(db)
    seen = _checks(monkeypatch)
    if change == "replaced by a copy":
        with open_store(results, create=False, read_only=True):
            pass
    else:
        with pytest.raises(StoreError, match="damaged"):
            open_store(results, create=False, read_only=True)
    # (a truncated file may be refused by SQLite's first read, before the check)
    assert seen == [db] or (change == "truncated" and seen == [])


def test_a_store_whose_writer_was_killed_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = _made(tmp_path)
    db = results / DB_NAME
    script = textwrap.dedent(
        f"""
        import os, sys
        from pathlib import Path
        from arena.store.opening import open_store
        store = open_store(Path({str(results)!r}), create=False)
        store.bot("b", "1", "1" * 64, "bots/b")
        print("written", flush=True)
        sys.stdin.read()
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH"))))}
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"written"
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (results / f"{DB_NAME}-wal").stat().st_size > 0  # its change is in the log only
    assert not is_sealed(db)
    seen = _checks(monkeypatch)
    with open_store(results, create=False) as store:
        assert sorted(b.name for b in store.bots().values()) == ["a", "b"]
    assert seen == [db]
    assert is_sealed(db)  # closed cleanly now: sealed again


def test_a_store_found_damaged_while_open_is_not_sealed(tmp_path: Path) -> None:
    results = _made(tmp_path)
    store = open_store(results, create=False)
    store.suspect = True  # as a query that met damage sets it
    store.close()
    (results / SEAL_NAME).unlink(missing_ok=True)
    store = open_store(results, create=False)
    store.suspect = True
    store.close()
    assert not (results / SEAL_NAME).exists()


def test_a_seal_that_is_not_one_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = _made(tmp_path)
    seen = _checks(monkeypatch)
    for text in (b"", b"{", b'{"format": 1}', b"x" * 10_000):
        (results / SEAL_NAME).write_bytes(text)
        with open_store(results, create=False, read_only=True):
            pass
    assert len(seen) == 4
