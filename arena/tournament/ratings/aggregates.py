"""Games reduced to what the ratings read: games as columns (:class:`ResultColumns`, one
entry per seat) and win counts per pair of bots, in total and per duplicate set
(:class:`PairData`).

Pure: no I/O, no clock, no global random; numpy for the algebra.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations

import numpy as np

from arena.tournament.ratings.results import GameResult, RatingError


class ResultColumns:
    """Finished games as columns, one entry per seat, the seats of a game one after another:
    what the ratings read of many games without an object per game or per seat.

    ``bots`` are the bot keys in name order and ``set_ids`` the duplicate sets in id order;
    ``bot`` and ``game_set`` hold numbers into them. ``starts[g]`` is the first seat of game
    ``g`` (``starts[-1]`` the number of seats). ``autopilot`` marks the seats that ended their
    game on autopilot; ``faults`` lists ``(seat, counts by kind)`` for the seats with a fault.
    """

    __slots__ = ("autopilot", "bot", "bots", "faults", "game_set", "points", "rank", "set_ids", "starts")

    def __init__(
        self,
        *,
        bots: Sequence[str],
        set_ids: Sequence[str],
        starts: np.ndarray,
        game_set: np.ndarray,
        bot: np.ndarray,
        rank: np.ndarray,
        points: np.ndarray,
        autopilot: np.ndarray,
        faults: Sequence[tuple[int, Mapping[str, int]]] = (),
    ) -> None:
        self.bots = list(bots)
        self.set_ids = list(set_ids)
        self.starts = np.asarray(starts, dtype=np.int64)
        self.game_set = np.asarray(game_set, dtype=np.int64)
        self.bot = np.asarray(bot, dtype=np.int64)
        self.rank = np.asarray(rank, dtype=np.int64)
        self.points = np.asarray(points, dtype=np.int64)
        self.autopilot = np.asarray(autopilot, dtype=bool)
        self.faults = list(faults)
        seats = len(self.bot)
        if self.bots != sorted(set(self.bots)) or self.set_ids != sorted(set(self.set_ids)):
            raise RatingError("result columns: the bots and the sets must be distinct and in name order")
        if len(self.starts) != len(self.game_set) + 1 or (len(self.starts) and (self.starts[0] != 0 or self.starts[-1] != seats)):
            raise RatingError("result columns: the games' first seats do not cover the seats")
        if np.any(np.diff(self.starts) < 0):
            raise RatingError("result columns: the games' first seats are not in order")
        if not (len(self.rank) == len(self.points) == len(self.autopilot) == seats):
            raise RatingError(f"result columns: {seats} seats but {len(self.rank)} ranks, {len(self.points)} points")
        if seats and (self.bot.min() < 0 or self.bot.max() >= len(self.bots)):
            raise RatingError("result columns: a seat's bot number is out of range")
        if len(self.game_set) and (self.game_set.min() < 0 or self.game_set.max() >= len(self.set_ids)):
            raise RatingError("result columns: a game's set number is out of range")

    @property
    def games(self) -> int:
        """How many games the columns hold."""
        return len(self.game_set)

    @classmethod
    def of_games(cls, games: Iterable[GameResult]) -> ResultColumns:
        """The columns of these games (in the order given)."""
        games = list(games)
        bots = sorted({bot for g in games for bot in g.seats})
        set_ids = sorted({g.set_id for g in games})
        bot_number = {bot: i for i, bot in enumerate(bots)}
        set_number = {sid: i for i, sid in enumerate(set_ids)}
        starts, seat_bots, ranks, points, autopilot, faults = [0], [], [], [], [], []
        for g in games:
            for seat, bot in enumerate(g.seats):
                if g.faults and any(g.faults[seat].values()):
                    faults.append((len(seat_bots), g.faults[seat]))
                seat_bots.append(bot_number[bot])
            ranks += g.ranks
            points += g.points
            autopilot += g.autopilot or (False,) * len(g.seats)
            starts.append(len(seat_bots))
        return cls(
            bots=bots, set_ids=set_ids, starts=np.array(starts, dtype=np.int64),
            game_set=np.array([set_number[g.set_id] for g in games], dtype=np.int64),
            bot=np.array(seat_bots, dtype=np.int64), rank=np.array(ranks, dtype=np.int64),
            points=np.array(points, dtype=np.int64), autopilot=np.array(autopilot, dtype=bool), faults=faults,
        )


    @classmethod
    def of_seat_columns(
        cls,
        *,
        first_set: Sequence[str | None],
        bot: Sequence[int],
        rank: Sequence[int],
        points: Sequence[int],
        autopilot: Sequence[int],
        faults: Sequence[tuple[int, Mapping[str, int]]],
        keys: Mapping[int, str],
        entrants: set[int] | None = None,
        values: Sequence[Sequence[float | None]] = (),
    ) -> tuple[ResultColumns, list[int], list[np.ndarray]]:
        """Columns from seat columns as a store keeps them, games one after another: the set id
        on a game's first seat and None on its others, the bot's id (``keys`` names it: ids of
        one key are one bot), rank, points, autopilot (0/1), and ``(seat, counts)`` for the seats
        with a fault. With ``entrants``, only the games whose every seat is one of them.

        Returns the columns, the bot ids in the order their first seat comes (in the games
        kept), and each of ``values`` (optional numbers per seat, None: not measured, NaN in the
        result) for the seats kept, in their order."""
        first = np.not_equal(np.array(first_set, dtype=object), None)
        starts = np.append(np.flatnonzero(first), len(first)).astype(np.int64)
        if len(first) and not first[0]:
            raise RatingError("seat columns: the first seat is not a game's first")
        sizes = np.diff(starts)
        bot_ids = np.array(bot, dtype=np.int64)
        keep_game = np.ones(len(sizes), dtype=bool)
        if entrants and len(sizes):
            outsider = ~np.isin(bot_ids, np.array(sorted(entrants), dtype=np.int64))
            keep_game = np.add.reduceat(outsider, starts[:-1]) == 0
        keep = np.repeat(keep_game, sizes)
        bot_ids = bot_ids[keep]
        ids, first_seat = np.unique(bot_ids, return_index=True)
        seen = [bot_id for _, bot_id in sorted(zip(first_seat.tolist(), ids.tolist(), strict=True))]
        names = sorted({keys[bot_id] for bot_id in seen})
        number = {key: i for i, key in enumerate(names)}
        seat_bot = np.array([number[keys[bot_id]] for bot_id in ids.tolist()], dtype=np.int64)[
            np.searchsorted(ids, bot_ids)
        ] if len(ids) else bot_ids
        set_ids = [sid for sid, kept in zip((x for x in first_set if x is not None), keep_game.tolist(), strict=True) if kept]
        set_names = sorted(set(set_ids))
        set_number = {sid: i for i, sid in enumerate(set_names)}
        game_set = np.array([set_number[sid] for sid in set_ids], dtype=np.int64)
        position = np.cumsum(keep) - 1  # a kept seat's number among the kept ones
        cols = cls(
            bots=names, set_ids=set_names, starts=np.concatenate([[0], np.cumsum(sizes[keep_game])]),
            game_set=game_set, bot=seat_bot, rank=np.array(rank, dtype=np.int64)[keep],
            points=np.array(points, dtype=np.int64)[keep], autopilot=np.array(autopilot, dtype=bool)[keep],
            faults=[(int(position[seat]), counts) for seat, counts in faults if keep[seat]],
        )
        return cols, seen, [np.array(v, dtype=np.float64)[keep] for v in values]


def columns_of(games: ResultColumns | Iterable[GameResult]) -> ResultColumns:
    """``games`` as columns (columns are taken as they are)."""
    return games if isinstance(games, ResultColumns) else ResultColumns.of_games(games)


def seat_pairs(cols: ResultColumns) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of seats of a game held by different bots, as ``(set, lo, hi, lo's score)``
    arrays: ``lo < hi`` are the two bots' numbers, the score 1, 0.5 or 0 as
    :func:`~arena.tournament.ratings.results.pair_scores` says (a seat on autopilot loses to one
    that is not; otherwise the lower rank wins and equal ranks draw)."""
    sizes = np.diff(cols.starts)
    if len(cols.rank):
        low, span = cols.rank.min(), cols.rank.max() - cols.rank.min() + 1
        # One number that orders two seats as (on autopilot, rank) does.
        order = (cols.rank - low) + cols.autopilot.astype(np.int64) * span
    else:
        order = cols.rank
    first, second, sets = [], [], []
    for size in np.unique(sizes).tolist():
        if size < 2:
            continue
        games = np.flatnonzero(sizes == size)
        base = cols.starts[games]
        for s, t in combinations(range(size), 2):
            first.append(base + s)
            second.append(base + t)
            sets.append(cols.game_set[games])
    if not first:
        empty_int, empty_float = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        return empty_int, empty_int, empty_int, empty_float
    a_seat, b_seat, set_of = np.concatenate(first), np.concatenate(second), np.concatenate(sets)
    a, b = cols.bot[a_seat], cols.bot[b_seat]
    keep = a != b  # self-play says nothing about the bot's strength
    a, b, set_of = a[keep], b[keep], set_of[keep]
    ka, kb = order[a_seat[keep]], order[b_seat[keep]]
    swap = a > b
    lo, hi = np.where(swap, b, a), np.where(swap, a, b)
    k_lo, k_hi = np.where(swap, kb, ka), np.where(swap, ka, kb)
    score = (k_lo < k_hi) + 0.5 * (k_lo == k_hi)
    return set_of, lo, hi, score


