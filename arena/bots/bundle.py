"""A bot's files as one archive, to send it to another machine, and back.

A bundle is a gzip-compressed tar of exactly the files that make up the bot's content
hash (:func:`arena.bots.manifest.content_hash`): the same skipped folders, no compiled
Python, each file with only its executable bit kept. Unpacking checks the hash again,
so a bot that arrives damaged is refused instead of being played under another bot's
name.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path, PurePosixPath

from ._errors import BotError
from .manifest import BotManifest, _files, find_bot

__all__ = ["BundleError", "bundle_bot", "unpack_bundle"]


class BundleError(BotError):
    """A bundle that cannot be unpacked, or whose files do not match their hash."""


def bundle_bot(manifest: BotManifest) -> bytes:
    """The bot's folder (or single file) as a gzip'd tar whose one top-level entry has
    the bot's own file or folder name. Same files, same bytes (no times, no owners)."""
    top = manifest.path.name
    files = [manifest.path] if not manifest.is_folder else sorted(_files(manifest.path))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for file in files:
            rel = top if file == manifest.path else f"{top}/{file.relative_to(manifest.path).as_posix()}"
            data = file.read_bytes()
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            info.mode = 0o755 if os.access(file, os.X_OK) else 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def unpack_bundle(data: bytes, name: str, expected_hash: str, cache: Path) -> BotManifest:
    """The bot of a bundle, unpacked once into ``cache/<name>-<hash>/`` (later calls,
    from any process, find it there) and read with :func:`find_bot`, so that ``{python}``
    means this machine's interpreter. Raises :class:`BundleError` if the archive holds
    anything but plain files under one top entry, or if what it holds is not the bot
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


def _extract(data: bytes, dest: Path, name: str) -> None:
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            top = _extract_members(tar, dest, name)
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise BundleError(f"bot {name}: cannot unpack its bundle into {dest}: {exc}") from None
    if top is None:
        raise BundleError(f"bot {name}: the bundle is empty")


def _extract_members(tar: tarfile.TarFile, dest: Path, name: str) -> str | None:
    top: str | None = None
    for member in tar:
        path = PurePosixPath(member.name)
        if not member.isfile() or path.is_absolute() or ".." in path.parts or not path.parts:
            raise BundleError(f"bot {name}: the bundle holds {member.name!r}, which is not a plain relative file")
        if top is None:
            top = path.parts[0]
        if path.parts[0] != top:
            raise BundleError(f"bot {name}: the bundle holds more than one top-level entry ({top!r}, {path.parts[0]!r})")
        target = dest.joinpath(*path.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        source = tar.extractfile(member)
        assert source is not None  # a regular file
        with source, open(target, "wb") as out:
            shutil.copyfileobj(source, out)
        os.chmod(target, 0o755 if member.mode & 0o100 else 0o644)
    return top
