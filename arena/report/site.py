"""The HTML report of a tournament: a static site that opens from ``file://``, with no
server and no network.

Layout of a report folder (``results/<tournament>/report/`` by default)::

    index.html      the leaderboard, the ratings as games accumulate, head to head, faults
    games.html      every game, filterable by bot (``games.html#bot=KEY``)
    bot.html        one bot (``bot.html#KEY``): its results per opponent and per seat, faults, games
    replay.html     the replay viewer (``replay.html#GAME`` or ``#GAME/ROUND.TURN``)
    cards.js        the card table, generated from :mod:`arena.engine.cards`
    data.js         the tournament's figures (``window.ARENA_REPORT``)
    games/GAME.js   one file per game for the viewer (``window.ARENA_GAMES[GAME]``)
    assets/         the style sheet and scripts, copied from the package
    facts.json      what the last build read of each game's replay (faults, problems), the
                    figures as sums and the games list, and which rows of the store they
                    were made of: so that an update reads only the new rows and replays
    report.json     what made this folder (so that a rebuild may replace it) and of which
                    inputs (so that an unchanged report is left as it is); written last

Chromium does not let a page read local files with ``fetch()`` from ``file://``, but
it runs classic scripts from there: so every piece of data is a small script that sets a
global, and the viewer loads the one game it shows. Nothing of a 1,000-game tournament is
loaded at once except ``data.js`` (a few hundred bytes per game).

This module writes the site's files from plain data: the tournament's figures
(:mod:`arena.report.figures`) and each game's view (:mod:`arena.report.viewer`); it draws
nothing itself. The pages are drawn in the browser by the scripts in ``arena/report/assets``,
which only ever insert text (bot names, debug values and stderr are the bots' words).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import json
import os
import shutil
import stat
import string
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import msgspec

from arena import __version__
from arena.errors import ArenaError
from arena.game.replay import MAX_FAULTS, FaultKind, Replay, ReplayError, Round, Seat, Turn, is_plain_name, plain_name
from arena.report.figures import (
    GENERATOR,
    Figures,
    FiguresMismatch,
    FiguresState,
    GameFacts,
    data_script,
    entry_text,
    figures_data,
    is_rated,
    read_game,
    row_problem,
    script_json,
)
from arena.report.viewer import REPORT_FORMAT, GameDataError, card_table, game_view
from arena.store.database import GameRow, Store, TournamentRow, replay_relpath
from arena.text import LINE_LIMIT, NAME_LIMIT, printable
from arena.tournament.standings import Standings, pick_tournament, standings

MANIFEST = "report.json"
#: The site's pages, all from one shell (assets/page.html): title, the page's name
#: for pages.js, the element the skip link goes to, what shows without JavaScript, scripts.
_DRAWN = "This report is drawn by JavaScript: allow scripts for this page."
_PAGE_SCRIPTS = ("cards.js", "data.js", "assets/common.js", "assets/pages.js")
_PAGE_SHELLS: dict[str, tuple[str, str, str, str, tuple[str, ...]]] = {
    "index.html": ("Leaderboard", "index", "main", _DRAWN, _PAGE_SCRIPTS),
    "games.html": ("Games", "games", "main", _DRAWN, _PAGE_SCRIPTS),
    "bot.html": ("Bot", "bot", "main", _DRAWN, _PAGE_SCRIPTS),
    "replay.html": (
        "Replay", "replay", "viewer", "The replay viewer needs JavaScript: allow scripts for this page.",
        ("cards.js", "assets/common.js", "assets/viewer.js"),
    ),
}
PAGES = tuple(_PAGE_SHELLS)
ASSETS = ("report.css", "common.js", "pages.js", "viewer.js")


class ReportError(ArenaError):
    """The report cannot be written as asked; the message names the folder or file."""


def _asset(name: str) -> str:
    return resources.files("arena.report").joinpath("assets", name).read_text(encoding="utf-8")


def _page(name: str) -> str:
    """One of :data:`PAGES`, from the shell they share."""
    title, page, main, noscript, scripts = _PAGE_SHELLS[name]
    return string.Template(_asset("page.html")).substitute(
        title=title, page=page, main=main, noscript=noscript,
        scripts="".join(f'<script src="{src}"></script>\n' for src in scripts),
    )


def default_report_dir(results: Path, tournament_id: str) -> Path:
    """``RESULTS/<tournament>/report``, the tournament id made safe as a folder name."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in tournament_id).lstrip(".") or "tournament"
    return results / safe / "report"