class PairData:
    """Games reduced to win counts per pair of bots that met, in total and per duplicate set.

    Bots are numbered in name order and sets in set-id order, so nothing depends on the order
    of the games. Scores are multiples of one half, so every sum is exact.

    ``pair_i``, ``pair_j`` (``i < j``, sorted), ``wins_i``, ``wins_j``: every pair's totals.
    The cells, one per (set, pair) that occurred, sorted by set and then pair: ``cell_set``,
    ``cell_pair`` (a number into the pairs), ``cell_wins_i``, ``cell_wins_j``. This is the
    layout a resample weighs: a set's few entries, a set's weight applied to each.
    """

    __slots__ = ("bots", "cell_pair", "cell_set", "cell_wins_i", "cell_wins_j", "pair_i", "pair_j", "set_count", "wins_i", "wins_j")

    def __init__(self, games: ResultColumns | Iterable[GameResult]) -> None:
        cols = columns_of(games)
        n = len(cols.bots)
        self.bots = cols.bots
        self.set_count = len(cols.set_ids)
        set_of, lo, hi, score = seat_pairs(cols)
        cells, where = np.unique((set_of * n + lo) * n + hi, return_inverse=True)
        cell_wins_i = np.bincount(where, weights=score, minlength=len(cells))
        cell_wins_j = np.bincount(where, weights=1.0 - score, minlength=len(cells))
        pairs, self.cell_pair = np.unique(cells % (n * n) if n else cells, return_inverse=True)
        self.cell_set = cells // (n * n) if n else cells
        self.cell_wins_i, self.cell_wins_j = cell_wins_i, cell_wins_j
        self.pair_i, self.pair_j = (pairs // n, pairs % n) if n else (pairs, pairs)
        self.wins_i = np.bincount(self.cell_pair, weights=cell_wins_i, minlength=len(pairs))
        self.wins_j = np.bincount(self.cell_pair, weights=cell_wins_j, minlength=len(pairs))
