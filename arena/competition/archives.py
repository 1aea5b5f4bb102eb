"""An uploaded archive (.zip or .tar.gz) unpacked as hostile: only folders and regular files
(no links, devices, FIFOs or hard links), plain relative paths (no absolute path, no ``..``,
no control characters, no name twice), at most the competition's number of members and
unpacked bytes, counted as they are written (a member's declared size is not trusted: a
decompression bomb stops at the cap). The first thing refused is the one-line reason."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from arena.bots.bundle import MAX_TAR_HEADER, CappedHeaders, CappedStream
from arena.competition.errors import UploadRefused

MAX_DEPTH = 32
MAX_NAME = 255
_CHUNK = 1 << 16


class _Budget:
    def __init__(self, max_files: int, max_bytes: int) -> None:
        self.files_left, self.bytes_left = max_files, max_bytes
        self.max_files, self.max_bytes = max_files, max_bytes
        self.seen: set[str] = set()

    def member(self, name: str, is_dir: bool) -> PurePosixPath:
        self.files_left -= 1
        if self.files_left < 0:
            raise UploadRefused(f"the archive holds more than {self.max_files} files and folders")
        if "\\" in name or any(not c.isprintable() for c in name):
            raise UploadRefused(f"the archive holds {name!r:.80}, a name with a backslash or a control character")
        path = PurePosixPath(name)
        parts = path.parts
        if name.startswith("/") or path.is_absolute() or not parts or any(p in ("..", ".", "") for p in parts):
            raise UploadRefused(f"the archive holds {name!r:.80}, which is not a plain relative path inside it")
        if len(parts) > MAX_DEPTH or any(len(p.encode()) > MAX_NAME for p in parts):
            raise UploadRefused(f"the archive holds {name[:80]!r}, nested too deep or with too long a name")
        key = path.as_posix()
        if key in self.seen:
            raise UploadRefused(f"the archive holds {key[:80]!r} twice")
        self.seen.add(key)
        return path

    def copy(self, source: BinaryIO, target: Path, executable: bool) -> None:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o755 if executable else 0o644)
        with open(fd, "wb") as out:
            while True:
                chunk = source.read(min(_CHUNK, self.bytes_left + 1))
                if not chunk:
                    return
                self.bytes_left -= len(chunk)
                if self.bytes_left < 0:
                    raise UploadRefused(f"the archive unpacks to more than {self.max_bytes:,} bytes")
                out.write(chunk)


def unpack_archive(archive: Path, dest: Path, *, max_files: int, max_bytes: int) -> None:
    """Unpack ``archive`` (its type by its first bytes) into the empty folder ``dest``.
    Raises :class:`UploadRefused` with the reason; ``dest`` then holds a part (remove it)."""
    with archive.open("rb") as f:
        head = f.read(4)
    budget = _Budget(max_files, max_bytes)
    try:
        if head.startswith(b"PK"):
            _unzip(archive, dest, budget)
        elif head.startswith(b"\x1f\x8b"):
            _untar(archive, dest, budget)
        else:
            raise UploadRefused("not a .zip or .tar.gz archive (by its content)")
    except UploadRefused:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile,
            NotImplementedError, RuntimeError, ValueError) as exc:
        raise UploadRefused(f"the archive is damaged or of a kind not read here: {exc}") from None
    except OSError as exc:
        raise UploadRefused(f"the archive cannot be unpacked: {exc.strerror or exc}") from None


def _place(dest: Path, path: PurePosixPath) -> Path:
    target = dest.joinpath(*path.parts)
    for parent in reversed(target.relative_to(dest).parents):  # no parent may be a file already
        p = dest / parent
        if p.exists() and not p.is_dir():
            raise UploadRefused(f"the archive holds {path.as_posix()[:80]!r} inside a file")
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def _unzip(archive: Path, dest: Path, budget: _Budget) -> None:
    with zipfile.ZipFile(archive) as z:
        infos = z.infolist()
        if len(infos) > budget.max_files:
            raise UploadRefused(f"the archive holds more than {budget.max_files} files and folders")
        for info in infos:
            mode = info.external_attr >> 16
            is_dir = info.is_dir()
            if info.flag_bits & 0x1:
                raise UploadRefused(f"the archive holds {info.filename[:80]!r} encrypted")
            kind = stat.S_IFMT(mode)
            if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                raise UploadRefused(f"the archive holds {info.filename[:80]!r}, which is not a folder or a regular file (a link or a device)")
            path = budget.member(info.filename.rstrip("/") if is_dir else info.filename, is_dir)
            target = _place(dest, path)
            if is_dir:
                target.mkdir(exist_ok=True)
                continue
            with z.open(info) as source:
                budget.copy(source, target, bool(mode & 0o100))


def _untar(archive: Path, dest: Path, budget: _Budget) -> None:
    # The whole tar stream is capped too (headers and padding: 1 KiB a member at most past the data).
    cap = budget.max_bytes + (budget.max_files + 2) * 1536 + MAX_TAR_HEADER
    with archive.open("rb") as raw:
        too_big = UploadRefused(f"the archive unpacks to more than {budget.max_bytes:,} bytes")
        stream = io.BufferedReader(CappedStream(gzip.GzipFile(fileobj=raw, mode="rb"), cap, lambda: too_big))
        with tarfile.open(fileobj=stream, mode="r|", tarinfo=CappedHeaders) as tar:
            for member in tar:  # a stream: members read once, in order
                if not (member.isfile() or member.isdir()):
                    what = "a link" if member.issym() or member.islnk() else "a device, FIFO or other special file"
                    raise UploadRefused(f"the archive holds {member.name[:80]!r}, {what}: only folders and regular files are taken")
                path = budget.member(member.name.rstrip("/") if member.isdir() else member.name, member.isdir())
                target = _place(dest, path)
                if member.isdir():
                    target.mkdir(exist_ok=True)
                    continue
                source = tar.extractfile(member)
                assert source is not None
                with source:
                    budget.copy(source, target, bool(member.mode & 0o100))


def bot_root(dest: Path) -> Path:
    """Where the bot is in an unpacked archive: its top, if bot.toml is there, or its one top folder."""
    if (dest / "bot.toml").is_file():
        return dest
    entries = [p for p in dest.iterdir() if not p.name.startswith(".") and p.name != "__MACOSX"]
    if len(entries) == 1 and entries[0].is_dir() and (entries[0] / "bot.toml").is_file():
        return entries[0]
    raise UploadRefused("the archive holds no bot.toml, at its top or in its one top folder")
