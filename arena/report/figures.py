"""The tournament's figures, as ``data.js`` holds them: the leaderboard, the rating
timeline, head to head, each bot's details, and the list of games, each game's entry
with what reading its replay found (:func:`read_game` never raises: a bad file is a
problem named in the report)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena import __version__
from arena.engine import RULES_VERSION
from arena.game.replay import ReplayError, plain_name, read_replay
from arena.report.viewer import REPORT_FORMAT, GameDataError, game_view
from arena.store.database import GameRow, Store, replay_relpath
from arena.tournament.ratings import GameResult, Tally, bot_stats, head_to_head
from arena.tournament.standings import (
    Standings,
    current_games,
    pick_tournament,
    results_of,
    standings,
)

#: What made a report folder, as its data.js and its report.json say (a rebuild replaces only such a folder).
GENERATOR = "sushigo-arena report"


def rating_timeline(games: Sequence[GameRow], points: int = 100, *, shift: float = 0.0) -> dict[str, Any]:
    """Every bot's Elo after the first n games, for up to ``points`` values of n.

    Each point is the same order-independent joint fit as the leaderboard's
    (:func:`arena.tournament.ratings.fit_elo`) of the games recorded so far, so the last
    point is the leaderboard's Elo. With more games than points the prefixes are spaced
    evenly. A bot without a game yet has ``None``. ``shift`` moves every value (an
    anchored leaderboard is the pool-mean fit moved by a constant).
    """
    results = results_of(games)
    marks, fits = _fits(results, points)
    return _shifted(results, marks, fits, shift)


def _fits(results: Sequence[GameResult], points: int) -> tuple[list[int], list[dict[str, float]]]:
    """The points of :func:`rating_timeline` (game counts) and the fit at each, unrounded.

    The games are added to one :class:`~arena.tournament.ratings.Tally` in order and the
    tally is fitted at each point, warm-started from the point before: one pass over the
    games plus ``points`` fits of a few Newton steps each, however many games there are
    (refitting every prefix from scratch grew as points x games)."""
    n = len(results)
    if n <= points:
        marks = list(range(1, n + 1))
    else:
        marks = sorted({round(n * i / points) for i in range(1, points + 1)})
    fits: list[dict[str, float]] = []
    tally = Tally(by_set=False)  # only the fit is read: no per-set figures kept
    done = 0
    for m in marks:
        for r in results[done:m]:
            tally.add(r)
        done = m
        fits.append(tally.fit(start=fits[-1] if fits else None))
    return marks, fits


def _shifted(
    results: Sequence[GameResult], marks: list[int], fits: list[dict[str, float]], shift: float
) -> dict[str, Any]:
    keys = sorted({k for r in results for k in r.seats})
    elo: dict[str, list[float | None]] = {k: [] for k in keys}
    for point in fits:
        for k in keys:
            value = point.get(k)
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


def row_problem(root: Path, game: GameRow) -> str:
    """What is wrong with the store's row of ``game`` before its replay is read, or ``""``:
    its id (it names the game's file in the report) must be a plain name and its replay
    where the store keeps replays, before either becomes a path."""
    try:
        plain_name(game.id, where=str(root / "arena.db"), field=f"games.id of game {game.id!r:.40}")
        if game.replay != replay_relpath(game.id):
            raise ReplayError(f"{root / 'arena.db'}: games.replay {game.replay!r:.80} of game {game.id} is not its replay's place")
    except ReplayError as exc:
        return str(exc)
    return ""


def read_game(root: Path, game: GameRow) -> GameFacts:
    """Read and check the replay of ``game`` (in results folder ``root``); never raises for
    a missing or bad file: the problem is in the answer (:func:`row_problem` first)."""
    problem = row_problem(root, game)
    if problem:
        return GameFacts(problem=problem)
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


def _anchor_shift(st: Standings, fit: dict[str, float]) -> float:
    """How far the leaderboard's Elos sit from the pool-mean ``fit`` of its games: a rounding
    error, or the constant an anchor (``--anchor BOT=ELO``) moved them by."""
    if not st.rows:
        return 0.0
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
    listed = current_games(store, t.id, store.games(t.id, status=None))
    # The rated games are the listed ones of the table's format (one read of the store, same order).
    rated = [g for g in listed if g.status == "complete" and g.players == st.players and g.variant == st.variant]
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
    marks, fits = _fits(results, 100)
    timeline = _shifted(results, marks, fits, _anchor_shift(st, fits[-1] if fits else {}))
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
        "timeline": timeline,
        "details": bot_details(rated),
        "points_vs_table": {k: round(s.points_vs_table, 2) for k, s in stats.items()},
        "games": games,
    }
