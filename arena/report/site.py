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

This module turns store rows and replays into plain data and files; it draws nothing
itself. The pages are drawn in the browser by the scripts in ``arena/report/assets``,
which only ever insert text (bot names, debug values and stderr are the bots' words).
"""

from __future__ import annotations

import json
import os
import shutil
import string
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from arena import __version__
from arena.engine import RULES_VERSION
from arena.engine.cards import (
    CHOPSTICKS,
    DECK_COUNTS,
    DUMPLING,
    KIND_INDEX,
    KINDS,
    MAKI_SYMBOLS,
    NIGIRI_VALUE,
    SASHIMI,
    TEMPURA,
    WASABI_FACTOR,
)
from arena.engine.scoring import maki_points, maki_symbols, set_points
from arena.errors import ArenaError
from arena.game.replay import Replay, ReplayError, plain_name, read_replay
from arena.store.database import GameRow, Store, replay_relpath
from arena.text import NAME_LIMIT, printable, visible_json
from arena.tournament.ratings import bot_stats, fit_elo, head_to_head
from arena.tournament.standings import (
    Standings,
    current_games,
    pick_tournament,
    results_of,
    standings,
)

#: Bumped whenever the shape of ``data.js`` or of a game file changes.
REPORT_FORMAT = 1
GENERATOR = "sushigo-arena report"
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

#: The Okabe–Ito palette: eight colours that people with the common forms of colour
#: blindness can still tell apart. Bots are drawn in this order in the plots.
OKABE_ITO: dict[str, str] = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}

#: How a card kind is drawn: a short label and its colour. The label always names the
#: card, so that the colour is never the only cue. Values, counts and maki symbols are
#: not here: they come from :mod:`arena.engine.cards`.
CARD_LOOK: dict[str, tuple[str, str]] = {
    "tempura": ("tempura", OKABE_ITO["orange"]),
    "sashimi": ("sashimi", OKABE_ITO["green"]),
    "dumpling": ("dumpling", OKABE_ITO["sky"]),
    "maki1": ("maki", OKABE_ITO["vermillion"]),
    "maki2": ("maki", OKABE_ITO["vermillion"]),
    "maki3": ("maki", OKABE_ITO["vermillion"]),
    "salmon_nigiri": ("salmon", OKABE_ITO["yellow"]),
    "squid_nigiri": ("squid", OKABE_ITO["yellow"]),
    "egg_nigiri": ("egg", OKABE_ITO["yellow"]),
    "pudding": ("pudding", OKABE_ITO["purple"]),
    "wasabi": ("wasabi", OKABE_ITO["blue"]),
    "chopsticks": ("chop\u00adsticks", "#FFFFFF"),  # a soft hyphen: it breaks there on a narrow card
}

#: The parts of a round's score, in the order the viewer shows them (pudding is scored at
#: the end of the game only).
SCORE_PARTS = ("maki", "tempura", "sashimi", "dumpling", "nigiri")
FAULT_STATUSES = frozenset({"timeout", "illegal", "malformed", "protocol", "crash"})


class ReportError(ArenaError):
    """The report cannot be written as asked; the message names the folder or file."""


class GameDataError(ValueError):
    """A replay that was read but does not hold up (events and turns disagree, say)."""


# -- the card table ------------------------------------------------------------------------


def _luminance(colour: str) -> float:
    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def ink_for(colour: str) -> str:
    """Black or white text, whichever contrasts more with ``colour`` (WCAG ratio)."""
    lum = _luminance(colour)
    return "#000000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#FFFFFF"


def card_table() -> dict[str, Any]:
    """The card table as the pages use it, straight from the engine's, plus how to draw it."""
    missing = set(KINDS) ^ set(CARD_LOOK)
    if missing:  # a new card kind needs a look before the report can draw it
        raise AssertionError(f"CARD_LOOK and the engine's card kinds differ: {sorted(missing)}")
    kinds = []
    for k, name in enumerate(KINDS):
        label, colour = CARD_LOOK[name]
        kinds.append(
            {
                "name": name,
                "label": label,
                "count": DECK_COUNTS[k],
                "maki": MAKI_SYMBOLS[k],
                "nigiri": NIGIRI_VALUE[k],
                "colour": colour,
                "ink": ink_for(colour),
            }
        )
    return {
        "kinds": kinds,
        "wasabi_factor": WASABI_FACTOR,
        "score_parts": list(SCORE_PARTS),
        "palette": list(OKABE_ITO.values()),
        "fault_statuses": sorted(FAULT_STATUSES),
    }


# -- one game, for the viewer --------------------------------------------------------------


def _only(counts: Sequence[int], kind: int) -> list[int]:
    return [c if k == kind else 0 for k, c in enumerate(counts)]


def round_breakdown(counts: Sequence[int], nigiri: int, maki: int) -> dict[str, int]:
    """One seat's round points by part, with the engine's own scoring functions applied to
    each kind alone (``nigiri`` already holds the wasabi tripling, ``maki`` the majority
    points of the table)."""
    return {
        "maki": maki,
        "tempura": set_points(_only(counts, TEMPURA), 0),
        "sashimi": set_points(_only(counts, SASHIMI), 0),
        "dumpling": set_points(_only(counts, DUMPLING), 0),
        "nigiri": nigiri,
    }


def _act(action: Any) -> dict[str, Any]:
    """What the viewer says of one action besides its time: the usual ``ok`` is ``{}``."""
    out: dict[str, Any] = {}
    if action.status != "ok":
        out["status"] = action.status
    if action.message:
        out["message"] = action.message
    if action.debug is not None:
        out["debug"] = action.debug
    return out


def game_view(replay: Replay) -> dict[str, Any]:
    """Everything the viewer shows of one game, as steps it can walk forwards and back.

    Steps: one ``turn`` per turn record (the hands before the choice, the cards that
    entered each tableau, nigiri placed on wasabi, chopsticks returned, each seat's
    status, time and debug value); one ``end`` per round (the last cards played for the
    players, the points by part); one ``over`` (puddings and the final ranking). A replay
    whose turns and events disagree raises :class:`GameDataError` saying where.
    """
    seats = len(replay.seats)
    try:
        kind_of = [KIND_INDEX[name] for name in replay.cards]
    except KeyError as exc:
        raise GameDataError(f"unknown card kind {exc.args[0]!r} (rules {replay.rules_version})") from None
    turns = {(t.round, t.turn): t for t in replay.turns}
    steps: list[dict[str, Any]] = []
    counts = [[0] * len(KINDS) for _ in range(seats)]
    nigiri = [0] * seats

    def enter(seat: int, card: int, on_wasabi: set[int]) -> None:
        if not 0 <= card < len(kind_of):
            raise GameDataError(f"card {card} is not in this game's deck")
        kind = kind_of[card]
        counts[seat][kind] += 1
        if NIGIRI_VALUE[kind]:
            nigiri[seat] += NIGIRI_VALUE[kind] * (WASABI_FACTOR if card in on_wasabi else 1)

    def check_seat(seat: Any, where: str) -> int:
        if not isinstance(seat, int) or not 0 <= seat < seats:
            raise GameDataError(f"{where}: seat {seat!r} is not at this table")
        return seat

    dealt: list[dict[str, Any]] = []
    for ev in replay.event_dicts():
        if not isinstance(ev, dict):
            raise GameDataError(f"an event is not an object: {ev!r}")
        typ = ev.get("type")
        if typ == "round_start":
            dealt.append({"round": ev["round"], "direction": ev["direction"], "hand_size": ev["hand_size"]})
        elif typ == "reveal":
            rnd, turn_no = ev["round"], ev["turn"]
            where = f"round {rnd} turn {turn_no}"
            record = turns.pop((rnd, turn_no), None)
            if record is None:
                raise GameDataError(f"{where}: cards were revealed but there is no turn record")
            wasabi = [[w["seat"], w["nigiri"], w["wasabi"]] for w in ev.get("wasabi", [])]
            on_wasabi = {w[1] for w in wasabi}
            plays: list[list[int]] = [[] for _ in range(seats)]
            returned = []
            for play in ev["plays"]:
                seat = check_seat(play["seat"], where)
                plays[seat] = [c["id"] for c in play["cards"]]
                for card in plays[seat]:
                    enter(seat, card, on_wasabi)
                back = play.get("chopsticks_returned")
                if back is not None:
                    returned.append([seat, back])
                    counts[seat][CHOPSTICKS] -= 1
            # Per seat: the answer's time, and (only when there is something to say) the
            # action's status, message and debug value; None for a seat that did not act.
            acts: list[dict[str, Any] | None] = [None] * seats
            times: list[float | None] = [None] * seats
            for action in record.actions:
                seat = check_seat(action.seat, where)
                acts[seat] = _act(action)
                times[seat] = None if action.elapsed_ms is None else round(action.elapsed_ms, 2)
            step: dict[str, Any] = {
                "kind": "turn", "round": rnd, "turn": turn_no, "hands": record.hands, "plays": plays, "ms": times,
            }
            if any(acts):
                step["acts"] = acts
            if record.controller is not None:
                step["controller"] = record.controller
            if wasabi:
                step["wasabi"] = wasabi
            if returned:
                step["returned"] = returned
            steps.append(step)
        elif typ == "last_card":
            rnd = ev["round"]
            wasabi = [[w["seat"], w["nigiri"], w["wasabi"]] for w in ev.get("wasabi", [])]
            on_wasabi = {w[1] for w in wasabi}
            plays = [[] for _ in range(seats)]
            for c in ev["cards"]:
                seat = check_seat(c["seat"], f"round {rnd}, last cards")
                plays[seat].append(c["id"])
                enter(seat, c["id"], on_wasabi)
            step = {"kind": "end", "round": rnd, "plays": plays}
            if wasabi:
                step["wasabi"] = wasabi
            steps.append(step)
        elif typ == "round_end":
            rnd = ev["round"]
            if not (steps and steps[-1]["kind"] == "end" and steps[-1]["round"] == rnd):
                steps.append({"kind": "end", "round": rnd, "plays": [[] for _ in range(seats)]})
            maki = maki_points([maki_symbols(c) for c in counts])
            if maki != list(ev["maki_points"]):
                raise GameDataError(f"round {rnd}: maki points {ev['maki_points']} but the tableaus give {maki}")
            parts = [round_breakdown(counts[s], nigiri[s], maki[s]) for s in range(seats)]
            for s in range(seats):
                if sum(parts[s].values()) != ev["points"][s]:
                    raise GameDataError(
                        f"round {rnd}: seat {s} scored {ev['points'][s]} but its cards give {parts[s]}"
                    )
            steps[-1].update(
                points=list(ev["points"]), maki_symbols=list(ev["maki_symbols"]), breakdown=parts,
                scores=list(ev["scores"]),
            )
            counts = [[0] * len(KINDS) for _ in range(seats)]
            nigiri = [0] * seats
        elif typ == "game_end":
            steps.append(
                {
                    "kind": "over",
                    "scores": list(ev["scores"]),
                    "puddings": list(ev["puddings"]),
                    "pudding_points": list(ev["pudding_points"]),
                    "ranks": replay.result.ranks if replay.result is not None else list(ev["ranks"]),
                }
            )
    if turns:
        (rnd, turn_no), _ = min(turns.items())
        raise GameDataError(f"round {rnd} turn {turn_no}: a turn record without revealed cards")
    result = None
    if replay.result is not None:
        r = replay.result
        result = {
            "scores": r.scores, "puddings": r.puddings, "ranks": r.ranks, "rules_ranks": r.rules_ranks,
            "pudding_points": r.pudding_points, "autopilot": r.autopilot,
        }
    return {
        "format": REPORT_FORMAT,
        "id": replay.game_id,
        "seed": str(replay.seed),  # JavaScript numbers would round a 64-bit seed
        "variant": replay.variant,
        "players": replay.config.get("players", seats),
        "rules_version": replay.rules_version,
        "arena_version": replay.arena_version,
        "status": replay.status,
        "void_reason": replay.void_reason,
        "seats": [{"bot": s.bot, "version": s.version, "hash": s.hash} for s in replay.seats],
        "cards": kind_of,
        "rounds": dealt,
        "steps": steps,
        "faults": [{"seat": f.seat, "round": f.round, "turn": f.turn, "kind": f.kind, "message": f.message} for f in replay.faults],
        "stderr": list(replay.stderr),
        "result": result,
        "timing": {
            "started": replay.timing.get("started"),
            "duration_s": replay.timing.get("duration_s"),
            "mean_ms": replay.timing.get("mean_ms"),
            "max_ms": replay.timing.get("max_ms"),
        },
    }


# -- the tournament's figures ----------------------------------------------------------------


def rating_timeline(games: Sequence[GameRow], points: int = 100, *, shift: float = 0.0) -> dict[str, Any]:
    """Every bot's Elo after the first n games, for up to ``points`` values of n.

    Each point is the same order-independent joint fit as the leaderboard's
    (:func:`arena.tournament.ratings.fit_elo`), refitted on the games recorded so far, so the last
    point is the leaderboard's Elo. A fit takes milliseconds, so up to 100 refits cost
    well under a second for thousands of games; with more games than points the
    prefixes are spaced evenly. A bot without a game yet has ``None``. ``shift`` moves
    every value (an anchored leaderboard is the pool-mean fit moved by a constant).
    """
    results = results_of(games)
    n = len(results)
    if n <= points:
        marks = list(range(1, n + 1))
    else:
        marks = sorted({round(n * i / points) for i in range(1, points + 1)})
    keys = sorted({k for r in results for k in r.seats})
    elo: dict[str, list[float | None]] = {k: [] for k in keys}
    for m in marks:
        fit = fit_elo(results[:m])
        for k in keys:
            value = fit.get(k)
            elo[k].append(None if value is None else round(value + shift, 1))
    return {"games": marks, "elo": elo}


def bot_details(games: Sequence[GameRow]) -> dict[str, dict[str, Any]]:
    """Per bot key: its results against each opponent and from each seat."""
    results = results_of(games)
    h2h = head_to_head(results)
    together: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    seat_rows: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0, 0.0, 0.0, 0.0]))
    for g in games:
        firsts = sum(1 for s in g.seats if s.rank == 1)
        for s in g.seats:
            row = seat_rows[s.bot.key][s.seat]
            row[0] += 1
            row[1] += 1.0 / firsts if s.rank == 1 else 0.0
            row[2] += s.points
            row[3] += s.rank
        for a in g.seats:
            for b in g.seats:
                if a.bot.key != b.bot.key:
                    cell = together[(a.bot.key, b.bot.key)]
                    cell[0] += 1
                    cell[1] += a.points
                    cell[2] += b.points
    details: dict[str, dict[str, Any]] = {}
    for key in sorted(seat_rows):
        opponents = {}
        for (a, b), (n, mine, theirs) in sorted(together.items()):
            if a != key:
                continue
            w, d, lo = h2h.get((a, b), (0.0, 0.0, 0.0))
            opponents[b] = {
                "pairs": int(n), "wins": w, "draws": d, "losses": lo,
                "mean_points": round(mine / n, 2), "opponent_mean_points": round(theirs / n, 2),
            }
        seats = [
            {"seat": seat, "games": int(n), "wins": round(wins, 3), "mean_points": round(pts / n, 2),
             "mean_rank": round(rk / n, 3)}
            for seat, (n, wins, pts, rk) in sorted(seat_rows[key].items())
        ]
        details[key] = {"opponents": opponents, "seats": seats}
    return details


