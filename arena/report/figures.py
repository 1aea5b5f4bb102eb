"""The tournament's figures, as ``data.js`` holds them: the leaderboard, the rating
timeline, head to head, each bot's details, and the list of games, each game's entry
with what reading its replay found (:func:`read_game` never raises: a bad file is a
problem named in the report)."""

from __future__ import annotations

import json
import sys
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import msgspec

from arena import __version__
from arena.engine import RULES_VERSION
from arena.game.replay import ReplayError, plain_name, read_replay
from arena.report.viewer import REPORT_FORMAT, GameDataError, game_view
from arena.text import visible_json
from arena.store.database import BotRow, GameRow, Store, TournamentRow, replay_relpath
from arena.tournament.ratings import pair_scores
from arena.tournament.ratings.fit import fit_pair_totals
from arena.tournament.standings import (
    Standings,
    current_games,
    pick_tournament,
    results_of,
    standings,
)


def script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<`` can close it or open a comment
    (``</script>``, ``<!--`` in a bot's stderr stay text), and no string holds a control
    character, a bidi control or a line separator: each reads as its visible escape
    (:func:`arena.text.visible_json`), as a terminal would show it."""
    return visible_json(json.dumps(value, ensure_ascii=False, separators=(",", ":"))).replace("<", "\\u003c")

#: What made a report folder, as its data.js and its report.json say (a rebuild replaces only such a folder).
GENERATOR = "sushigo-arena report"


def timeline_marks(n: int, points: int = 100) -> list[int]:
    """The game counts at which :func:`rating_timeline` shows the ratings, for ``n`` games:
    every count while ``n <= points``, else exactly ``points`` of them, the last one ``n``.

    With more games than points they are the multiples of a power of two ``s`` (the smallest
    that needs no more than ``points`` of them), the latest odd multiples of ``s / 2`` to
    make up the number, and ``n``. When games are only added, every mark of the new timeline
    up to the old ``n`` is a mark of the old one (``s`` only doubles, keeping every other
    multiple), so an update fits the new marks only."""
    if n <= points:
        return list(range(1, n + 1))
    step = 2
    while -(-n // step) > points:
        step *= 2
    half = step // 2
    marks = list(range(step, n + 1, step))
    if n % step:
        marks.append(n)
    m = (n - 1) // half * half
    if m % step == 0:
        m -= half
    while len(marks) < points and m > 0:
        marks.append(m)
        m -= step
    return sorted(marks)


def _aligned(n: int, points: int = 100) -> int:
    """The marks of :func:`timeline_marks` that a later timeline may keep are the multiples of this."""
    if n <= points:
        return 1
    step = 2
    while -(-n // step) > points:
        step *= 2
    return step // 2


def _warm_from(m: int) -> int:
    """The mark whose fit starts the fit at ``m`` (0: a cold start): ``m`` without its lowest
    set bit, the same whatever the number of games, so that a fit at a mark is the same
    number in a report built at once and in one updated game by game."""
    return m - (m & -m)


def rating_timeline(games: Sequence[GameRow], points: int = 100, *, shift: float = 0.0) -> dict[str, Any]:
    """Every bot's Elo after the first n games, for the values of n of :func:`timeline_marks`.

    Each point is the same order-independent joint fit as the leaderboard's
    (:func:`arena.tournament.ratings.fit_elo`) of the games recorded so far (warm-started
    from an earlier point), so the last point is the leaderboard's Elo. A bot without a
    game yet has ``None``. ``shift`` moves every value (an anchored leaderboard is the
    pool-mean fit moved by a constant).
    """
    fig = Figures(players=0, variant="")
    fig.add_rated(games, points=points)
    return fig.timeline(shift, points=points)


def _elo_fit(h2h: dict[int, dict[int, list[float]]], seated: dict[int, int], keys: list[str],
             start: dict[int, float] | None) -> dict[int, float]:
    """The joint fit of the pairs counted in ``h2h`` (as :meth:`Tally.fit` of the same games:
    the bots seated, the pairs that met, each pair's wins with a draw as half of one)."""
    order = sorted(seated, key=keys.__getitem__)
    number = {b: i for i, b in enumerate(order)}
    pairs: list[tuple[int, int]] = []
    wins_i: list[float] = []
    wins_j: list[float] = []
    for a in order:
        for b, (w, d, lo) in sorted(h2h.get(a, {}).items(), key=lambda item: number[item[0]]):
            if number[b] > number[a]:
                pairs.append((number[a], number[b]))
                wins_i.append(w + 0.5 * d)
                wins_j.append(lo + 0.5 * d)
    fit = fit_pair_totals(
        [keys[b] for b in order], pairs, wins_i, wins_j, prior_sd=600.0, mean=1500.0, anchor=None,
        start=None if start is None else {keys[b]: v for b, v in start.items()},
    )
    return {b: fit[keys[b]] for b in order}


class _SetSums(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    """One duplicate set's rated games: every seat's points, the seats, and per bot its points and seats."""

    points: int = 0
    seats: int = 0
    bots: dict[int, list[int]] = {}


class FiguresState(msgspec.Struct, forbid_unknown_fields=True):
    """:class:`Figures` as a report keeps them between two builds (see there)."""

    players: int
    variant: Annotated[str, msgspec.Meta(max_length=64)]
    bots: list[tuple[str, str, str, str]]  # key, name, version, hash
    listed: Annotated[int, msgspec.Meta(ge=0)]
    rated: Annotated[int, msgspec.Meta(ge=0)]
    seated: dict[int, int]  # bot -> seats in rated games
    h2h: dict[int, dict[int, list[float]]]  # a -> b -> [a's wins, draws, a's losses]
    together: dict[int, dict[int, list[float]]]  # a -> b -> [seats together, a's points, b's points]
    seat_rows: dict[int, dict[int, list[float]]]  # bot -> seat -> [games, wins, points, ranks]
    sets: dict[str, _SetSums]
    fits: dict[int, dict[int, float]]  # mark -> bot -> Elo (pool mean 1500, unrounded)
    last: dict[int, float]  # the fit of every rated game (the timeline's last point)
    seat_bots: bytes  # every listed game's seats' bots, as little-endian 16-bit numbers


class Figures:
    """The tournament's figures as sums over its games, added one at a time in the store's
    order: what :func:`report_data` shows of them, without keeping the games. Bots are
    numbered in the order the listed games first seat them (``bots``); the rated games (the
    leaderboard's format, complete) are summed per pair (head to head, points together), per
    bot and seat, and per duplicate set (points against the table); the rating timeline
    keeps its fit at every mark a later timeline may keep (:func:`timeline_marks`).

    Floats are summed in the order the games come, as a report built at once sums them, so
    that figures updated with new games are the very numbers of figures built anew."""

    FIELDS = tuple(FiguresState.__struct_fields__)

    def __init__(self, players: int, variant: str) -> None:
        self.players, self.variant = players, variant
        self.bots: list[tuple[str, str, str, str]] = []
        self.listed = 0
        self.rated = 0
        self.seated: dict[int, int] = {}
        self.h2h: dict[int, dict[int, list[float]]] = {}
        self.together: dict[int, dict[int, list[float]]] = {}
        self.seat_rows: dict[int, dict[int, list[float]]] = {}
        self.sets: dict[str, _SetSums] = {}
        self.fits: dict[int, dict[int, float]] = {}
        self.last: dict[int, float] = {}
        self.seat_bots = b""
        self._more_seats = array("H")
        self._index: dict[str, int] = {}

    @classmethod
    def from_state(cls, state: FiguresState) -> Figures:
        """The figures of ``state``; raises :class:`FiguresMismatch` if they do not hold together."""
        fig = cls(state.players, state.variant)
        for name in cls.FIELDS:
            setattr(fig, name, getattr(state, name))
        fig._index = {b[0]: i for i, b in enumerate(fig.bots)}
        n = len(fig.bots)
        if len(fig._index) != n or len(fig.seat_bots) % 2 or n > 0xFFFF:
            raise FiguresMismatch("the bots do not hold together")
        numbers = [*fig.seated, *fig.h2h, *fig.together, *fig.seat_rows, *fig.last]
        numbers += [b for rows in (fig.h2h, fig.together) for against in rows.values() for b in against]
        numbers += [b for s in fig.sets.values() for b in s.bots]
        numbers += [b for fit in fig.fits.values() for b in fit]
        if any(not 0 <= b < n for b in numbers) or any(b >= n for b in fig.seat_numbers()):
            raise FiguresMismatch("a bot number out of range")
        if any(len(row) != k for rows, k in ((fig.h2h, 3), (fig.together, 3), (fig.seat_rows, 4))
               for against in rows.values() for row in against.values()):
            raise FiguresMismatch("a row of the wrong length")
        return fig

    def state(self) -> FiguresState:
        self.seat_bots += self._more_seats.tobytes() if sys.byteorder == "little" else _swapped(self._more_seats)
        self._more_seats = array("H")
        return FiguresState(**{name: getattr(self, name) for name in self.FIELDS})

    def bot_number(self, bot: BotRow) -> int:
        number = self._index.get(bot.key)
        if number is None:
            number = self._index[bot.key] = len(self.bots)
            self.bots.append((bot.key, bot.name, bot.version, bot.hash))
        return number

    def add_listed(self, game: GameRow) -> list[int]:
        """Count a game of the games list; returns its seats' bot numbers."""
        numbers = [self.bot_number(s.bot) for s in game.seats]
        self.listed += 1
        self._more_seats.extend(numbers)
        return numbers

    def add_rated(self, games: Sequence[GameRow], *, points: int = 100) -> None:
        """Count rated games (complete, of the leaderboard's format), in order, fitting the
        timeline at each mark of :func:`timeline_marks` of the new total that it lacks."""
        total = self.rated + len(games)
        wanted = set(timeline_marks(total, points))
        for m in wanted:
            if m <= self.rated and m != total and m not in self.fits:
                raise FiguresMismatch(f"the timeline lacks its fit after {m} games")
        for game in games:
            self._add_rated(game)
            if self.rated in wanted:
                self._fit_at(self.rated, total, points)
        step = _aligned(total, points)
        self.fits = {m: fit for m, fit in self.fits.items() if m in wanted and m % step == 0}

    def _fit_at(self, m: int, total: int, points: int) -> None:
        keys = [b[0] for b in self.bots]
        if m % _aligned(total, points) == 0:
            base = _warm_from(m)
            start = self.fits.get(base) if base else None
            if base and start is None:
                raise FiguresMismatch(f"the timeline lacks its fit after {base} games")
            fit = _elo_fit(self.h2h, self.seated, keys, start)
            self.fits[m] = fit
        else:  # the last point, between two marks: from the one before it
            before = max(x for x in timeline_marks(total, points) if x < m)
            fit = _elo_fit(self.h2h, self.seated, keys, self.fits[before])
        if m == total:
            self.last = fit

    def _add_rated(self, g: GameRow) -> None:
        numbers = [self.bot_number(s.bot) for s in g.seats]
        (result,) = results_of([g])
        number = {s.bot.key: n for s, n in zip(g.seats, numbers, strict=True)}
        for a, b, score in pair_scores(result):
            outcome = 0 if score == 1.0 else 2 if score == 0.0 else 1
            na, nb = number[a], number[b]
            row = self.h2h.setdefault(na, {}).get(nb)
            if row is None:
                row = self.h2h[na][nb] = [0.0, 0.0, 0.0]
            row[outcome] += 1
            back = self.h2h.setdefault(nb, {}).get(na)
            if back is None:
                back = self.h2h[nb][na] = [0.0, 0.0, 0.0]
            back[2 - outcome] += 1
        firsts = sum(1 for s in g.seats if s.rank == 1)
        per_set = self.sets.get(g.set_id)
        if per_set is None:
            per_set = self.sets[g.set_id] = _SetSums(0, 0, {})
        for s, n in zip(g.seats, numbers, strict=True):
            self.seated[n] = self.seated.get(n, 0) + 1
            row = self.seat_rows.setdefault(n, {}).get(s.seat)
            if row is None:
                row = self.seat_rows[n][s.seat] = [0.0, 0.0, 0.0, 0.0]
            row[0] += 1
            row[1] += 1.0 / firsts if s.rank == 1 else 0.0
            row[2] += s.points
            row[3] += s.rank
            per_set.points += s.points
            per_set.seats += 1
            mine = per_set.bots.get(n)
            if mine is None:
                per_set.bots[n] = [s.points, 1]
            else:
                mine[0] += s.points
                mine[1] += 1
        for a, na in zip(g.seats, numbers, strict=True):
            for b, nb in zip(g.seats, numbers, strict=True):
                if na != nb:
                    cell = self.together.setdefault(na, {}).get(nb)
                    if cell is None:
                        cell = self.together[na][nb] = [0.0, 0.0, 0.0]
                    cell[0] += 1
                    cell[1] += a.points
                    cell[2] += b.points
        self.rated += 1

    # -- what data.js shows ---------------------------------------------------------------

    def _keys(self) -> list[str]:
        return [b[0] for b in self.bots]

    def timeline(self, shift: float, *, points: int = 100) -> dict[str, Any]:
        keys = self._keys()
        marks = timeline_marks(self.rated, points)
        fits = [self.last if m == self.rated else self.fits[m] for m in marks]
        rated = sorted(self.seated, key=keys.__getitem__)
        elo: dict[str, list[float | None]] = {keys[b]: [] for b in rated}
        for point in fits:
            for b in rated:
                value = point.get(b)
                elo[keys[b]].append(None if value is None else round(value + shift, 1))
        return {"games": marks, "elo": elo}

    def head_to_head(self) -> dict[str, dict[str, list[float]]]:
        keys = self._keys()
        cells = sorted(
            ((keys[a], keys[b]), row) for a, against in self.h2h.items() for b, row in against.items()
        )
        out: dict[str, dict[str, list[float]]] = {}
        for (a, b), (w, d, lo) in cells:
            out.setdefault(a, {})[b] = [w, d, lo]
        return out

    def details(self) -> dict[str, dict[str, Any]]:
        keys = self._keys()
        h2h = {(keys[a], keys[b]): row for a, against in self.h2h.items() for b, row in against.items()}
        together = sorted(
            ((keys[a], keys[b]), cell) for a, against in self.together.items() for b, cell in against.items()
        )
        by_bot: dict[str, list[tuple[str, list[float]]]] = {}
        for (a, b), cell in together:
            by_bot.setdefault(a, []).append((b, cell))
        details: dict[str, dict[str, Any]] = {}
        for n in sorted(self.seat_rows, key=keys.__getitem__):
            key = keys[n]
            opponents = {}
            for b, (count, mine, theirs) in by_bot.get(key, []):
                a = key
                w, d, lo = h2h.get((a, b), (0.0, 0.0, 0.0))
                opponents[b] = {
                    "pairs": int(count), "wins": w, "draws": d, "losses": lo,
                    "mean_points": round(mine / count, 2), "opponent_mean_points": round(theirs / count, 2),
                }
            seats = [
                {"seat": seat, "games": int(count), "wins": round(wins, 3), "mean_points": round(pts / count, 2),
                 "mean_rank": round(rk / count, 3)}
                for seat, (count, wins, pts, rk) in sorted(self.seat_rows[n].items())
            ]
            details[key] = {"opponents": opponents, "seats": seats}
        return details

    def points_vs_table(self) -> dict[str, float]:
        """As :func:`arena.tournament.ratings.bot_stats` computes it: the mean over the sets a
        bot played of its mean points there minus the set's mean, sets in id order."""
        keys = self._keys()
        vs_table: dict[int, list[float]] = {}
        for sid in sorted(self.sets):
            s = self.sets[sid]
            table_mean = s.points / s.seats
            for n, (pts, count) in s.bots.items():
                vs_table.setdefault(n, []).append(pts / count - table_mean)
        return {keys[n]: round(sum(vs_table[n]) / len(vs_table[n]), 2) for n in sorted(self.seated, key=keys.__getitem__)}

    def seat_numbers(self) -> list[int]:
        """The bot number of every seat of the listed games, in order."""
        old = array("H")
        old.frombytes(self.seat_bots)
        if sys.byteorder != "little":
            old.byteswap()
        return old.tolist() + self._more_seats.tolist()


def _swapped(numbers: array) -> bytes:
    copy = array("H", numbers)
    copy.byteswap()
    return copy.tobytes()


class FiguresMismatch(Exception):
    """Figures that do not fit what they are asked to add to: build them anew."""


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


def is_rated(game: GameRow, st: Standings) -> bool:
    """Whether a listed game is one the leaderboard ``st`` rates (complete, of its format)."""
    return game.status == "complete" and game.players == st.players and game.variant == st.variant


#: Where a seat's bot number goes in :func:`entry_text` (a JSON text never holds it raw).
SEAT_MARK = "\x01"


def entry_text(game: GameRow, read: GameFacts) -> str:
    """:func:`game_entry` as the games list of data.js spells it, each seat's bot number
    left as :data:`SEAT_MARK`: the numbers are put in when data.js is written, so that the
    text of a game is made once, whatever the order of the leaderboard's bots."""
    entry = game_entry(game, _Zero(), read)
    items = list(entry.items())
    at = [k for k, _ in items].index("seats")
    head, tail = dict(items[:at]), dict(items[at + 1 :])
    seats = ",".join(f"[{SEAT_MARK},{points},{rank},{puddings}]" for _, points, rank, puddings in entry["seats"])
    return script_json(head)[:-1] + ',"seats":[' + seats + "]" + ("," + script_json(tail)[1:] if tail else "}")


class _Zero(dict):
    def __missing__(self, key: str) -> int:
        return 0


def figures_data(fig: Figures, t: TournamentRow, st: Standings) -> tuple[dict[str, Any], list[int]]:
    """The figures of data.js but its games list, from ``fig`` and the leaderboard ``st``; and
    the place in its ``bots`` of each of the figures' bot numbers (what each seat of the games
    list names)."""
    bots: dict[str, dict[str, Any]] = {}
    for row in st.rows:
        bots[row["key"]] = {"key": row["key"], "name": row["bot"], "version": row["version"], "hash": row["hash"], "label": row["label"]}
    for key, name, version, content_hash in fig.bots:
        if key not in bots:
            bots[key] = {"key": key, "name": name, "version": version, "hash": content_hash, "label": key}
    index = {k: i for i, k in enumerate(bots)}
    h2h = st.h2h if st.h2h is not None else fig.head_to_head()
    config = {k: v for k, v in t.config.items() if k != "bots_dir"}  # no local paths in a page meant to be shared
    last = {fig.bots[b][0]: v for b, v in fig.last.items()}
    data = {
        "format": REPORT_FORMAT,
        "generator": GENERATOR,
        "arena_version": __version__,
        "rules_version": RULES_VERSION,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tournament": {
            "id": t.id, "created": t.created, "updated": t.updated, "players": st.players, "variant": st.variant,
            "config": config,
        },
        "bots": list(bots.values()),
        "leaderboard": {"games": st.games, "rows": st.rows, "skipped": st.skipped},
        "h2h": h2h,
        "timeline": fig.timeline(_anchor_shift(st, last) if fig.rated else 0.0),
        "details": fig.details(),
        "points_vs_table": fig.points_vs_table(),
    }
    return data, [index[b[0]] for b in fig.bots]


def data_script(data: dict[str, Any], listing: str, seats: Sequence[int], places: Sequence[int]) -> bytes:
    """data.js: ``data`` (:func:`figures_data`) with its games list, the :func:`entry_text`
    of every listed game joined by commas (``listing``), each seat's mark replaced by the
    place in ``bots`` (``places``) of that seat's bot number (``seats``, in order)."""
    pieces = listing.split(SEAT_MARK)
    if len(pieces) != len(seats) + 1:
        raise FiguresMismatch(f"the games list has {len(pieces) - 1} seats, the figures {len(seats)}")
    names = [str(p) for p in places]
    text: list[str] = [""] * (2 * len(pieces) - 1)
    text[0::2] = pieces
    text[1::2] = [names[n] for n in seats]
    head = script_json(data)
    return ("window.ARENA_REPORT=" + head[:-1] + ',"games":[' + "".join(text) + "]};\n").encode()


def build_figures(listed: Sequence[GameRow], st: Standings) -> Figures:
    """The figures of these games (the listed games, in the store's order) for the leaderboard ``st``."""
    fig = Figures(st.players, st.variant)
    for g in listed:
        fig.add_listed(g)
    fig.add_rated([g for g in listed if is_rated(g, st)])
    return fig


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
    fig = build_figures(listed, st)
    data, _ = figures_data(fig, t, st)
    index = {b["key"]: i for i, b in enumerate(data["bots"])}
    data["games"] = [game_entry(g, index, read(g) if read else GameFacts()) for g in listed]
    return data
