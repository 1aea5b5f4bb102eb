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
    facts.json      what the last build read of each game's replay (faults, problems), so
                    that an update reads only the new games' replays
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
import json
import os
import shutil
import stat
import string
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import msgspec

from arena import __version__
from arena.errors import ArenaError
from arena.game.replay import MAX_FAULTS, FaultKind, Replay, ReplayError, Round, Seat, Turn, is_plain_name, plain_name
from arena.report.figures import GENERATOR, GameFacts, read_game, report_data, row_problem
from arena.report.viewer import REPORT_FORMAT, GameDataError, card_table, game_view
from arena.store.database import GameRow, Store, TournamentRow, replay_relpath
from arena.text import LINE_LIMIT, NAME_LIMIT, printable, visible_json
from arena.tournament.standings import (
    Standings,
    pick_tournament,
)

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


def script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<`` can close it or open a comment
    (``</script>``, ``<!--`` in a bot's stderr stay text), and no string holds a control
    character, a bidi control or a line separator: each reads as its visible escape
    (:func:`arena.text.visible_json`), as a terminal would show it."""
    return visible_json(json.dumps(value, ensure_ascii=False, separators=(",", ":"))).replace("<", "\\u003c")


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
# problem that kept it out of the viewer) and the size of its games/GAME.js, so that an update
# reads only the replays of new games. report.json, written last, says which inputs the report
# was made of (a digest of the store's figures, see _inputs): when they are the same and every
# file is in place, the report is left as it is. Both files are read as hostile: bounded,
# decoded into strict types, and anything that does not fit makes a new report from the store.

FACTS = "facts.json"
FACTS_FORMAT = 1
_MANIFEST_LIMIT = 64 * 1024
_FACTS_BASE_LIMIT = 16 * 1024 * 1024
_PROBLEM_LIMIT = 4 * LINE_LIMIT
_FACTS_PER_GAME = 16 * 1024  # a game's faults at most (MAX_FAULTS of them) and its problem
_GameId = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
_Digest = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")]


class _Fact(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    """One game: the size of its games/GAME.js (0: none, it has a problem), the faults of its
    replay as ``(seat, kind, round, turn)``; for a game with a problem, the problem (for the
    summary of a report left as it is: an update reads such a game's replay again) and its
    replay file's signature (size and time), so that a replaced replay is noticed."""

    size: Annotated[int, msgspec.Meta(ge=0, le=1 << 40)]
    faults: Annotated[list[tuple[Seat, FaultKind, Round, Turn]], msgspec.Meta(max_length=MAX_FAULTS)] = []
    problem: Annotated[str, msgspec.Meta(max_length=_PROBLEM_LIMIT)] = ""
    replay: Annotated[str, msgspec.Meta(max_length=64)] = ""


class _Facts(msgspec.Struct, forbid_unknown_fields=True):
    format: int
    arena_version: Annotated[str, msgspec.Meta(max_length=64)]
    store: _Digest  # which results folder the replays were read from
    tournament: Annotated[str, msgspec.Meta(max_length=1024)]
    games: dict[_GameId, _Fact]


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


_FACTS_DECODER = msgspec.json.Decoder(_Facts)
_MANIFEST_DECODER = msgspec.json.Decoder(_Manifest)
_ENCODER = msgspec.json.Encoder()


class _Distrust(Exception):
    """The earlier report's data does not fit the store: make the report anew."""


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def _store_id(store: Store) -> str:
    # A digest, not the path: the report is meant to be shared, the folder's place is not its business.
    return _digest(["results folder", str(store.root.resolve())])


def _inputs(store: Store, t: TournamentRow, table: Standings | None) -> str:
    """A digest of what the report is made of, from a few cheap queries: the tournament's row
    (every run stamps ``updated``), how many of its games are complete, its void games (a
    void game played again is complete), its entrants and skipped bots, the leaderboard given
    (none: the store's own, a function of the rest), and the arena that writes the report."""
    return _digest({
        "report": [REPORT_FORMAT, FACTS_FORMAT, __version__],
        "store": _store_id(store),
        "tournament": [t.id, t.created, t.updated, t.players, t.variant, t.config],
        "complete": store.count_games(t.id),
        "void": [g.id for g in store.games(t.id, status="void")],
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


@dataclass(slots=True)
class _Previous:
    manifest: _Manifest
    facts: _Facts


def _previous(out: Path, store: Store, t: TournamentRow) -> _Previous | None:
    """The earlier report in ``out`` if it can be updated: written by this arena's report
    format for this tournament of this results folder, its data files whole and well formed."""
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
    games = store.count_games(t.id) + manifest.games
    raw = _read_limited(out / FACTS, _FACTS_BASE_LIMIT + _FACTS_PER_GAME * games)
    if raw is None:
        return None
    try:
        facts = _FACTS_DECODER.decode(raw)
    except msgspec.DecodeError:
        return None
    if (facts.format, facts.arena_version, facts.store, facts.tournament) != (
        FACTS_FORMAT, __version__, _store_id(store), t.id
    ) or not all(is_plain_name(g) for g in facts.games):
        return None
    return _Previous(manifest, facts)


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


def _small_files() -> dict[str, bytes]:
    """The report's files that do not depend on the tournament: pages, assets, the card table."""
    files = {name: _page(name).encode() for name in PAGES}
    files.update({f"assets/{name}": _asset(name).encode() for name in ASSETS})
    files["cards.js"] = f"window.ARENA_CARDS={script_json(card_table())};\n".encode()
    return files


def _up_to_date(out: Path, root: Path, previous: _Previous) -> bool:
    """Whether every file of the earlier report is there as it was written: the small files
    byte for byte, data.js and facts.json of their recorded size, a game file for each game
    that has one and no other file in games/, and each problem game's replay unchanged."""
    m, facts = previous.manifest, previous.facts
    for name, data in _small_files().items():
        if _read_limited(out / name, len(data)) != data:
            return False
    for name, size in (("data.js", m.data_bytes), (FACTS, m.facts_bytes)):
        try:
            if (out / name).stat().st_size != size:
                return False
        except OSError:
            return False
    if _game_files(out) != {f"{gid}.js" for gid, f in facts.games.items() if f.size}:
        return False
    return all(
        f.size or _replay_signature(root / replay_relpath(gid)) == f.replay for gid, f in facts.games.items()
    )


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
    old report, which the next call completes. One whose inputs did not change is left as it
    is. Any other folder is built anew beside ``out`` and then put in its place."""
    started = time.perf_counter()
    t = pick_tournament(store, tournament_id)
    out = out if out is not None else default_report_dir(store.root, t.id)
    _check_replaceable(out)
    inputs = _inputs(store, t, table)
    previous = _previous(out, store, t)
    if previous is not None:
        m = previous.manifest
        if m.inputs == inputs and _up_to_date(out, store.root, previous):
            problems = [f"game {gid}: {f.problem}" for gid, f in previous.facts.games.items() if f.problem]
            size = m.bytes + len(_read_limited(out / MANIFEST, _MANIFEST_LIMIT) or b"")
            return ReportSummary(out, t.id, m.games, m.files + 1, size, time.perf_counter() - started, problems, 0)
        try:
            return _write(store, t, out, table, inputs, previous, started)
        except _Distrust:
            pass  # made anew below
    return _build(store, t, out, table, inputs, started)


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
    do not fit the store's games)."""
    try:
        return _write_files(store, t, out, table, inputs, previous, started)
    except OSError as exc:
        if previous is None:
            raise
        raise ReportError(f"{out}: cannot update the report: {exc.strerror or exc} ({exc.filename or out})") from None


def _write_files(
    store: Store, t: TournamentRow, out: Path, table: Standings | None, inputs: str,
    previous: _Previous | None, started: float,
) -> ReportSummary:
    root = store.root
    if previous is not None:  # (a folder of the earlier report may have been removed by hand)
        for folder in ("games", "assets"):
            (out / folder).mkdir(exist_ok=True)
    known = previous.facts.games if previous is not None else {}
    present = _game_files(out) if previous is not None else set()
    facts: dict[str, _Fact] = {}
    problems: list[str] = []
    written = 0

    def read(game: GameRow) -> GameFacts:
        nonlocal written
        problem = row_problem(root, game)
        fact = known.get(game.id) if not problem else None
        if fact is not None and fact.size and f"{game.id}.js" in present:
            if any(seat >= len(game.seats) for seat, _, _, _ in fact.faults):
                raise _Distrust(f"game {game.id}: a fault of a seat that is not at its table")
            facts[game.id] = fact
            return GameFacts(faults=[list(f) for f in fact.faults])
        # A new game, a game whose file is gone, or one with a problem: its replay is read
        # (a problem's words are never taken from facts.json, only from the replay itself).
        signature = _replay_signature(root / game.replay) if not problem else ""
        got = read_game(root, game)
        if got.view is not None:
            text = f"(window.ARENA_GAMES=window.ARENA_GAMES||{{}})[{script_json(game.id)}]={script_json(got.view)};\n"
            data = text.encode()
            target = out / "games" / f"{game.id}.js"
            if previous is None:
                target.write_bytes(data)  # a new folder: nobody reads it yet
            else:
                _put(target, data)
            written += 1
            got.view = None  # written: let it go
            facts[game.id] = _Fact(len(data), [tuple(f) for f in got.faults])
        else:
            facts[game.id] = _Fact(0, problem=got.problem[:_PROBLEM_LIMIT], replay=signature)
        if got.problem:
            problems.append(f"game {game.id}: {got.problem}")
        return got

    data = report_data(store, t.id, table=table, read=read)
    put = _put if previous is not None else (lambda path, data: path.write_bytes(data))
    files, size = 0, 0
    for name, content in _small_files().items():
        if previous is None or _read_limited(out / name, len(content)) != content:
            put(out / name, content)
            written += 1
        files, size = files + 1, size + len(content)
    facts_data = _ENCODER.encode(_Facts(FACTS_FORMAT, __version__, _store_id(store), t.id, facts))
    data_js = f"window.ARENA_REPORT={script_json(data)};\n".encode()
    game_bytes = sum(f.size for f in facts.values())
    files += sum(1 for f in facts.values() if f.size) + 2
    size += game_bytes + len(facts_data) + len(data_js)
    manifest = {
        "generator": GENERATOR, "format": REPORT_FORMAT, "arena_version": __version__, "tournament": t.id,
        "games": len(data["games"]), "inputs": inputs, "files": files, "bytes": size,
        "data_bytes": len(data_js), "facts_bytes": len(facts_data),
    }
    manifest_data = (json.dumps(manifest, indent=2) + "\n").encode()
    # The data files last, report.json the very last: until it is written, the next call sees
    # inputs other than its own and completes the update.
    put(out / FACTS, facts_data)
    put(out / "data.js", data_js)
    put(out / MANIFEST, manifest_data)
    written += 3
    if previous is not None:
        _remove_stale(out, {f"{gid}.js" for gid, f in facts.items() if f.size})
    return ReportSummary(
        out, t.id, len(data["games"]), files + 1, size + len(manifest_data), time.perf_counter() - started, problems, written,
    )


def _remove_stale(out: Path, wanted: set[str]) -> None:
    """Remove what an update leaves behind: the files of games the report no longer lists,
    any other file in games/, and a killed update's temporary files."""
    for name in _game_files(out) - wanted:
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