@dataclass(slots=True)
class GameFacts:
    """What reading one game's replay gave: its faults as ``[seat, kind, round, turn]`` and
    its viewer data, or what went wrong (``problem``, naming the file)."""

    problem: str = ""
    faults: list[list[Any]] = field(default_factory=list)
    view: dict[str, Any] | None = None


def read_game(root: Path, game: GameRow) -> GameFacts:
    """Read and check the replay of ``game`` (in results folder ``root``); never raises for
    a missing or bad file: the problem is in the answer. The game's id (it names the
    game's file in the report) must be a plain name and its replay where the store keeps
    replays, before either becomes a path."""
    try:
        plain_name(game.id, where=str(root / "arena.db"), field=f"games.id of game {game.id!r:.40}")
        if game.replay != replay_relpath(game.id):
            raise ReplayError(f"{root / 'arena.db'}: games.replay {game.replay!r:.80} of game {game.id} is not its replay's place")
    except ReplayError as exc:
        return GameFacts(problem=str(exc))
    path = root / game.replay
    try:
        replay = read_replay(path)
        if replay.game_id != game.id:
            raise GameDataError(f"it holds game {replay.game_id}, not {game.id}")
        view = game_view(replay)
    except ReplayError as exc:
        return GameFacts(problem=str(exc))
    except (GameDataError, KeyError, TypeError, IndexError) as exc:
        return GameFacts(problem=f"{path}: replay does not hold up: {exc}")
    faults = [[f["seat"], f["kind"], f["round"], f["turn"]] for f in view["faults"]]
    return GameFacts(faults=faults, view=view)


