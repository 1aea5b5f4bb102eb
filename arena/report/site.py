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
    report.json     what made this folder (so that a rebuild may replace it)

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

import json
import os
import shutil
import string
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from arena import __version__
from arena.errors import ArenaError
from arena.game.replay import Replay, ReplayError, plain_name
from arena.report.figures import GENERATOR, GameFacts, read_game, report_data
from arena.report.viewer import REPORT_FORMAT, GameDataError, card_table, game_view
from arena.store.database import GameRow, Store
from arena.text import NAME_LIMIT, printable, visible_json
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
    """What :func:`write_report` wrote."""

    out: Path
    tournament: str
    games: int
    files: int
    bytes: int
    seconds: float
    problems: list[str]

    @property
    def index(self) -> Path:
        return self.out / "index.html"

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out), "index": str(self.index), "tournament": self.tournament, "games": self.games,
            "files": self.files, "bytes": self.bytes, "seconds": round(self.seconds, 3), "problems": self.problems,
        }


def _check_replaceable(out: Path) -> None:
    if not out.exists():
        return
    if not out.is_dir():
        raise ReportError(f"{out}: is a file; the report needs a folder there")
    if not any(out.iterdir()):
        return
    try:
        made_by = json.loads((out / MANIFEST).read_text(encoding="utf-8")).get("generator")
    except (OSError, ValueError, AttributeError):
        made_by = None
    if made_by != GENERATOR:
        raise ReportError(f"{out}: this folder holds files that are not an arena report; choose another --out")


def write_report(
    store: Store,
    tournament_id: str | None = None,
    out: Path | None = None,
    *,
    table: Standings | None = None,
) -> ReportSummary:
    """Write the report site of a tournament (default: the latest) to ``out`` (default
    :func:`default_report_dir`). The site is built in a new folder beside ``out`` and then
    put in its place, so that a page open in a browser never sees half a report. An
    existing ``out`` is replaced only if it is empty or an earlier report. A game whose
    replay is missing or does not hold up is listed with the reason, and the rest builds."""
    started = time.perf_counter()
    t = pick_tournament(store, tournament_id)
    out = out if out is not None else default_report_dir(store.root, t.id)
    _check_replaceable(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    except OSError as exc:
        raise ReportError(f"{out}: cannot create the report folder: {exc.strerror or exc}") from None
    try:
        (build / "assets").mkdir()
        (build / "games").mkdir()
        problems: list[str] = []

        def read(game: GameRow) -> GameFacts:
            got = read_game(store.root, game)
            if got.problem:
                problems.append(f"game {game.id}: {got.problem}")
            elif got.view is not None:
                text = f"(window.ARENA_GAMES=window.ARENA_GAMES||{{}})[{script_json(game.id)}]={script_json(got.view)};\n"
                (build / "games" / f"{game.id}.js").write_text(text, encoding="utf-8")
                got.view = None  # written: let it go
            return got

        data = report_data(store, t.id, table=table, read=read)
        for name in PAGES:
            (build / name).write_text(_page(name), encoding="utf-8")
        for name in ASSETS:
            (build / "assets" / name).write_text(_asset(name), encoding="utf-8")
        (build / "cards.js").write_text(f"window.ARENA_CARDS={script_json(card_table())};\n", encoding="utf-8")
        (build / "data.js").write_text(f"window.ARENA_REPORT={script_json(data)};\n", encoding="utf-8")
        manifest = {"generator": GENERATOR, "format": REPORT_FORMAT, "arena_version": __version__, "tournament": t.id, "games": len(data["games"])}
        (build / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        written = [p.stat().st_size for p in build.rglob("*") if p.is_file()]
        files, size = len(written), sum(written)
        _swap_into_place(build, out)
    except OSError as exc:
        shutil.rmtree(build, ignore_errors=True)
        raise ReportError(f"{out}: cannot write the report: {exc.strerror or exc} ({exc.filename or out})") from None
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    return ReportSummary(out, t.id, len(data["games"]), files, size, time.perf_counter() - started, problems)


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
