"""Uploaded bots: :meth:`Submissions.submit` takes a team's archive (bounded as it is read,
its type checked by its first bytes, never unpacked here), keeps it as
``RESULTS/uploads/<sha256>.<ext>`` and queues it; the validation queue
(:mod:`arena.competition.validation`, in the ladder's process) takes it from there. A
submission's states: queued -> building -> validating -> accepted | rejected."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from arena.competition.config import Competition
from arena.competition.db import ago, connect, now, seconds_until, transaction
from arena.competition.errors import RateLimited, UploadRefused
from arena.competition.teams import Team

STATUSES = ("queued", "building", "validating", "accepted", "rejected")
UPLOADS = "uploads"
_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class Submission:
    id: int
    team_id: int
    team: str
    status: str
    created: str
    updated: str
    archive_name: str
    archive_sha256: str
    archive_bytes: int
    bot_name: str | None
    version: int | None
    reason: str | None
    report: dict[str, Any] | None
    build_log: str | None
    bot_key: str | None = None  # name@hash of the accepted bot, as the store's ratings name it

    def to_dict(self, *, private: bool = True) -> dict[str, Any]:
        """As JSON: with ``private`` (the submitting team, the admin) the report and build log too."""
        d: dict[str, Any] = {
            "id": self.id, "team": self.team, "status": self.status, "created": self.created,
            "updated": self.updated, "archive_name": self.archive_name, "archive_bytes": self.archive_bytes,
            "archive_sha256": self.archive_sha256, "bot_name": self.bot_name, "version": self.version,
            "bot": self.bot_key,
        }
        if private:
            d |= {"reason": self.reason, "report": self.report, "build_log": self.build_log}
        return d


_COLUMNS = (
    "s.id, s.team_id, t.name, s.status, s.created, s.updated, s.archive_name, s.archive_sha256, s.archive_bytes, "
    "s.bot_name, s.version, s.reason, s.report, s.build_log, s.bot_key"
)
_FROM = "FROM submissions s JOIN teams t ON t.id = s.team_id"


def _submission(row: tuple) -> Submission:
    report = json.loads(row[12]) if row[12] else None
    return Submission(*row[:12], report, row[13], row[14])  # type: ignore[arg-type]


def archive_kind(head: bytes) -> str | None:
    """``zip`` or ``tar.gz`` by an archive's first bytes; None for anything else."""
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    return None


def clean_file_name(name: str) -> str:
    """An uploaded file's name as it is shown: its last path part, printable, at most 100 characters."""
    base = str(name or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(c for c in unicodedata.normalize("NFC", base) if c.isprintable())[:100]
    return base or "archive"


class Submissions:
    """The uploads of the competition whose store is in ``results``."""

    def __init__(self, results: Path, competition: Competition) -> None:
        self.results = results
        self.competition = competition

    def archive_path(self, sub: Submission) -> Path:
        for ext in ("zip", "tar.gz"):
            path = self.results / UPLOADS / f"{sub.archive_sha256}.{ext}"
            if path.is_file():
                return path
        return self.results / UPLOADS / f"{sub.archive_sha256}.tar.gz"

    def submit(self, team: Team, filename: str, stream: BinaryIO) -> Submission:
        """Queue the archive read from ``stream`` for the team. Reads at most
        ``upload_max_bytes`` + 1 bytes: more is refused (:class:`UploadRefused`, ``too_large``),
        and so is anything but a .zip or a .tar.gz (by its content) or an empty file; past the
        team's hourly cap, :class:`RateLimited`. Nothing is stored when it is refused."""
        if team.revoked:
            raise UploadRefused(f"team {team.name!r} is revoked")
        self._check_rate(team)
        cap = self.competition.upload_max_bytes
        folder = self.results / UPLOADS
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=".upload-", dir=folder)
        tmp = Path(tmp_name)
        try:
            digest = hashlib.sha256()
            size = 0
            head = b""
            with os.fdopen(fd, "wb") as out:
                while size <= cap:
                    chunk = stream.read(min(_CHUNK, cap + 1 - size))
                    if not chunk:
                        break
                    if len(head) < 8:
                        head += chunk[: 8 - len(head)]
                    size += len(chunk)
                    digest.update(chunk)
                    out.write(chunk)
            if size > cap:
                raise UploadRefused(f"the archive is larger than the {cap:,} bytes an upload may be", too_large=True)
            if size == 0:
                raise UploadRefused("the archive is empty")
            kind = archive_kind(head)
            if kind is None:
                raise UploadRefused("not a .zip or .tar.gz archive (by its content)")
            sha = digest.hexdigest()
            os.replace(tmp, folder / f"{sha}.{kind}")
        finally:
            tmp.unlink(missing_ok=True)
        stamp = now()
        with transaction(self.results) as conn:
            cur = conn.execute(
                "INSERT INTO submissions (team_id, created, updated, status, archive_name, archive_sha256, archive_bytes)"
                " VALUES (?, ?, ?, 'queued', ?, ?, ?)",
                (team.id, stamp, stamp, clean_file_name(filename), sha, size),
            )
            new_id = cur.lastrowid
        found = self.get(int(new_id))  # type: ignore[arg-type]
        assert found is not None
        return found

    def _check_rate(self, team: Team) -> None:
        per_hour = self.competition.uploads_per_hour
        with connect(self.results) as conn:
            rows = conn.execute(
                "SELECT created FROM submissions WHERE team_id = ? AND created > ? ORDER BY created DESC LIMIT ?",
                (team.id, ago(3600), per_hour),
            ).fetchall()
        if len(rows) >= per_hour:
            raise RateLimited(f"team {team.name!r} has uploaded {per_hour} archives in the last hour", seconds_until(rows[-1][0], 3600))

    def get(self, submission_id: int) -> Submission | None:
        with connect(self.results) as conn:
            row = conn.execute(f"SELECT {_COLUMNS} {_FROM} WHERE s.id = ?", (submission_id,)).fetchone()
        return None if row is None else _submission(row)

    def for_team(self, team_id: int) -> list[Submission]:
        """The team's submissions, newest first."""
        with connect(self.results) as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} {_FROM} WHERE s.team_id = ? ORDER BY s.id DESC LIMIT 1000", (team_id,))
            return [_submission(r) for r in rows]

    def recent(self, n: int = 50) -> list[Submission]:
        """The last ``n`` submissions of every team, newest first."""
        with connect(self.results) as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} {_FROM} ORDER BY s.id DESC LIMIT ?", (max(0, min(int(n), 10_000)),))
            return [_submission(r) for r in rows]

    def queued(self) -> list[Submission]:
        """What waits for validation, oldest first (those a killed ladder left half-done too)."""
        with connect(self.results) as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} {_FROM} WHERE s.status IN ('queued', 'building', 'validating') ORDER BY s.id LIMIT 1000"
            )
            return [_submission(r) for r in rows]

    def counts(self) -> dict[str, int]:
        with connect(self.results) as conn:
            found = dict(conn.execute("SELECT status, count(*) FROM submissions GROUP BY status").fetchall())
        return {status: int(found.get(status, 0)) for status in STATUSES}

    def accepted(self) -> list[Submission]:
        """Each team's latest accepted submission (the version the ladder plays), by team."""
        with connect(self.results) as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} {_FROM} WHERE s.id IN (SELECT max(id) FROM submissions WHERE status = 'accepted' "
                "GROUP BY team_id) AND t.revoked IS NULL ORDER BY t.name"
            )
            return [_submission(r) for r in rows]