def game_entry(game: GameRow, bot_index: dict[str, int], read: GameFacts) -> dict[str, Any]:
    """One game as the games list holds it: seats as ``[bot, points, rank, puddings]``."""
    entry: dict[str, Any] = {
        "id": game.id,
        "set": game.set_id,
        "seed": str(game.seed),
        "finished": game.finished,
        "duration_s": game.duration_s,
        "seats": [[bot_index[s.bot.key], s.points, s.rank, s.puddings] for s in game.seats],
    }
    if game.status != "complete":
        entry["status"] = game.status
        entry["void_reason"] = game.void_reason
    faults = [[s.seat, kind, count] for s in game.seats for kind, count in sorted(s.faults.items()) if count]
    if faults:
        entry["faults"] = faults
    if any(s.autopilot for s in game.seats):
        entry["autopilot"] = [s.seat for s in game.seats if s.autopilot]
    if read.faults:
        entry["fault_turns"] = read.faults
    if read.problem:
        entry["problem"] = read.problem
    return entry


def _anchor_shift(st: Standings, results: Sequence[Any]) -> float:
    """How far the leaderboard's Elos sit from the pool-mean fit: a rounding error, or the
    constant an anchor (``--anchor BOT=ELO``) moved them by."""
    if not st.rows:
        return 0.0
    fit = fit_elo(results)
    return sum(row["elo"] - fit[row["key"]] for row in st.rows) / len(st.rows)


