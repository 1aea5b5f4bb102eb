"""What a bot's folder may hold, and the one way it is read: to hash it, copy it, bundle
it or read its ``bot.toml``.

A bot folder holds folders, regular files, and symbolic links with a *relative* target
inside the folder (kept as links: hashed and copied as their target text, never followed).
Anything else is refused with a message naming the file relative to the folder:

- a link whose target is outside the folder, missing, or a loop of links, except an
  absolute link into the system (``/usr`` and its top-level links) or into the Python
  installation that runs the arena, both of which every sandbox shows: a virtual
  environment's ``.venv/bin/python`` (:func:`system_link`);
- a FIFO, socket or device node (never opened: nothing here can block);
- a hard link whose other names are not all inside the folder (its bytes would live
  elsewhere, e.g. a secret file the bot could read);
- more than :data:`MAX_ENTRIES` entries, a file over :data:`MAX_FILE_BYTES`, more than
  :data:`MAX_TOTAL_BYTES` in all, folders nested deeper than :data:`MAX_DEPTH`.

The folder is walked with directory descriptors (``openat``) and ``lstat``, so no link
is followed on the way; a file is opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked
with ``fstat`` to be the regular file that was listed, then read in chunks. So a walk
takes time and memory bounded by the caps, whatever the folder holds.

Folders named in :data:`SKIP_DIRS` (the caches of tools and version control) are not
part of a bot: neither hashed nor copied, nor opened, but what they hold is checked for
FIFOs, devices, sockets and outside links all the same. Hard links there are let be: a
local ``git clone`` hard-links its objects, and they are never read. A kept link may not
lead into one of them (its copy would lead nowhere). Everything else is the bot: a
sourceless ``.pyc``, a ``node_modules`` folder (a JS bot's packages) are hashed and copied.

A bot never runs in its own folder: it runs from a copy of exactly what the hash covers
(:func:`copy_bot`, re-hashed while copying), so that its content hash pins everything
it can read of itself. To that end the hash covers a folder that holds nothing else
(an empty one), and it is unambiguous: a file's bytes are escaped (``\\x01`` as
``\\x01\\x01``, ``\\x00`` as ``\\x01\\x02``) before the ``\\x00`` that ends them, so that no
file's bytes can pose as the next file. Text files need no escape: their hash is the one
the arena always computed.
"""

from __future__ import annotations

import errno
import hashlib
import os
import posixpath
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ._errors import BotError

__all__ = [
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "MAX_FILE_BYTES",
    "MAX_MANIFEST_BYTES",
    "MAX_TOTAL_BYTES",
    "SKIP_DIRS",
    "BotFilesError",
    "Item",
    "copy_bot",
    "hash_bot",
    "read_small_file",
    "walk_bot",
]

MAX_ENTRIES = 20_000  # files, folders and links, those of skipped folders too
MAX_FILE_BYTES = 64 << 20
MAX_TOTAL_BYTES = 256 << 20  # of the files that make up the bot
MAX_DEPTH = 32  # folders inside folders
MAX_MANIFEST_BYTES = 64 << 10
#: Folders that are not part of a bot: what tools write beside the code (Python's
#: bytecode, type checkers', test runners' and linters' caches) and version control. A
#: bot cannot use them: it runs from a copy without them (Python rebuilds its bytecode
#: from the sources there).
SKIP_DIRS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".git", ".hg", ".svn"})
_CHUNK = 1 << 20
_ALLOWED = "a bot folder may hold only folders, regular files and relative links to them inside it"
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class BotFilesError(BotError):
    """A bot's files break a rule of this module; the message names the file."""


