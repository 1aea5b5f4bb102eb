"""The validation queue, in the ladder's process: each queued submission in order, unpacked
(:mod:`arena.competition.archives`) into a staging folder, built (``building``) and put through
`arena validate` in the competition's sandbox (``validating``), then ``accepted`` (its files
copied to ``RESULTS/submissions/<team>/<version>/<bot>``, the version the ladder plays from
then on) or ``rejected`` with a one-line reason; the report and the build log are kept either
way. A submission a killed process left half-way is validated again from its archive."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from arena.authoring.validate import validate_bot
from arena.bots import BotError
from arena.bots.files import copy_bot
from arena.bots.manifest import find_bot, name_skeleton
from arena.bots.prepare import prepare_bot
from arena.competition.archives import bot_root, unpack_archive
from arena.competition.config import Competition
from arena.competition.db import now, transaction
from arena.competition.errors import UploadRefused
from arena.competition.submissions import Submission, Submissions

SUBMISSIONS = "submissions"
STAGING = ".staging"
BUILD_LOG_KEEP = 64 << 10  # the last bytes of a build's log kept with the submission
REASON_MAX = 300


def _one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= REASON_MAX else line[: REASON_MAX - 1] + "…"


def _set(results: Path, sub_id: int, status: str, **fields: object) -> None:
    names = ", ".join(f"{k} = ?" for k in fields)
    with transaction(results) as conn:
        conn.execute(
            f"UPDATE submissions SET status = ?, updated = ?{', ' + names if names else ''} WHERE id = ?",
            (status, now(), *fields.values(), sub_id),
        )


def _build_log(cache: Path, name: str, content_hash: str) -> str | None:
    logs = sorted(cache.glob(f"{name}-{content_hash}-*/build.log"))
    if not logs:
        return None
    with logs[-1].open("rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - BUILD_LOG_KEEP))
        return f.read().decode("utf-8", "replace")


def validate_next(results: Path, competition: Competition) -> Submission | None:
    """Validate the oldest waiting submission; None when none waits. Never raises for what
    the archive or the bot does wrong: that is the submission's reason."""
    subs = Submissions(results, competition)
    waiting = subs.queued()
    if not waiting:
        return None
    sub = waiting[0]
    staging = results / STAGING / f"submission-{sub.id}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        _validate(results, competition, subs, sub, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return subs.get(sub.id)


def _reject(results: Path, sub: Submission, reason: str, **fields: object) -> None:
    _set(results, sub.id, "rejected", reason=_one_line(reason), **fields)


def _validate(results: Path, competition: Competition, subs: Submissions, sub: Submission, staging: Path) -> None:
    _set(results, sub.id, "building")
    unpacked = staging / "files"
    unpacked.mkdir()
    try:
        unpack_archive(
            subs.archive_path(sub), unpacked,
            max_files=competition.upload_max_files, max_bytes=competition.upload_max_unpacked_bytes,
        )
        root = bot_root(unpacked)
    except UploadRefused as exc:
        return _reject(results, sub, exc.reason)
    except OSError as exc:
        return _reject(results, sub, f"the archive cannot be read: {exc.strerror or exc}")
    # The bot folder is named after the bot, as a bots folder holds it.
    try:
        manifest = find_bot(root)
    except BotError as exc:
        return _reject(results, sub, str(exc))
    fixed = _name_problem(results, sub, manifest.name)
    if fixed:
        return _reject(results, sub, fixed, bot_name=manifest.name)
    sandbox = competition.sandbox()
    cache = results / "build"
    try:
        prepare_bot(manifest, cache, sandbox)
    except (BotError, OSError) as exc:
        log = _build_log(cache, manifest.name, manifest.content_hash)
        return _reject(results, sub, f"build failed: {exc}", bot_name=manifest.name, build_log=log or str(exc))
    log = _build_log(cache, manifest.name, manifest.content_hash)
    _set(results, sub.id, "validating", bot_name=manifest.name, build_log=log)
    report = validate_bot(root, competition.time(), build_cache=cache, sandbox=sandbox)
    doc = json.dumps(report.to_dict())
    if not report.passed:
        failed = report.failed
        reason = f"{len(failed)} check(s) failed ({', '.join(c.name for c in failed)}); the first: {failed[0].message}"
        return _reject(results, sub, reason, report=doc)
    version = _next_version(results, sub.team_id)
    home = results / SUBMISSIONS / sub.team / str(version)
    shutil.rmtree(home, ignore_errors=True)  # a copy a killed process left unfinished
    home.mkdir(parents=True)
    try:
        copied = copy_bot(manifest.path, home / manifest.name)
    except (BotError, OSError) as exc:
        shutil.rmtree(home, ignore_errors=True)
        return _reject(results, sub, f"cannot keep the bot's files: {exc}", report=doc)
    if copied != manifest.content_hash:
        shutil.rmtree(home, ignore_errors=True)
        return _reject(results, sub, "the bot's files changed while they were validated", report=doc)
    _set(results, sub.id, "accepted", version=version, report=doc, reason=None,
         bot_key=f"{manifest.name}@{manifest.content_hash[:8]}")


def _next_version(results: Path, team_id: int) -> int:
    with transaction(results) as conn:
        (last,) = conn.execute("SELECT max(version) FROM submissions WHERE team_id = ? AND status = 'accepted'", (team_id,)).fetchone()
    return int(last or 0) + 1


def _name_problem(results: Path, sub: Submission, name: str) -> str | None:
    """Why the bot may not be this team's under ``name``: a team's bot name is fixed by its
    first accepted version, and no two teams' bots may look alike."""
    with transaction(results) as conn:
        rows = conn.execute(
            "SELECT DISTINCT s.team_id, t.name, s.bot_name FROM submissions s JOIN teams t ON t.id = s.team_id "
            "WHERE s.status = 'accepted'"
        ).fetchall()
    for team_id, team, bot_name in rows:
        if team_id == sub.team_id and bot_name != name:
            return f"team {sub.team!r} plays bot {bot_name!r}: a team's bot name is fixed (this archive holds {name!r})"
        if team_id != sub.team_id and name_skeleton(bot_name) == name_skeleton(name):
            return f"bot name {name!r} is taken by team {team!r} ({bot_name!r}): give yours another name"
    return None