def report_data(
    store: Store,
    tournament_id: str | None = None,
    *,
    table: Standings | None = None,
    read: Callable[[GameRow], GameFacts] | None = None,
) -> dict[str, Any]:
    """The figures of ``data.js``: the tournament, its leaderboard (``table``, or the
    leaderboard `arena leaderboard` prints), the rating timeline, head to head, per-bot
    details and the list of games. ``read`` gives each game's replay facts (default: none)."""
    t = pick_tournament(store, tournament_id)
    st = table if table is not None else standings(store, t.id, h2h=True)
    rated = current_games(store, t.id, store.games(t.id, players=st.players, variant=st.variant))
    listed = current_games(store, t.id, store.games(t.id, status=None))
    results = results_of(rated)
    bots: dict[str, dict[str, Any]] = {}
    for row in st.rows:
        bots[row["key"]] = {"key": row["key"], "name": row["bot"], "version": row["version"], "hash": row["hash"], "label": row["label"]}
    for g in listed:
        for s in g.seats:
            if s.bot.key not in bots:
                bots[s.bot.key] = {"key": s.bot.key, "name": s.bot.name, "version": s.bot.version, "hash": s.bot.hash, "label": s.bot.key}
    keys = list(bots)
    index = {k: i for i, k in enumerate(keys)}
    h2h = st.h2h
    if h2h is None:
        h2h = {}
        for (a, b), (w, d, lo) in head_to_head(results).items():
            h2h.setdefault(a, {})[b] = [w, d, lo]
    stats = bot_stats(results)
    config = {k: v for k, v in t.config.items() if k != "bots_dir"}  # no local paths in a page meant to be shared
    games = [game_entry(g, index, read(g) if read else GameFacts()) for g in listed]
    return {
        "format": REPORT_FORMAT,
        "generator": GENERATOR,
        "arena_version": __version__,
        "rules_version": RULES_VERSION,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tournament": {
            "id": t.id, "created": t.created, "updated": t.updated, "players": st.players, "variant": st.variant,
            "config": config,
        },
        "bots": [bots[k] for k in keys],
        "leaderboard": {"games": st.games, "rows": st.rows, "skipped": st.skipped},
        "h2h": h2h,
        "timeline": rating_timeline(rated, shift=_anchor_shift(st, results)),
        "details": bot_details(rated),
        "points_vs_table": {k: round(s.points_vs_table, 2) for k, s in stats.items()},
        "games": games,
    }


# -- writing the site ----------------------------------------------------------------------------


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
