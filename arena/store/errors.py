"""What goes wrong with a results folder, said in words: :class:`StoreError` (the message
names the file and the way out), and how an SQLite or OS error reads (damaged, full,
read-only); also the check that a new results folder's parent exists."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from arena.errors import ArenaError


class StoreError(ArenaError):
    """The results store cannot be used; the message names the file. ``full``: because
    the disk is full."""

    full = False


def rebuild_hint(root: Path) -> str:
    return (
        f"the replay files hold every game: `arena store rebuild {root}` makes a new database from them "
        "(the damaged file is moved aside, not deleted)"
    )


#: SQLite's result codes (the low byte) of a damaged file: SQLITE_CORRUPT, SQLITE_NOTADB.
_DAMAGED_CODES = (11, 26)


#: SQLite's result codes (the low byte) of a database that cannot be written:
#: SQLITE_READONLY, SQLITE_CANTOPEN (its journal files cannot be made), SQLITE_FULL.
READONLY, CANTOPEN, _FULL = 8, 14, 13

#: errno values of a folder that cannot be written, and of a disk that is full.
READ_ONLY_ERRNOS = (errno.EROFS, errno.EACCES, errno.EPERM)
_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the user's quota, or the file size limit) is full."""
    if isinstance(exc, OSError):
        return exc.errno in _FULL_ERRNOS
    if isinstance(exc, StoreError):
        return exc.full
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == _FULL


def os_error_text(exc: OSError) -> str:
    """What an OS error means for a results folder, in a few words (its cause first)."""
    why = exc.strerror or str(exc)
    if exc.errno in _FULL_ERRNOS:
        return f"the disk is full ({why})"
    if exc.errno in READ_ONLY_ERRNOS:
        return f"it is read-only here ({why})"
    return why


def database_error(path: Path, exc: sqlite3.DatabaseError) -> StoreError:
    """The :class:`StoreError` for an SQLite error on the database at ``path``."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _DAMAGED_CODES:
        return StoreError(f"{path}: the database is damaged ({exc}); {rebuild_hint(path.parent)}")
    if code is not None and code & 0xFF == _FULL:
        full = StoreError(f"{path}: the disk is full ({exc}): free some space, or give another results folder")
        full.full = True
        return full
    if code is not None and code & 0xFF in (READONLY, CANTOPEN) and not folder_writable(path.parent):
        return StoreError(
            f"{path.parent}: the results folder is read-only ({exc}): this command writes it; "
            "give a writable results folder"
        )
    return StoreError(f"{path}: cannot use this database: {exc}")


def folder_writable(folder: Path) -> bool:
    """Whether this process may make files in ``folder`` (a read-only mount included)."""
    try:
        return os.access(folder, os.W_OK) and not os.statvfs(folder).f_flag & os.ST_RDONLY
    except OSError:
        return False


def check_parent(root: Path) -> None:
    """A results folder that does not exist yet is made, but not its parent: a path whose
    parent is missing is most often a mistyped one (or a disk that is not mounted), and
    a tree made there would hide the games where nobody looks for them."""
    if root.exists() or root.is_symlink():
        return
    parent = root.absolute().parent
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise StoreError(
            f"{root}: cannot make the results folder: its parent folder {parent} {what} "
            "(check the path, or make the parent first)"
        )
