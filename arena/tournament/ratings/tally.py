"""A running tally: game results reduced to aggregates as they come (a live table, a
timeline of fits), never a list of games.

Pure: no I/O, no clock, no global random; numpy for the algebra.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping

import numpy as np

from arena.tournament.ratings.fit import fit_pairs
from arena.tournament.ratings.results import BotStats, GameResult, pair_scores


class Tally:
    """Game results reduced to aggregates as they come, for a fit or the statistics at any time
    without keeping the games: :meth:`fit` equals :func:`~arena.tournament.ratings.fit_elo` and
    :meth:`stats` equals :func:`~arena.tournament.ratings.bot_stats` of every game added (in the
    order added: ``wins`` sums shares of a win).

    Memory: O(bots^2) for the pairs and the per-bot figures, plus, for ``points_vs_table``, a
    few numbers per duplicate set and bot of the set (O(sets)); never a list of games. With
    ``by_set=False`` the per-set figures are not kept (memory O(bots^2) however many games are
    added) and :meth:`stats` reports ``points_vs_table`` as NaN.
    """

    __slots__ = ("_by_set", "_faults", "_games", "_pairs", "_points", "_ranks", "_seats", "_sets", "_wins")

    def __init__(self, *, by_set: bool = True) -> None:
        self._by_set = by_set
        self._games = 0
        # (a, b) with a < b by name -> [a's wins, b's wins]: the pairs of seats of every game.
        self._pairs: dict[tuple[str, str], list[float]] = {}
        self._seats: Counter[str] = Counter()
        self._wins: dict[str, float] = defaultdict(float)
        self._points: dict[str, float] = defaultdict(float)
        self._ranks: dict[str, float] = defaultdict(float)
        self._faults: dict[str, Counter[str]] = defaultdict(Counter)
        # set id -> [points of every seat, seats, {bot: [its points, its seats]}]
        self._sets: dict[str, list] = {}

    @property
    def games(self) -> int:
        """How many results were added."""
        return self._games

    @property
    def bots(self) -> list[str]:
        """Every bot seated in a result added, in name order."""
        return sorted(self._seats)

    def add(self, game: GameResult) -> None:
        """Count one finished game (the same bookkeeping as :func:`pair_scores` and ``bot_stats``)."""
        pairs = self._pairs
        for a, b, score in pair_scores(game):
            if a > b:
                a, b, score = b, a, 1.0 - score
            wins = pairs.get((a, b))
            if wins is None:
                pairs[(a, b)] = [score, 1.0 - score]
            else:
                wins[0] += score
                wins[1] += 1.0 - score
        firsts = sum(1 for r in game.ranks if r == 1)
        per_set = None
        if self._by_set:
            per_set = self._sets.get(game.set_id)
            if per_set is None:
                per_set = self._sets[game.set_id] = [0.0, 0, {}]
        for seat, bot in enumerate(game.seats):
            points, rank = game.points[seat], game.ranks[seat]
            self._seats[bot] += 1
            if rank == 1:
                self._wins[bot] += 1.0 / firsts
            self._points[bot] += points
            self._ranks[bot] += rank
            if game.faults:
                for kind, count in game.faults[seat].items():
                    if count:
                        self._faults[bot][kind] += count
            if per_set is not None:
                per_set[0] += points
                per_set[1] += 1
                mine = per_set[2].get(bot)
                if mine is None:
                    per_set[2][bot] = [float(points), 1]
                else:
                    mine[0] += points
                    mine[1] += 1
        self._games += 1

    def pair_totals(self) -> tuple[list[str], list[tuple[int, int]], list[float], list[float]]:
        """The bots (name order), the pairs of them that met (by number, ``i < j``, sorted) and
        each pair's wins of ``i`` and of ``j``: what the fit reads."""
        bots = self.bots
        index = {bot: i for i, bot in enumerate(bots)}
        numbered = sorted((index[a], index[b], wa, wb) for (a, b), (wa, wb) in self._pairs.items())
        return (
            bots,
            [(i, j) for i, j, _, _ in numbered],
            [wa for _, _, wa, _ in numbered],
            [wb for _, _, _, wb in numbered],
        )

    def fit(
        self,
        *,
        prior_sd: float = 600.0,
        mean: float = 1500.0,
        anchor: tuple[str, float] | None = None,
        start: Mapping[str, float] | None = None,
    ) -> dict[str, float]:
        """``fit_elo`` of every game added (``start`` as there: a warm start, same result)."""
        bots, pairs, wins_i, wins_j = self.pair_totals()
        pair_i = np.array([i for i, _ in pairs], dtype=np.int64)
        pair_j = np.array([j for _, j in pairs], dtype=np.int64)
        return fit_pairs(
            bots, pair_i, pair_j, np.array(wins_i, dtype=np.float64), np.array(wins_j, dtype=np.float64),
            prior_sd=prior_sd, mean=mean, anchor=anchor, start=start,
        )

    def stats(self) -> dict[str, BotStats]:
        """``bot_stats`` of every game added (``points_vs_table`` NaN with ``by_set=False``)."""
        vs_table: dict[str, list[float]] = defaultdict(list)
        for sid in sorted(self._sets):
            total, seats, per_bot = self._sets[sid]
            table_mean = total / seats
            for bot, (points, count) in per_bot.items():
                vs_table[bot].append(points / count - table_mean)
        stats = {}
        for bot in sorted(self._seats):
            n = self._seats[bot]
            mine = vs_table.get(bot)
            stats[bot] = BotStats(
                games=n,
                wins=self._wins[bot],
                win_share=self._wins[bot] / n,
                mean_points=self._points[bot] / n,
                mean_rank=self._ranks[bot] / n,
                points_vs_table=sum(mine) / len(mine) if mine else math.nan,
                faults=dict(sorted(self._faults[bot].items())) if bot in self._faults else {},
            )
        return stats