def _system_roots() -> list[str]:
    roots = ["/usr", *(f"/{n}" for n in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"))]
    roots += [sys.base_prefix, sys.prefix, sys.exec_prefix]
    return [os.path.normpath(r) for r in dict.fromkeys(roots) if r and os.path.isabs(r)]


def _within(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def system_link(target: str) -> bool:
    """Whether an absolute link target may be kept in a bot: it names a path in the
    system (``/usr``, ``/bin``…) or in the Python installation that runs the arena, and
    really leads there and to something that exists (every sandbox shows both, read-only;
    a virtual environment's ``bin/python`` is such a link). Nothing is opened: lstat and
    readlink only, as the kernel bounds them."""
    roots = _system_roots()
    lexical = os.path.normpath(target)
    if not _within(lexical, roots):
        return False
    try:
        real = os.path.realpath(lexical, strict=True)
    except OSError:
        return False
    return _within(real, [os.path.realpath(r) for r in roots])


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return f"a special file (mode {stat.filemode(mode)})"


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n // 1024} KiB"


@dataclass(slots=True)
class Item:
    """One entry of a bot, as :func:`walk_bot` lists it. ``rel`` is its path relative to
    the folder (``/``-separated); a single-file bot is one item, its own file name."""

    rel: str
    kind: str  # "file", "dir" or "link"
    executable: bool = False
    size: int = 0  # a file's, as listed
    target: str = ""  # a link's target text
    _walk: _Walk | None = None
    _dir_fd: int = -1
    _name: str = ""
    _id: tuple[int, int] = (0, 0)

    def chunks(self) -> Iterator[bytes]:
        """A file's bytes, in chunks. Only while the walk that listed it has not moved on."""
        assert self.kind == "file" and self._walk is not None
        yield from self._walk.read(self)


class _Walk:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.real = os.path.realpath(root)
        self.entries = 0
        self.total = 0
        self.hard_links: dict[tuple[int, int], list] = {}  # (dev, ino) -> [names seen, st_nlink, first rel]

    def fail(self, rel: str, why: str) -> BotFilesError:
        return BotFilesError(f"{self.root}: {rel} {why}")

    def count(self, rel: str) -> None:
        self.entries += 1
        if self.entries > MAX_ENTRIES:
            raise BotFilesError(f"{self.root}: holds more than {MAX_ENTRIES} files and folders (at {rel})")

    def folder(self, fd: int, rel: str, depth: int, skipped: bool) -> Iterator[Item]:
        names = []
        try:
            with os.scandir(fd) as listing:
                for entry in listing:
                    self.count(f"{rel}/{entry.name}" if rel else entry.name)
                    names.append(entry.name)
        except OSError as exc:
            raise self.fail(rel or ".", f"cannot be listed: {exc.strerror}") from None
        names.sort()  # the order of sorted relative paths, part by part: the hash's order
        for name in names:
            child = f"{rel}/{name}" if rel else name
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError as exc:
                raise self.fail(child, f"cannot be read: {exc.strerror}") from None
            mode = st.st_mode
            if stat.S_ISDIR(mode):
                if depth + 1 > MAX_DEPTH:
                    raise self.fail(child, f"is nested more than {MAX_DEPTH} folders deep")
                yield from self.subfolder(fd, name, child, st, depth + 1, skipped or name in SKIP_DIRS)
            elif stat.S_ISLNK(mode):
                target = self.link(fd, name, child, kept=not skipped)
                if not skipped:
                    yield Item(child, "link", target=target)
            elif stat.S_ISREG(mode):
                if skipped:
                    continue  # never read nor copied (a local git clone hard-links its objects)
                if st.st_nlink > 1:
                    seen = self.hard_links.setdefault((st.st_dev, st.st_ino), [0, st.st_nlink, child])
                    seen[0] += 1
                self.reserve(child, st.st_size)
                yield Item(
                    child, "file", executable=bool(mode & 0o111), size=st.st_size,
                    _walk=self, _dir_fd=fd, _name=name, _id=(st.st_dev, st.st_ino),
                )
            else:
                raise self.fail(child, f"is {_kind(mode)}: {_ALLOWED}")

    def subfolder(self, fd: int, name: str, rel: str, st: os.stat_result, depth: int, skipped: bool) -> Iterator[Item]:
        try:
            sub = os.open(name, _OPEN_DIR, dir_fd=fd)
        except OSError as exc:
            raise self.fail(rel, f"cannot be opened: {exc.strerror}") from None
        try:
            now = os.fstat(sub)
            if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                raise self.fail(rel, "changed while it was being read; try again")
            if not skipped:
                yield Item(rel, "dir")
            yield from self.folder(sub, rel, depth, skipped)
        finally:
            os.close(sub)

    def link(self, fd: int, name: str, rel: str, *, kept: bool) -> str:
        try:
            target = os.readlink(name, dir_fd=fd)
        except OSError as exc:
            raise self.fail(rel, f"cannot be read: {exc.strerror}") from None
        if os.path.isabs(target):
            if system_link(target):
                return target  # kept as it is: it leads into what every sandbox shows
            raise self.fail(
                rel, f"is a link to {target!r}, an absolute path outside the system (/usr) and the arena's own "
                f"Python: {_ALLOWED}",
            )
        lexical = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
        if lexical == ".." or lexical.startswith("../"):
            raise self.fail(rel, f"is a link to {target!r}, outside the bot's folder: {_ALLOWED}")
        try:
            # Only lstat and readlink on the way (nothing is opened), each link bounded by the kernel's.
            real = os.path.realpath(os.path.join(self.real, rel), strict=True)
        except OSError:
            raise self.fail(rel, f"is a link to {target!r}, which leads nowhere (missing, or a loop of links)") from None
        if real != self.real and not real.startswith(self.real.rstrip(os.sep) + os.sep):
            # By way of a link of the folder into the system (python -> python3 -> /usr/bin/python3.11).
            if _within(real, [os.path.realpath(r) for r in _system_roots()]):
                return target
            raise self.fail(rel, f"is a link to {target!r}, which leads outside the bot's folder ({real}): {_ALLOWED}")
        if kept:
            # The way there (the target text) and where it ends: neither through a folder
            # that is not copied, or the copy of the link would lead nowhere.
            through = [*target.split("/"), *Path(os.path.relpath(real, self.real)).parts]
            skipped = next((part for part in through if part in SKIP_DIRS), None)
            if skipped is not None:
                raise self.fail(
                    rel, f"is a link to {target!r}, into {skipped}, which is not part of the bot "
                    "(neither hashed nor copied): link to a file of the bot, or copy the file",
                )
        return target

    def reserve(self, rel: str, size: int) -> None:
        if size > MAX_FILE_BYTES:
            raise self.fail(rel, f"is {_mib(size)}, over the {_mib(MAX_FILE_BYTES)} a bot's file may be")
        self.total += size
        if self.total > MAX_TOTAL_BYTES:
            raise BotFilesError(f"{self.root}: its files add up to more than {_mib(MAX_TOTAL_BYTES)} (at {rel})")

    def read(self, item: Item) -> Iterator[bytes]:
        try:
            fd = os.open(item._name, _OPEN_FILE, dir_fd=item._dir_fd)
        except OSError as exc:
            raise self.fail(item.rel, f"cannot be opened: {exc.strerror}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != item._id:
                raise self.fail(item.rel, "changed while it was being read; try again")
            done = 0
            while chunk := os.read(fd, _CHUNK):
                done += len(chunk)
                if done > item.size:  # it grew since it was listed: the caps hold all the same
                    if done > MAX_FILE_BYTES:
                        raise self.fail(item.rel, f"grew past the {_mib(MAX_FILE_BYTES)} a bot's file may be")
                    self.reserve(item.rel, done - item.size)
                    item.size = done
                yield chunk
        except OSError as exc:
            raise self.fail(item.rel, f"cannot be read: {exc.strerror}") from None
        finally:
            os.close(fd)

    def check_hard_links(self) -> None:
        for seen, nlink, rel in self.hard_links.values():
            if seen < nlink:
                raise self.fail(
                    rel, f"is a hard link with {nlink - seen} of its {nlink} names outside the bot's folder: "
                    "a bot's files must live in its folder (copy the file instead)",
                )


def walk_bot(path: Path) -> Iterator[Item]:
    """The items of the bot at ``path`` (a folder, or a single file), in the order of the
    content hash: every folder, file and kept link, a folder before what it holds. Raises
    :class:`BotFilesError` for anything the rules above refuse; it may do so after some
    items were listed (a hard link is known to be whole only at the end)."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise BotFilesError(f"{path}: cannot be read: {exc.strerror}") from None
    if stat.S_ISREG(st.st_mode):
        yield from _single_file(path, st)
        return
    if not stat.S_ISDIR(st.st_mode):
        what = "a link" if stat.S_ISLNK(st.st_mode) else _kind(st.st_mode)
        raise BotFilesError(f"{path}: is {what}, not a bot's folder or file")
    walk = _Walk(path)
    fd = _open_folder(path)
    try:
        yield from walk.folder(fd, "", 0, False)
    finally:
        os.close(fd)
    walk.check_hard_links()


def _single_file(path: Path, st: os.stat_result) -> Iterator[Item]:
    walk = _Walk(path.parent)
    if st.st_nlink > 1:
        raise walk.fail(path.name, "is a hard link (it has other names elsewhere): a bot's file must be its own")
    walk.reserve(path.name, st.st_size)
    fd = _open_folder(path.parent)
    try:
        yield Item(
            path.name, "file", executable=bool(st.st_mode & 0o111), size=st.st_size,
            _walk=walk, _dir_fd=fd, _name=path.name, _id=(st.st_dev, st.st_ino),
        )
    finally:
        os.close(fd)


def hash_bot(path: Path) -> str:
    """The content hash of the bot at ``path``: SHA-256 over each file's relative path,
    executable bit and (escaped) bytes, each kept link's relative path and target, and
    each empty folder's relative path (a single file: its name and bytes), in sorted
    order; the first 16 hex digits."""
    digest = _Digest(single=not path.is_dir())
    for item in walk_bot(path):
        for _chunk in digest.feed(item):
            pass
    return digest.hexdigest()


def _escaped(chunk: bytes) -> bytes:
    """A file's bytes as the hash takes them: without a NUL, which ends them there. One
    byte at a time, so that it does not matter where the chunks are cut."""
    if b"\0" in chunk or b"\1" in chunk:
        return chunk.replace(b"\1", b"\1\1").replace(b"\0", b"\1\2")
    return chunk


class _Digest:
    """The content hash, fed the items of :func:`walk_bot` in their order."""

    def __init__(self, *, single: bool) -> None:
        self.h = hashlib.sha256()
        self.single = single
        self.folder: str | None = None  # the last folder listed, while nothing was listed inside it

    def feed(self, item: Item) -> Iterator[bytes]:
        """Take ``item``, yielding a file's chunks (as read, unescaped) as they are hashed."""
        h = self.h
        if self.folder is not None and not item.rel.startswith(self.folder + "/"):
            h.update(os.fsencode(self.folder) + b"\0d\0")  # it holds nothing: only an empty folder is hashed
        self.folder = None
        if self.single:
            h.update(os.fsencode(item.rel) + b"\0")
            for chunk in item.chunks():
                h.update(chunk)
                yield chunk
        elif item.kind == "dir":
            self.folder = item.rel
        elif item.kind == "file":
            h.update(os.fsencode(item.rel) + (b"\0x\0" if item.executable else b"\0-\0"))
            for chunk in item.chunks():
                h.update(_escaped(chunk))
                yield chunk
            h.update(b"\0")
        else:  # "l" where a file has "x" or "-": a link never hashes like a file
            h.update(os.fsencode(item.rel) + b"\0l\0" + os.fsencode(item.target) + b"\0")

    def hexdigest(self) -> str:
        if self.folder is not None:
            self.h.update(os.fsencode(self.folder) + b"\0d\0")
            self.folder = None
        return self.h.hexdigest()[:16]


def copy_bot(path: Path, dest: Path) -> str:
    """Copy the bot at ``path`` to ``dest`` (which must not exist): for a folder, the
    items of :func:`walk_bot` (folders with mode 0755, files with 0755 or 0644, links as
    links); for a single file, that file, with mode 0755 (its mode is not in its hash).
    So the copy holds exactly what the content hash covers, whatever the umask. Returns
    the content hash of what was copied, read once, so a caller can tell whether it is
    still the bot it hashed before. On an error, what was copied so far stays: the
    caller copies into a place of its own and removes it."""
    single = not path.is_dir()
    digest = _Digest(single=single)
    if not single:
        os.mkdir(dest, 0o755)
        os.chmod(dest, 0o755)
    for item in walk_bot(path):
        target = dest if single else dest.joinpath(*item.rel.split("/"))
        if item.kind == "dir":
            for _chunk in digest.feed(item):
                pass
            os.mkdir(target, 0o755)
            os.chmod(target, 0o755)
        elif item.kind == "link":
            for _chunk in digest.feed(item):
                pass
            os.symlink(item.target, target)
        else:
            mode = 0o755 if item.executable or single else 0o644
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
            try:
                os.fchmod(out, mode)
                for chunk in digest.feed(item):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(out, view):]
            finally:
                os.close(out)
    return digest.hexdigest()


def _open_folder(path: Path) -> int:
    """A descriptor of the folder ``path`` (never through a last link), or one error naming it."""
    try:
        return os.open(path, _OPEN_DIR)
    except OSError as exc:
        raise BotFilesError(f"{path}: cannot be opened: {exc.strerror}") from None


def read_small_file(folder: Path, name: str, cap: int = MAX_MANIFEST_BYTES) -> bytes:
    """The bytes of the regular file ``folder/name`` (``bot.toml``), at most ``cap``:
    never a link, a FIFO or a device, never more than ``cap + 1`` bytes read."""
    walk = _Walk(folder)
    dir_fd = _open_folder(folder)
    try:
        # lstat first: a device is never opened (opening one may act), nor a FIFO.
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        if not stat.S_ISREG(mode):
            what = "a link" if stat.S_ISLNK(mode) else _kind(mode)
            raise walk.fail(name, f"is {what}: it must be a regular file")
        fd = os.open(name, _OPEN_FILE, dir_fd=dir_fd)
    except OSError as exc:
        why = "is a link: it must be a regular file" if exc.errno == errno.ELOOP else f"cannot be opened: {exc.strerror}"
        raise walk.fail(name, why) from None
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise walk.fail(name, f"is {_kind(st.st_mode)}: it must be a regular file")
        data = b""
        while len(data) <= cap and (chunk := os.read(fd, min(_CHUNK, cap + 1 - len(data)))):
            data += chunk
    except OSError as exc:
        raise walk.fail(name, f"cannot be read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > cap:
        raise walk.fail(name, f"is over {_mib(cap)}, the most it may be")
    return data
