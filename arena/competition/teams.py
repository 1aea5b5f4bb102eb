"""Teams and their tokens. A token is 256 random bits, printed once when the team is made;
the store keeps only its argon2 hash and its first 8 characters (to find the row without
trying every hash). :meth:`Teams.authenticate` always runs one argon2 verification, against a
dummy hash when no row matches, so that the time taken does not say whether a prefix exists.

``Teams(results, competition)``: the competition is needed only by :meth:`Teams.register`
(its invite code); ``Teams(results)`` refuses self-registration."""

from __future__ import annotations

import hmac
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from arena.competition.config import Competition
from arena.competition.db import connect, now, transaction
from arena.competition.errors import CompetitionError, Forbidden, NotFound

TEAM_NAME_RULE = "1 to 32 letters, digits, '-', '_' or '.', starting with a letter or digit"
_TEAM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
PREFIX_CHARS = 8
_TOKEN_MAX = 200  # longer is not a token of ours: refused before hashing


def _hasher():  # noqa: ANN202  (argon2 is the `serve` extra's: imported when a token is made or checked)
    try:
        from argon2 import PasswordHasher
    except ImportError:
        raise CompetitionError(
            "teams need the argon2-cffi package: python3 -m pip install 'sushigo-arena[serve]'"
        ) from None
    # Tokens are random, not chosen by people: the hash guards a stolen database, and the
    # OWASP minimum for argon2id is plenty (about 20 ms a check).
    return PasswordHasher(time_cost=2, memory_cost=19_456, parallelism=1)


@dataclass(frozen=True, slots=True)
class Team:
    id: int
    name: str
    is_admin: bool
    created: str
    revoked: str | None

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "name": self.name, "is_admin": self.is_admin, "created": self.created, "revoked": self.revoked}


def check_team_name(name: str) -> str:
    if not isinstance(name, str) or not _TEAM_NAME.fullmatch(name):
        raise CompetitionError(f"team name {name!r:.60}: must be {TEAM_NAME_RULE}")
    return name


_COLUMNS = "id, name, is_admin, created, revoked"


def _team(row: tuple) -> Team:
    return Team(id=row[0], name=row[1], is_admin=bool(row[2]), created=row[3], revoked=row[4])


class Teams:
    """The teams of the competition whose store is in ``results``."""

    def __init__(self, results: Path, competition: Competition | None = None) -> None:
        self.results = results
        self.competition = competition  # its invite code, for register(); None: no self-registration
        self._dummy: str | None = None

    def add(self, name: str, admin: bool = False) -> tuple[Team, str]:
        """A new team and its token (shown once: only its hash is kept). A name taken, in
        any case, is refused."""
        check_team_name(name)
        token = secrets.token_urlsafe(32)
        hashed = _hasher().hash(token)
        with transaction(self.results) as conn:
            taken = conn.execute("SELECT name FROM teams WHERE lower(name) = lower(?)", (name,)).fetchone()
            if taken:
                raise CompetitionError(f"team name {name!r} is taken (by team {taken[0]!r})")
            cur = conn.execute(
                "INSERT INTO teams (name, token_hash, token_prefix, is_admin, created) VALUES (?, ?, ?, ?, ?)",
                (name, hashed, token[:PREFIX_CHARS], int(admin), now()),
            )
            row = conn.execute(f"SELECT {_COLUMNS} FROM teams WHERE id = ?", (cur.lastrowid,)).fetchone()
        return _team(row), token

    def register(self, name: str, invite_code: str | None) -> tuple[Team, str]:
        """Self-registration: a new (not admin) team if ``invite_code`` is the competition's
        (``Teams(results, competition)``); refused when it has none."""
        expected = self.competition.invite_code if self.competition is not None else None
        if expected is None:
            raise Forbidden("this competition takes no self-registration: ask the organiser for a team token")
        if not isinstance(invite_code, str) or not hmac.compare_digest(invite_code.encode(), expected.encode()):
            raise Forbidden("wrong invite code")
        return self.add(name, admin=False)

    def list(self) -> list[Team]:
        with connect(self.results) as conn:
            return [_team(r) for r in conn.execute(f"SELECT {_COLUMNS} FROM teams ORDER BY id")]

    def get(self, name: str) -> Team | None:
        with connect(self.results) as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM teams WHERE name = ?", (name,)).fetchone()
        return None if row is None else _team(row)

    def by_id(self, team_id: int) -> Team | None:
        with connect(self.results) as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM teams WHERE id = ?", (team_id,)).fetchone()
        return None if row is None else _team(row)

    def revoke(self, name: str) -> Team:
        """The team's token no longer authenticates (its bots and games stay)."""
        with transaction(self.results) as conn:
            row = conn.execute("SELECT id, revoked FROM teams WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise NotFound(f"no team named {name!r:.60}")
            if row[1] is None:
                conn.execute("UPDATE teams SET revoked = ? WHERE id = ?", (now(), row[0]))
            team = conn.execute(f"SELECT {_COLUMNS} FROM teams WHERE id = ?", (row[0],)).fetchone()
        return _team(team)

    def authenticate(self, token: str) -> Team | None:
        """The team whose token this is, None for any other string (a revoked team's too)."""
        from argon2.exceptions import InvalidHashError, VerificationError

        hasher = _hasher()
        if not isinstance(token, str) or not 16 <= len(token) <= _TOKEN_MAX or not token.isascii():
            token = "x" * 43  # still one verification below
        with connect(self.results) as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS}, token_hash FROM teams WHERE token_prefix = ?", (token[:PREFIX_CHARS],)
            ).fetchall()
        if not rows:
            if self._dummy is None:
                self._dummy = hasher.hash(secrets.token_urlsafe(32))
            rows = [(None, None, None, None, None, self._dummy)]
        found: Team | None = None
        for row in rows:
            try:
                hasher.verify(row[5], token)
            except (VerificationError, InvalidHashError):
                continue
            if row[0] is not None and row[4] is None:
                found = _team(row[:5])
        return found