@dataclass(frozen=True, slots=True)
class ReportSummary:
    """What :func:`write_report` did: the report's games, files and bytes (all of it, not only
    what this call wrote), and ``written``, the files this call wrote (0: it was up to date)."""

    out: Path
    tournament: str
    games: int
    files: int
    bytes: int
    seconds: float
    problems: list[str]
    written: int = 0

    @property
    def index(self) -> Path:
        return self.out / "index.html"

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out), "index": str(self.index), "tournament": self.tournament, "games": self.games,
            "files": self.files, "bytes": self.bytes, "seconds": round(self.seconds, 3), "problems": self.problems,
            "written": self.written,
        }


def _check_replaceable(out: Path) -> None:
    if not out.exists():
        return
    if not out.is_dir():
        raise ReportError(f"{out}: is a file; the report needs a folder there")
    if not any(out.iterdir()):
        return
    try:
        made_by = json.loads(_read_limited(out / MANIFEST, _MANIFEST_LIMIT) or b"null").get("generator")
    except (ValueError, AttributeError):
        made_by = None
    if made_by != GENERATOR:
        raise ReportError(f"{out}: this folder holds files that are not an arena report; choose another --out")


# -- what the last build read -------------------------------------------------------------------
#
# facts.json keeps, per game of the report, what its replay gave (the faults' turns, or the
# problem that kept it out of the viewer) and the size of its games/GAME.js; the tournament's
# figures as sums (arena.report.figures.Figures), the games list's text, and which rows of the
# store they were made of (_Tie): so that an update reads only the rows after the last one it
# saw, and only those games' replays. It is signed with a key made from the store's deal key
# (which the report never shows), so that what it holds is taken only from this arena's own
# writing: a file changed by hand, or not signed, is not used. report.json, written last, says
# which inputs the report was made of (a digest of a few cheap figures of the store, see
# _inputs) and how its files were left: when they are the same, the report is left as it is
# without reading facts.json. Both files are read as hostile: bounded, decoded into strict
# types, and anything that does not fit makes a new report from the store.

FACTS = "facts.json"
FACTS_FORMAT = 2
_MANIFEST_LIMIT = 64 * 1024
_FACTS_BASE_LIMIT = 16 * 1024 * 1024
_PROBLEM_LIMIT = 4 * LINE_LIMIT
# A game's faults at most (MAX_FAULTS of them) and its problem, its entry of the games list
# and its sums (a few seats, a set).
_FACTS_PER_GAME = 64 * 1024
#: How far back a report sets its games/ folder's time when it is written, so that any later
#: change there (a file made, removed or renamed) gives the folder another time, even on a
#: file system whose clock ticks coarsely.
_FOLDER_TIME_BACK_NS = 10_000_000_000
_GameId = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
_Digest = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")]


