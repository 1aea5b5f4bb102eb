"""The client side of ``arena submit BOT --server URL --token T``: the bot's folder packed as a
.tar.gz (its regular files and folders only, under one top folder; no link, no cache folder)
and uploaded to ``POST /api/submissions`` as the web form does. Needs httpx (the ``serve``
extra); imports nothing of the server."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.text import LINE_LIMIT, printable

#: Folders a bot's author has but a bot does not need (left out of the archive).
SKIPPED = frozenset({"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".venv", "node_modules", "target"})
#: The most this client packs (the server's own cap is usually lower, and says so).
PACK_LIMIT = 256 * 1024 * 1024
TIMEOUT_S = 120.0


class SubmitError(ArenaError):
    """The upload could not be made or the server refused it; the message says which and why."""


def pack_bot(folder: Path) -> bytes:
    """The bot folder as a .tar.gz: one top folder of the folder's name, its regular files and
    folders (executable bits kept); symbolic links and special files are refused, naming them."""
    if not folder.is_dir():
        raise SubmitError(f"{folder}: a server takes a bot folder (with bot.toml), not a single file")
    if not (folder / "bot.toml").is_file():
        raise SubmitError(f"{folder}: has no bot.toml (a server needs one: `arena new` makes a bot folder with it)")
    top = folder.resolve().name or "bot"
    buf = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for here, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
            base = Path(here)
            for name in [*dirs, *sorted(files)]:
                path = base / name
                mode = os.lstat(path).st_mode
                rel = path.relative_to(folder).as_posix()
                if stat.S_ISLNK(mode):
                    raise SubmitError(f"{path}: is a symbolic link (a server takes regular files only: copy what it points to)")
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    raise SubmitError(f"{path}: is not a regular file or folder")
                info = tarfile.TarInfo(f"{top}/{rel}")
                info.mtime = 0
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                if stat.S_ISDIR(mode):
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(info)
                    continue
                info.size = os.path.getsize(path)
                info.mode = 0o755 if mode & 0o111 else 0o644
                total += info.size
                if total > PACK_LIMIT:
                    raise SubmitError(f"{folder}: holds more than {PACK_LIMIT // (1024 * 1024)} MiB of files")
                with path.open("rb") as f:
                    tar.addfile(info, f)
    return buf.getvalue()


def submit_to_server(folder: Path, server: str, token: str) -> dict[str, Any]:
    """Upload the bot folder to the competition server at ``server``; the new submission as
    the server returns it (at least ``id`` and ``status``)."""
    import httpx

    if not server.startswith(("http://", "https://")):
        raise SubmitError(f"--server {server!r:.80}: give the server's address, e.g. http://127.0.0.1:8000")
    archive = pack_bot(folder)
    url = server.rstrip("/") + "/api/submissions"
    try:
        response = httpx.post(
            url, files={"archive": (f"{folder.resolve().name or 'bot'}.tar.gz", archive, "application/gzip")},
            headers={"authorization": f"Bearer {token}", "accept": "application/json"}, timeout=TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        raise SubmitError(f"{url}: cannot upload: {printable(str(exc), limit=200)}") from None
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.status_code != 201 or not isinstance(body, dict) or "id" not in body or "status" not in body:
        said = body.get("error") if isinstance(body, dict) else response.text[:200]
        hint = ""
        if response.status_code == 401:
            hint = " (check --token: the one `arena team add` printed for your team)"
        elif response.status_code == 429:
            hint = f" (try again in {response.headers.get('retry-after', '?')} s)"
        raise SubmitError(
            f"{url}: refused ({response.status_code}): {printable(str(said), limit=LINE_LIMIT)}{hint}"
        )
    return body
