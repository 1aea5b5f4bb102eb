"""A bot's files as one archive, to send it to another machine, and back.

A bundle is a gzip-compressed tar of exactly the items that make up the bot's content
hash (:func:`arena.bots.files.walk_bot`): folders, files with only their executable bit
kept, and the links kept inside the folder, as links. Unpacking treats the archive as
hostile: only folders, regular files and relative links that stay inside the one top
entry, nothing written through a link, no name twice, and at most as many members and
bytes as a bot folder may hold (:mod:`arena.bots.files`); then the hash is checked
again, so a bot that arrives damaged is refused instead of being played under another
bot's name.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import posixpath
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from ._errors import BotError
from .files import (
    MAX_ENTRIES,
    MAX_FILE_BYTES,
    MAX_TOTAL_BYTES,
    BotFilesError,
    system_link,
    walk_bot,
)
from .manifest import BotManifest, find_bot

__all__ = ["BundleError", "bundle_bot", "unpack_bundle"]

# What a tar adds to its members' bytes: a header per member (more for long names), and padding.
_TAR_OVERHEAD = 4096


class BundleError(BotError):
    """A bundle that cannot be unpacked, or whose files do not match their hash."""


def bundle_bot(manifest: BotManifest) -> bytes:
    """The bot's folder (or single file) as a gzip'd tar whose one top-level entry has
    the bot's own file or folder name. Same items, same bytes (no times, no owners).
    Raises :class:`~arena.bots.files.BotFilesError` for what a bot folder may not hold."""
    top = manifest.path.name
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        if manifest.is_folder:
            info = tarfile.TarInfo(top)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for item in walk_bot(manifest.path):
            info = tarfile.TarInfo(top if not manifest.is_folder else f"{top}/{item.rel}")
            if item.kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            elif item.kind == "link":
                info.type, info.mode, info.linkname = tarfile.SYMTYPE, 0o777, item.target
                tar.addfile(info)
            else:
                data = b"".join(item.chunks())  # at most MAX_FILE_BYTES
                info.size = len(data)
                info.mode = 0o755 if item.executable else 0o644
                tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def unpack_bundle(data: bytes, name: str, expected_hash: str, cache: Path) -> BotManifest:
    """The bot of a bundle, unpacked once into ``cache/<name>-<hash>/`` (later calls,
    from any process, find it there) and read with :func:`find_bot`, so that ``{python}``
    means this machine's interpreter. Raises :class:`BundleError` if the archive holds
    anything but what a bot folder may (see the module) under one top entry, or if what
    it holds is not the bot
    ``name`` with content hash ``expected_hash``."""
    home = cache / f"{name}-{expected_hash}"
    if not home.is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=cache))
        try:
            _extract(data, tmp, name)
            with contextlib.suppress(FileExistsError, OSError):
                os.rename(tmp, home)  # atomic: another process may have won the race, fine
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    entries = [p for p in home.iterdir() if not p.name.startswith(".")] if home.is_dir() else []
    if len(entries) != 1:
        raise BundleError(f"bot {name}: the unpacked bundle in {home} should hold one file or folder, not {len(entries)}")
    manifest = find_bot(entries[0])
    if manifest.name != name or manifest.content_hash != expected_hash:
        raise BundleError(
            f"bot {name}: the unpacked bundle in {home} is bot {manifest.name!r} with content hash "
            f"{manifest.content_hash}, not {expected_hash}"
        )
    return manifest


class CappedStream(io.RawIOBase):
    """A decompressed stream that fails past ``cap`` bytes (a small archive may inflate to
    any size: a gzip bomb): ``over()`` makes the error raised."""

    def __init__(self, inner: gzip.GzipFile, cap: int, over: Callable[[], Exception]) -> None:
        self.inner, self.left, self.over = inner, cap, over

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        n = self.inner.readinto(memoryview(buffer)[: max(0, min(len(buffer), self.left + 1))])
        self.left -= n
        if self.left < 0:
            raise self.over()
        return n


class CappedHeaders(tarfile.TarInfo):
    """A member whose extended header (pax, or GNU long name) is read into memory whole:
    refused past :data:`MAX_TAR_HEADER` before it is read."""

    def _proc_pax(self, tarfile: tarfile.TarFile) -> tarfile.TarInfo:  # type: ignore[override]
        self._check_header_size()
        return super()._proc_pax(tarfile)  # type: ignore[misc]

    def _proc_gnulong(self, tarfile: tarfile.TarFile) -> tarfile.TarInfo:  # type: ignore[override]
        self._check_header_size()
        return super()._proc_gnulong(tarfile)  # type: ignore[misc]

    def _check_header_size(self) -> None:
        if self.size > MAX_TAR_HEADER:
            raise tarfile.HeaderError(f"an extended header of {self.size} bytes (at most {MAX_TAR_HEADER})")


MAX_TAR_HEADER = 64 << 10


def _extract(data: bytes, dest: Path, name: str) -> None:
    cap = MAX_TOTAL_BYTES + (MAX_ENTRIES + 1) * _TAR_OVERHEAD
    try:
        too_big = lambda: BundleError(f"bot {name}: its bundle unpacks to more than {MAX_TOTAL_BYTES >> 20} MiB")  # noqa: E731
        stream = io.BufferedReader(CappedStream(gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb"), cap, too_big))
        with tarfile.open(fileobj=stream, mode="r|", tarinfo=CappedHeaders) as tar:  # a stream: members are read once, in order
            top = _extract_members(tar, dest, name)
    except BotFilesError as exc:
        raise BundleError(f"bot {name}: its bundle: {exc}") from None
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, OSError) as exc:
        raise BundleError(f"bot {name}: cannot unpack its bundle into {dest}: {exc}") from None
    if top is None:
        raise BundleError(f"bot {name}: the bundle is empty")


def _extract_members(tar: tarfile.TarFile, dest: Path, name: str) -> str | None:
    top: str | None = None
    seen: set[str] = set()
    links: set[str] = set()
    total = 0
    for count, member in enumerate(tar, 1):
        path = PurePosixPath(member.name)
        what = f"bot {name}: the bundle holds {member.name!r}"
        if count > MAX_ENTRIES + 1:
            raise BundleError(f"bot {name}: the bundle holds more than {MAX_ENTRIES} members")
        if not (member.isfile() or member.isdir() or member.issym()):
            raise BundleError(f"{what}, which is not a folder, a regular file or a link")
        if path.is_absolute() or not path.parts or any(p in ("..", ".", "") for p in path.parts):
            raise BundleError(f"{what}, which is not a plain relative file or folder path")
        if top is None:
            top = path.parts[0]
        if path.parts[0] != top:
            raise BundleError(f"bot {name}: the bundle holds more than one top-level entry ({top!r}, {path.parts[0]!r})")
        rel = path.as_posix()
        if rel in seen:
            raise BundleError(f"{what} twice")
        if any(str(parent) in links for parent in path.parents):
            raise BundleError(f"{what}, inside a link")
        seen.add(rel)
        target = dest.joinpath(*path.parts)
        if member.issym():
            _check_link(member, path, what)
            links.add(rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(member.linkname, target)
            continue
        if member.isdir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        if member.size > MAX_FILE_BYTES:
            raise BundleError(f"{what}, of {member.size} bytes: over the {MAX_FILE_BYTES >> 20} MiB a bot's file may be")
        total += member.size
        if total > MAX_TOTAL_BYTES:
            raise BundleError(f"bot {name}: the bundle holds more than {MAX_TOTAL_BYTES >> 20} MiB of files")
        target.parent.mkdir(parents=True, exist_ok=True)
        source = tar.extractfile(member)
        assert source is not None  # a regular file
        mode = 0o755 if member.mode & 0o100 else 0o644
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
        with source, open(fd, "wb") as out:
            shutil.copyfileobj(source, out)
    return top


def _check_link(member: tarfile.TarInfo, path: PurePosixPath, what: str) -> None:
    """A link member: relative, and staying inside the top entry (the rule of a bot folder)."""
    target = member.linkname
    if posixpath.isabs(target) and system_link(target):
        return  # into the system or the arena's Python, as a bot folder may hold (a .venv's bin/python)
    lexical = posixpath.normpath(posixpath.join(str(path.parent), target)) if target else ""
    top = path.parts[0]
    inside = lexical == top or lexical.startswith(top + "/")
    if len(path.parts) < 2 or not target or posixpath.isabs(target) or not inside:
        raise BundleError(f"{what}, a link to {target!r} that does not stay inside the bot")