class _Fact(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    """One game: the size of its games/GAME.js (0: none, it has a problem), the faults of its
    replay as ``(seat, kind, round, turn)``; for a game with a problem, the problem (for the
    summary of a report left as it is) and its replay file's signature (size and time), so
    that a replaced replay is noticed (and read again)."""

    size: Annotated[int, msgspec.Meta(ge=0, le=1 << 40)]
    faults: Annotated[list[tuple[Seat, FaultKind, Round, Turn]], msgspec.Meta(max_length=MAX_FAULTS)] = []
    problem: Annotated[str, msgspec.Meta(max_length=_PROBLEM_LIMIT)] = ""
    replay: Annotated[str, msgspec.Meta(max_length=64)] = ""


class _Tie(msgspec.Struct, forbid_unknown_fields=True):
    """Which rows of the store the figures were made of: every game row up to ``rowid`` (then
    holding game ``row_id``), ``linked`` of them the tournament's, the rows then not complete
    (a digest), the tournament's entrants, the database file; and what the report's game files
    add up to, and its games with a problem ``(game, replay signature, problem)``."""

    rowid: Annotated[int, msgspec.Meta(ge=0)]
    row_id: Annotated[str, msgspec.Meta(max_length=128)]
    linked: Annotated[int, msgspec.Meta(ge=0)]
    others: _Digest
    entrants: list[int]
    database: Annotated[str, msgspec.Meta(max_length=64)]
    files: Annotated[int, msgspec.Meta(ge=0)]
    file_bytes: Annotated[int, msgspec.Meta(ge=0)]
    problems: list[tuple[_GameId, Annotated[str, msgspec.Meta(max_length=64)], Annotated[str, msgspec.Meta(max_length=_PROBLEM_LIMIT)]]]


class _Facts(msgspec.Struct, forbid_unknown_fields=True):
    mac: _Digest  # first: the signature of everything after it (see _sign)
    format: int
    arena_version: Annotated[str, msgspec.Meta(max_length=64)]
    store: _Digest  # which results folder the replays were read from
    tournament: Annotated[str, msgspec.Meta(max_length=1024)]
    games: msgspec.Raw  # {game id: _Fact}, decoded only when needed
    tie: _Tie | None = None  # None: the store has no key to sign with; no update game by game
    figures: FiguresState | None = None
    listing: str = ""  # the games list of data.js, each seat's bot a SEAT_MARK


class _Manifest(msgspec.Struct):
    """report.json as this module reads it back (fields it does not know are ignored)."""

    generator: str
    format: int
    arena_version: Annotated[str, msgspec.Meta(max_length=64)]
    tournament: Annotated[str, msgspec.Meta(max_length=1024)]
    games: Annotated[int, msgspec.Meta(ge=0)]
    inputs: _Digest | None = None
    files: Annotated[int, msgspec.Meta(ge=0)] = 0
    bytes: Annotated[int, msgspec.Meta(ge=0)] = 0
    data_bytes: Annotated[int, msgspec.Meta(ge=0)] = 0
    facts_bytes: Annotated[int, msgspec.Meta(ge=0)] = 0
    games_folder_ns: Annotated[int, msgspec.Meta(ge=0)] = 0  # games/'s time as the report left it (0: unknown)
    problems: Annotated[int, msgspec.Meta(ge=0)] = 0


_FACTS_DECODER = msgspec.json.Decoder(_Facts)
_GAMES_DECODER = msgspec.json.Decoder(dict[_GameId, _Fact])
_MANIFEST_DECODER = msgspec.json.Decoder(_Manifest)
_ENCODER = msgspec.json.Encoder()
_MAC_HEAD = b'{"mac":"'


class _Distrust(Exception):
    """The earlier report's data does not fit the store: make the report anew."""


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def _store_id(store: Store) -> str:
    # A digest, not the path: the report is meant to be shared, the folder's place is not its business.
    return _digest(["results folder", str(store.root.resolve())])


def _database_id(store: Store) -> str:
    """The database file's identity (a digest: the report is shared): a store made again
    (``arena store rebuild``) is a new file."""
    try:
        info = store.path.stat()
    except OSError:
        return ""
    return _digest(["database", info.st_dev, info.st_ino])


def _signing_key(store: Store) -> bytes | None:
    key = store.stored_deal_key()
    return None if key is None else hmac.new(key, b"sushigo-arena report facts", hashlib.sha256).digest()


def _sign(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode()


def _inputs(store: Store, t: TournamentRow, table: Standings | None) -> str:
    """A digest of what the report is made of, from a few cheap queries: the tournament's row
    (every run stamps ``updated``), how many games it lists, the store's last game row and
    its rows that are not complete (a void game played again is a new row), the database
    file, its entrants and skipped bots, the leaderboard given (none: the store's own, a
    function of the rest), and the arena that writes the report."""
    linked, last, last_id, others = store.report_marks(t.id)
    return _digest({
        "report": [REPORT_FORMAT, FACTS_FORMAT, __version__],
        "store": _store_id(store),
        "database": _database_id(store),
        "tournament": [t.id, t.created, t.updated, t.players, t.variant, t.config],
        "rows": [linked, last, last_id],
        "others": others,
        "entrants": sorted(store.entrant_ids(t.id)),
        "named": store.entrants(t.id),
        "skipped": store.skipped(t.id),
        "table": None if table is None else table.to_dict(),
    })


def _read_limited(path: Path, limit: int) -> bytes | None:
    """The file's bytes, or None if it is missing, not a regular file or over ``limit``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if len(data) > limit else data


def _manifest(out: Path, t: TournamentRow) -> _Manifest | None:
    """The earlier report's report.json, if this arena's report format wrote it for this tournament."""
    raw = _read_limited(out / MANIFEST, _MANIFEST_LIMIT)
    if raw is None:
        return None
    try:
        manifest = _MANIFEST_DECODER.decode(raw)
    except msgspec.DecodeError:
        return None
    if (manifest.generator, manifest.format, manifest.arena_version, manifest.tournament) != (
        GENERATOR, REPORT_FORMAT, __version__, t.id
    ) or manifest.inputs is None:
        return None  # an older report, or another's: made anew once
    return manifest


@dataclass(slots=True)
class _Previous:
    manifest: _Manifest
    facts: _Facts
    _games: dict[str, _Fact] | None = None

    def games(self) -> dict[str, _Fact]:
        """Every game's fact (decoded on first use: an update of new games does not need them)."""
        if self._games is None:
            try:
                self._games = _GAMES_DECODER.decode(self.facts.games)
            except msgspec.DecodeError as exc:
                raise _Distrust(f"{FACTS}: {exc}") from None
        return self._games


def _previous(out: Path, store: Store, t: TournamentRow, manifest: _Manifest) -> _Previous | None:
    """The earlier report in ``out`` if it can be updated: written by this arena's report
    format for this tournament of this results folder, its facts whole, well formed and
    signed with this store's key (or, if the store has none, unsigned)."""
    raw = _read_limited(out / FACTS, _FACTS_BASE_LIMIT + _FACTS_PER_GAME * (manifest.games + 1))
    if raw is None:
        return None
    key = _signing_key(store)
    head = len(_MAC_HEAD) + 64
    if not raw.startswith(_MAC_HEAD) or raw[head : head + 2] != b'",':
        return None
    body = raw[head + 2 :]
    signed = hmac.compare_digest(raw[len(_MAC_HEAD) : head], _sign(key, body)) if key is not None else None
    if signed is False:
        return None  # not what this arena wrote for this store
    try:
        facts = _FACTS_DECODER.decode(raw)
    except msgspec.DecodeError:
        return None
    if (facts.format, facts.arena_version, facts.store, facts.tournament) != (
        FACTS_FORMAT, __version__, _store_id(store), t.id
    ):
        return None
    previous = _Previous(manifest, facts)
    if key is None or facts.tie is None or facts.figures is None:
        # Unsigned: only the per-game facts are taken (checked as hostile), never the figures.
        facts.tie = facts.figures = None
        facts.listing = ""
        try:
            if not all(is_plain_name(g) for g in previous.games()):
                return None
        except _Distrust:
            return None
    return previous


def _replay_signature(path: Path) -> str:
    try:
        info = path.stat()
    except OSError:
        return "missing"
    return f"{info.st_size}:{info.st_mtime_ns}"


def _game_files(out: Path) -> set[str]:
    try:
        return set(os.listdir(out / "games"))
    except OSError:
        return set()


def _folder_time(folder: Path) -> int:
    try:
        return folder.stat().st_mtime_ns
    except OSError:
        return 0


def _small_files() -> dict[str, bytes]:
    """The report's files that do not depend on the tournament: pages, assets, the card table."""
    files = {name: _page(name).encode() for name in PAGES}
    files.update({f"assets/{name}": _asset(name).encode() for name in ASSETS})
    files["cards.js"] = f"window.ARENA_CARDS={script_json(card_table())};\n".encode()
    return files


def _games_folder_unchanged(out: Path, m: _Manifest) -> bool:
    """Whether games/ is as the report left it, from its time alone: any file made, removed
    or renamed in it since gave it the time of that change (see :func:`_set_folder_time`)."""
    return m.games_folder_ns != 0 and _folder_time(out / "games") == m.games_folder_ns


def _set_folder_time(folder: Path) -> int:
    """Set the folder's time to a while ago and return it as the folder now has it (0: it
    could not be set): the next change in it, in the same tick of a coarse clock as the
    report's own writing or not, gives it another time."""
    try:
        info = folder.stat()
        os.utime(folder, ns=(info.st_atime_ns, time.time_ns() - _FOLDER_TIME_BACK_NS))
        return folder.stat().st_mtime_ns
    except OSError:
        return 0


def _up_to_date(out: Path, root: Path, m: _Manifest, previous: Callable[[], _Previous | None]) -> bool:
    """Whether every file of the earlier report is there as it was written: the small files
    byte for byte, data.js and facts.json of their recorded size, a game file for each game
    that has one and no other file in games/ (the folder's time, or its listing), and each
    problem game's replay unchanged. ``previous`` reads facts.json, only if needed."""
    for name, data in _small_files().items():
        if _read_limited(out / name, len(data)) != data:
            return False
    for name, size in (("data.js", m.data_bytes), (FACTS, m.facts_bytes)):
        try:
            if (out / name).stat().st_size != size:
                return False
        except OSError:
            return False
    if _games_folder_unchanged(out, m) and not m.problems:
        return True
    p = previous()
    if p is None:
        return False
    try:
        games = p.games()
    except _Distrust:
        return False
    if not _games_folder_unchanged(out, m) and _game_files(out) != {f"{gid}.js" for gid, f in games.items() if f.size}:
        return False
    return all(f.size or _replay_signature(root / replay_relpath(gid)) == f.replay for gid, f in games.items())


def _put(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` by a temporary file renamed over it: a reader sees the old
    file or the new one, never part of one."""
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}"
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_report(
    store: Store,
    tournament_id: str | None = None,
    out: Path | None = None,
    *,
    table: Standings | None = None,
) -> ReportSummary:
    """Write the report site of a tournament (default: the latest) to ``out`` (default
    :func:`default_report_dir`). An existing ``out`` is replaced only if it is empty or an
    earlier report. A game whose replay is missing or does not hold up is listed with the
    reason, and the rest builds.

    An earlier report of the same tournament is updated in place: only new games' files are
    written, each file by a temporary file renamed over it, the data files last, so that a
    page open in a browser sees the old report or the new one, and a killed update leaves the
    old report, which the next call completes. When the store only gained games after the
    rows the report saw, only those rows and replays are read (the figures are sums, kept in
    facts.json). One whose inputs did not change is left as it is. Any other folder is built
    anew beside ``out`` and then put in its place."""
    started = time.perf_counter()
    t = pick_tournament(store, tournament_id)
    out = out if out is not None else default_report_dir(store.root, t.id)
    _check_replaceable(out)
    inputs = _inputs(store, t, table)
    manifest = _manifest(out, t)
    if manifest is not None:
        loaded: list[_Previous | None] = []

        def previous() -> _Previous | None:
            if not loaded:
                loaded.append(_previous(out, store, t, manifest))
            return loaded[0]

        if manifest.inputs == inputs and _up_to_date(out, store.root, manifest, previous):
            problems = _problems(previous()) if manifest.problems else []
            size = manifest.bytes + len(_read_limited(out / MANIFEST, _MANIFEST_LIMIT) or b"")
            return ReportSummary(out, t.id, manifest.games, manifest.files + 1, size, time.perf_counter() - started, problems, 0)
        p = previous()
        if p is not None:
            try:
                return _write(store, t, out, table, inputs, p, started)
            except _Distrust:
                pass  # made anew below
    return _build(store, t, out, table, inputs, started)


def _problems(previous: _Previous | None) -> list[str]:
    if previous is None:
        return []
    if previous.facts.tie is not None:
        return [f"game {gid}: {problem}" for gid, _, problem in previous.facts.tie.problems]
    try:
        return [f"game {gid}: {f.problem}" for gid, f in previous.games().items() if f.problem]
    except _Distrust:
        return []


def _build(store: Store, t: TournamentRow, out: Path, table: Standings | None, inputs: str, started: float) -> ReportSummary:
    """The whole report in a new folder beside ``out``, then put in its place."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    except OSError as exc:
        raise ReportError(f"{out}: cannot create the report folder: {exc.strerror or exc}") from None
    try:
        (build / "assets").mkdir()
        (build / "games").mkdir()
        summary = _write(store, t, build, table, inputs, None, started)
        _swap_into_place(build, out)
    except OSError as exc:
        shutil.rmtree(build, ignore_errors=True)
        raise ReportError(f"{out}: cannot write the report: {exc.strerror or exc} ({exc.filename or out})") from None
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    return dataclasses.replace(summary, out=out)


def _write(
    store: Store, t: TournamentRow, out: Path, table: Standings | None, inputs: str,
    previous: _Previous | None, started: float,
) -> ReportSummary:
    """Write the report into ``out``: a new folder (``previous`` None) or the earlier report,
    updated in place (raises :class:`_Distrust` before any data file is written if its facts
    do not fit the store's games): with the new rows only if the store only gained rows."""
    try:
        if previous is not None and previous.facts.tie is not None:
            try:
                return _write_new_rows(store, t, out, table, inputs, previous, started)
            except (_Distrust, FiguresMismatch):
                pass  # the figures do not fit: every row is read again below
        return _write_files(store, t, out, table, inputs, previous, started)
    except FiguresMismatch as exc:
        raise _Distrust(str(exc)) from None
    except OSError as exc:
        if previous is None:
            raise
        raise ReportError(f"{out}: cannot update the report: {exc.strerror or exc} ({exc.filename or out})") from None


class _Writing:
    """What one call writes into the report folder: the game files (each a new game's, or one
    that went missing), and what it learns of each game's replay."""

    def __init__(self, store: Store, out: Path, in_place: bool) -> None:
        self.root, self.out, self.in_place = store.root, out, in_place
        self.written = 0
        self.problems: list[tuple[str, str, str]] = []
        self.files = 0
        self.file_bytes = 0

    def put(self, path: Path, data: bytes) -> None:
        if self.in_place:
            _put(path, data)
        else:
            path.write_bytes(data)  # a new folder: nobody reads it yet
        self.written += 1

    def read(self, game: GameRow) -> tuple[GameFacts, _Fact]:
        """Read a game's replay and write its file (or note its problem)."""
        problem = row_problem(self.root, game)
        signature = _replay_signature(self.root / game.replay) if not problem else ""
        got = read_game(self.root, game)
        if got.view is not None:
            text = f"(window.ARENA_GAMES=window.ARENA_GAMES||{{}})[{script_json(game.id)}]={script_json(got.view)};\n"
            data = text.encode()
            self.put(self.out / "games" / f"{game.id}.js", data)
            got.view = None  # written: let it go
            fact = _Fact(len(data), [tuple(f) for f in got.faults])
        else:
            fact = _Fact(0, problem=got.problem[:_PROBLEM_LIMIT], replay=signature)
        self.count(game.id, fact)
        return got, fact

    def count(self, gid: str, fact: _Fact) -> None:
        if fact.size:
            self.files += 1
            self.file_bytes += fact.size
        if fact.problem:
            self.problems.append((gid, fact.replay, fact.problem))


def _listed(entrants: set[int], game: GameRow) -> bool:
    """Whether the games list holds ``game`` (:func:`current_games`: among the latest entrants)."""
    return not entrants or all(s.bot.id in entrants for s in game.seats)


def _write_files(
    store: Store, t: TournamentRow, out: Path, table: Standings | None, inputs: str,
    previous: _Previous | None, started: float,
) -> ReportSummary:
    """Every row of the tournament read (an earlier report's game files kept where its facts
    fit the row: their replays are not read again)."""
    if previous is not None:  # (a folder of the earlier report may have been removed by hand)
        for folder in ("games", "assets"):
            (out / folder).mkdir(exist_ok=True)
    known = previous.games() if previous is not None else {}
    present = _game_files(out) if previous is not None else set()
    st = table if table is not None else standings(store, t.id, h2h=True)
    linked, last, last_id, _ = store.report_marks(t.id)
    entrants = store.entrant_ids(t.id)
    rows = store.games_after(t.id, 0)
    writing = _Writing(store, out, previous is not None)
    facts: dict[str, _Fact] = {}
    texts: list[str] = []
    fig = Figures(st.players, st.variant)
    for _, game in rows:
        if not _listed(entrants, game):
            continue
        fig.add_listed(game)
        problem = row_problem(store.root, game)
        fact = known.get(game.id) if not problem else None
        if fact is not None and fact.size and f"{game.id}.js" in present:
            if any(seat >= len(game.seats) for seat, _, _, _ in fact.faults):
                raise _Distrust(f"game {game.id}: a fault of a seat that is not at its table")
            got = GameFacts(faults=[list(f) for f in fact.faults])
            writing.count(game.id, fact)
        else:
            # A new game, a game whose file is gone, or one with a problem: its replay is read
            # (a problem's words are never taken from facts.json, only from the replay itself).
            got, fact = writing.read(game)
        facts[game.id] = fact
        texts.append(entry_text(game, got))
    fig.add_rated([g for _, g in rows if _listed(entrants, g) and is_rated(g, st)])
    top = max([last, *(r for r, _ in rows)])
    tie = _new_tie(store, t, top, len(rows), entrants, writing, top_id=last_id if top == last else None)
    wanted = {f"{gid}.js" for gid, f in facts.items() if f.size} if previous is not None else None
    return _finish(
        store, t, out, st, inputs, previous is not None, writing, fig, ",".join(texts), _ENCODER.encode(facts), tie,
        started, wanted=wanted,
    )


def _new_tie(
    store: Store, t: TournamentRow, rowid: int, linked: int, entrants: set[int], writing: _Writing,
    *, top_id: str | None,
) -> _Tie:
    _, _, _, others = store.report_marks(t.id, upto=rowid)
    row_id = top_id if top_id is not None else (store.game_id_at(rowid) or "")
    return _Tie(
        rowid, row_id, linked, _digest(others), sorted(entrants), _database_id(store),
        writing.files, writing.file_bytes, writing.problems,
    )


def _write_new_rows(
    store: Store, t: TournamentRow, out: Path, table: Standings | None, inputs: str,
    previous: _Previous, started: float,
) -> ReportSummary:
    """The earlier report's figures and games list, with the rows after the last one it saw:
    only if nothing it was made of has changed (its rows, their status, the entrants, the
    database file, the problem games' replays, the leaderboard's format), else raises
    :class:`_Distrust` before anything is written."""
    facts = previous.facts
    tie, state = facts.tie, facts.figures
    assert tie is not None and state is not None
    st = table if table is not None else standings(store, t.id, h2h=True)
    if (state.players, state.variant) != (st.players, st.variant) or tie.database != _database_id(store):
        raise _Distrust("another format, or another database")
    linked, last, last_id, others = store.report_marks(t.id, upto=tie.rowid)
    if _digest(others) != tie.others or (tie.rowid and store.game_id_at(tie.rowid) != tie.row_id):
        raise _Distrust("rows the report read have changed")
    entrants = store.entrant_ids(t.id)
    old = set(tie.entrants)
    if entrants != old and (not old or not old <= entrants or store.seats_of_bots(entrants - old, tie.rowid)):
        raise _Distrust("the entrants changed")
    if any(_replay_signature(store.root / replay_relpath(gid)) != sig for gid, sig, _ in tie.problems):
        raise _Distrust("a problem game's replay changed")
    rows = store.games_after(t.id, tie.rowid)
    if linked != tie.linked + len(rows):
        raise _Distrust("the tournament's games changed")
    fig = Figures.from_state(state)
    (out / "assets").mkdir(exist_ok=True)
    (out / "games").mkdir(exist_ok=True)
    writing = _Writing(store, out, True)
    writing.files, writing.file_bytes, writing.problems = tie.files, tie.file_bytes, list(tie.problems)
    wanted: set[str] | None = None
    if not _games_folder_unchanged(out, previous.manifest):
        # Something in games/ changed: put back the files of the report's games that went missing.
        present = _game_files(out)
        known = previous.games()
        wanted = {f"{gid}.js" for gid, f in known.items() if f.size}
        missing = {name[:-3] for name in wanted - present}
        if missing:
            by_id = {g.id: g for _, g in store.games_after(t.id, 0) if g.id in missing}
            for gid in sorted(missing):
                _restore_file(store, out, by_id.get(gid), gid, known[gid], writing)
    new_facts: dict[str, _Fact] = {}
    texts: list[str] = []
    listed = [g for _, g in rows if _listed(entrants, g)]
    for game in listed:
        fig.add_listed(game)
        got, fact = writing.read(game)
        new_facts[game.id] = fact
        texts.append(entry_text(game, got))
    fig.add_rated([g for g in listed if is_rated(g, st)])
    listing = facts.listing + ("," if facts.listing and texts else "") + ",".join(texts)
    games = _joined(facts.games, _ENCODER.encode(new_facts))
    top = max([last, *(r for r, _ in rows)])
    tie = _new_tie(store, t, top, linked, entrants, writing, top_id=last_id if top == last else None)
    if wanted is not None:
        wanted |= {f"{gid}.js" for gid, f in new_facts.items() if f.size}
    return _finish(store, t, out, st, inputs, True, writing, fig, listing, games, tie, started, wanted=wanted)


def _restore_file(store: Store, out: Path, game: GameRow | None, gid: str, fact: _Fact, writing: _Writing) -> None:
    """Write again the file of a game of the report that went missing, from its replay, if
    the replay still gives what the report shows of it (else the report is made anew)."""
    if game is None:
        raise _Distrust(f"game {gid}: no longer in the store")
    got = read_game(store.root, game)
    if got.view is None or [tuple(f) for f in got.faults] != [tuple(f) for f in fact.faults]:
        raise _Distrust(f"game {gid}: its replay no longer gives what the report shows")
    text = f"(window.ARENA_GAMES=window.ARENA_GAMES||{{}})[{script_json(gid)}]={script_json(got.view)};\n"
    data = text.encode()
    if len(data) != fact.size:
        raise _Distrust(f"game {gid}: its replay no longer gives what the report shows")
    writing.put(out / "games" / f"{gid}.js", data)


def _joined(old: bytes, new: bytes) -> bytes:
    """Two JSON objects' members in one object (both as msgspec writes them: ``{...}``)."""
    if new == b"{}":
        return bytes(old)
    if bytes(old) == b"{}":
        return new
    return bytes(old)[:-1] + b"," + new[1:]


def _finish(
    store: Store, t: TournamentRow, out: Path, st: Standings, inputs: str, in_place: bool, writing: _Writing,
    fig: Figures, listing: str, games: bytes, tie: _Tie, started: float, *, wanted: set[str] | None,
) -> ReportSummary:
    """Write the small files that differ, then the data files: facts.json, data.js and, the
    very last, report.json; then remove what an update leaves behind (in games/, only if it
    was listed: ``wanted``, its files)."""
    data, places = figures_data(fig, t, st)
    data_js = data_script(data, listing, fig.seat_numbers(), places)
    files, size = 0, 0
    for name, content in _small_files().items():
        if not in_place or _read_limited(out / name, len(content)) != content:
            writing.put(out / name, content)
        files, size = files + 1, size + len(content)
    key = _signing_key(store)
    facts = _Facts(
        "0" * 64, FACTS_FORMAT, __version__, _store_id(store), t.id, msgspec.Raw(games),
        tie if key is not None else None, fig.state() if key is not None else None, listing if key is not None else "",
    )
    facts_data = _ENCODER.encode(facts)
    head = len(_MAC_HEAD) + 64
    if key is not None:
        facts_data = facts_data[: len(_MAC_HEAD)] + _sign(key, facts_data[head + 2 :]) + facts_data[head:]
    files += writing.files + 2
    size += writing.file_bytes + len(facts_data) + len(data_js)
    games_listed = fig.listed
    # The data files last, report.json the very last: until it is written, the next call sees
    # inputs other than its own and completes the update.
    writing.put(out / FACTS, facts_data)
    writing.put(out / "data.js", data_js)
    manifest = {
        "generator": GENERATOR, "format": REPORT_FORMAT, "arena_version": __version__, "tournament": t.id,
        "games": games_listed, "inputs": inputs, "files": files, "bytes": size,
        "data_bytes": len(data_js), "facts_bytes": len(facts_data),
        "games_folder_ns": _set_folder_time(out / "games"), "problems": len(writing.problems),
    }
    manifest_data = (json.dumps(manifest, indent=2) + "\n").encode()
    writing.put(out / MANIFEST, manifest_data)
    if in_place:
        _remove_stale(out, wanted)
    problems = [f"game {gid}: {problem}" for gid, _, problem in writing.problems]
    return ReportSummary(
        out, t.id, games_listed, files + 1, size + len(manifest_data), time.perf_counter() - started, problems,
        writing.written,
    )


def _remove_stale(out: Path, wanted: set[str] | None) -> None:
    """Remove what an update leaves behind: the files of games the report no longer lists,
    any other file in games/ (``wanted``: the files it keeps there; None: games/ is left as
    it is, nothing changed there), and a killed update's temporary files."""
    for name in _game_files(out) - wanted if wanted is not None else ():
        with contextlib.suppress(OSError):
            (out / "games" / name).unlink()
    for folder in (out, out / "assets"):
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                if name.startswith(".") and ".tmp-" in name:
                    with contextlib.suppress(OSError):
                        (folder / name).unlink()


def _swap_into_place(build: Path, out: Path) -> None:
    old = None
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        out.rename(old)
    build.chmod(0o755)  # mkdtemp makes it private; a report is meant to be read
    try:
        build.rename(out)
    except OSError:
        if old is not None:
            old.rename(out)  # the earlier report stays in place
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


# -- one game in one file ------------------------------------------------------------------------


def replay_page(replay: Replay) -> str:
    """A single HTML file that shows one game in the viewer: style, scripts and data inlined,
    nothing else needed (to send to a friend). Raises :class:`GameDataError` for a replay
    whose turns and events disagree."""
    view = game_view(replay)
    css, common, viewer = _asset("report.css"), _asset("common.js"), _asset("viewer.js")
    for name, text, closer in (("report.css", css, "</style"), ("common.js", common, "</script"), ("viewer.js", viewer, "</script")):
        if closer in text.lower():
            raise AssertionError(f"{name} contains {closer}> and cannot be inlined")
    data = (
        f"window.ARENA_CARDS={script_json(card_table())};"
        f"window.ARENA_GAMES={{{script_json(replay.game_id)}:{script_json(view)}}};"
    )
    # The viewer finds the game by this id among the data, whose strings are made printable.
    game_id = printable(replay.game_id, multiline=True)
    title = f"Sushi Go! Arena · game {printable(replay.game_id, limit=NAME_LIMIT)}"
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_escape(title)}</title>\n<style>\n{css}</style>\n</head>\n"
        f'<body data-page="replay" data-game="{_escape(game_id)}">\n'
        '<a class="skip" href="#viewer">Skip to the game</a>\n'
        '<header class="top"><p class="brand">Sushi Go! Arena</p></header>\n'
        '<main id="viewer" tabindex="-1"><noscript>This replay viewer needs JavaScript.</noscript></main>\n'
        f"<script>{data}</script>\n<script>\n{common}</script>\n<script>\n{viewer}</script>\n"
        "</body>\n</html>\n"
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def write_replay_page(replay: Replay, out: Path) -> Path:
    """Write :func:`replay_page` to ``out`` (a folder gets ``GAME.html`` inside it, where
    GAME, the game's id, must be a plain name: never a path of its own)."""
    try:
        name = plain_name(replay.game_id, where=f"game {replay.game_id!r:.40}", field="game_id")
        page = replay_page(replay)
    except ReplayError as exc:
        raise ReportError(str(exc)) from None
    except GameDataError as exc:
        raise ReportError(f"game {replay.game_id}: replay does not hold up: {exc}") from None
    target = out / f"{name}.html" if out.is_dir() else out
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.name}.tmp"
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(target)
    except OSError as exc:
        raise ReportError(f"{target}: cannot write: {exc.strerror or exc}") from None
    return target
