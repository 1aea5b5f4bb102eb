"""Per-bot statistics, the head-to-head counts and the leaderboard (ratings and statistics).

Pure: no I/O, no clock, no global random; numpy for the sums.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable

import numpy as np

from arena.tournament.ratings.aggregates import ResultColumns, columns_of, seat_pairs
from arena.tournament.ratings.bootstrap import rate
from arena.tournament.ratings.results import BotStats, GameResult, LeaderRow


def bot_stats(games: ResultColumns | Iterable[GameResult]) -> dict[str, BotStats]:
    """Games, wins, means, points against the table and fault counts per bot (see
    :class:`BotStats`), in name order. Every sum runs in the order of the games (a shared
    first place adds its share of a win), as :class:`~arena.tournament.ratings.Tally` adds."""
    cols = columns_of(games)
    n = len(cols.bots)
    if not n:
        return {}
    sizes = np.diff(cols.starts)
    game_of = np.repeat(np.arange(cols.games), sizes)
    first = cols.rank == 1
    firsts = np.bincount(game_of, weights=first, minlength=cols.games)
    share = np.where(first, 1.0 / np.maximum(firsts[game_of], 1.0), 0.0)
    seats = np.bincount(cols.bot, minlength=n)
    wins = np.bincount(cols.bot, weights=share, minlength=n)
    points = np.bincount(cols.bot, weights=cols.points.astype(np.float64), minlength=n)
    ranks = np.bincount(cols.bot, weights=cols.rank.astype(np.float64), minlength=n)
    # Per set: the mean points of all its seats, and each bot's mean points in it.
    set_of = cols.game_set[game_of]
    set_count = len(cols.set_ids)
    table = np.bincount(set_of, weights=cols.points.astype(np.float64), minlength=set_count) / np.maximum(
        np.bincount(set_of, minlength=set_count), 1
    )
    cells, where = np.unique(set_of * n + cols.bot, return_inverse=True)
    cell_points = np.bincount(where, weights=cols.points.astype(np.float64), minlength=len(cells))
    cell_seats = np.bincount(where, minlength=len(cells))
    cell_bot, cell_set = cells % n, cells // n
    # Cells are in set order, so each bot's differences are summed set after set.
    vs_table = np.bincount(cell_bot, weights=cell_points / cell_seats - table[cell_set], minlength=n)
    sets_played = np.bincount(cell_bot, minlength=n)
    faults: dict[int, Counter[str]] = defaultdict(Counter)
    for seat, counts in cols.faults:
        for kind, count in counts.items():
            if count:
                faults[int(cols.bot[seat])][kind] += count
    stats = {}
    for i, (bot, games_played, won, pts, rk, vs, played) in enumerate(
        zip(cols.bots, seats.tolist(), wins.tolist(), points.tolist(), ranks.tolist(), vs_table.tolist(), sets_played.tolist(), strict=True)
    ):
        if not games_played:
            continue
        stats[bot] = BotStats(
            games=games_played,
            wins=won,
            win_share=won / games_played,
            mean_points=pts / games_played,
            mean_rank=rk / games_played,
            points_vs_table=vs / played,
            faults=dict(sorted(faults[i].items())) if i in faults else {},
        )
    return stats


def usage_by_bot(
    cols: ResultColumns, means_of: np.ndarray, peaks_of: np.ndarray
) -> dict[str, tuple[float | None, float | None]]:
    """Per bot with a measured seat: the mean of ``means_of`` over its seats where it was
    measured (summed in seat order; None if never) and the largest of ``peaks_of`` (at least 0;
    None if never). Both hold a number per seat of ``cols``, NaN where not measured."""
    n = len(cols.bots)
    has_mean, has_peak = ~np.isnan(means_of), ~np.isnan(peaks_of)
    total = np.bincount(cols.bot[has_mean], weights=means_of[has_mean], minlength=n).tolist()
    counted = np.bincount(cols.bot[has_mean], minlength=n).tolist()
    peak = np.zeros(n)
    np.maximum.at(peak, cols.bot[has_peak], peaks_of[has_peak])
    peaked = np.bincount(cols.bot[has_peak], minlength=n).tolist()
    return {
        bot: (total[i] / counted[i] if counted[i] else None, float(peak[i]) if peaked[i] else None)
        for i, bot in enumerate(cols.bots)
        if counted[i] or peaked[i]
    }


def head_to_head(games: ResultColumns | Iterable[GameResult]) -> dict[tuple[str, str], tuple[float, float, float]]:
    """For every two bots that shared a game: ``(a, b) -> (a's wins, draws, a's losses)``.

    Counted over pairs of seats, as the fit sees them
    (:func:`~arena.tournament.ratings.pair_scores`); both ``(a, b)`` and ``(b, a)`` are present,
    in name order.
    """
    cols = columns_of(games)
    n = len(cols.bots)
    _, lo, hi, score = seat_pairs(cols)
    outcome = np.where(score == 1.0, 0, np.where(score == 0.0, 2, 1))  # lo's win, draw, lo's loss
    pairs, where = np.unique(lo * n + hi, return_inverse=True)
    counts = np.bincount(where * 3 + outcome, minlength=3 * len(pairs)).reshape(-1, 3).astype(np.float64)
    out: dict[tuple[int, int], tuple[float, float, float]] = {}
    for pair, (w, d, lost) in zip(pairs.tolist(), counts.tolist(), strict=True):
        i, j = divmod(pair, n)
        out[(i, j)] = (w, d, lost)
        out[(j, i)] = (lost, d, w)
    names = cols.bots  # numbered in name order: sorting the numbers sorts the names
    return {(names[i], names[j]): value for (i, j), value in sorted(out.items())}


def leaderboard(
    games: ResultColumns | Iterable[GameResult],
    *,
    bootstrap: int = 200,
    seed: int = 0,
    anchor: tuple[str, float] | None = None,
    prior_sd: float = 600.0,
    level: float = 0.95,
) -> list[LeaderRow]:
    """Every bot's rating and statistics, best Elo first (equal Elos by name), ranked 1, 2, ..."""
    cols = columns_of(games)
    ratings = rate(cols, bootstrap=bootstrap, level=level, seed=seed, anchor=anchor, prior_sd=prior_sd)
    stats = bot_stats(cols)
    order = sorted(ratings, key=lambda bot: (-ratings[bot].elo, bot))
    rows = []
    for position, bot in enumerate(order, start=1):
        rating, s = ratings[bot], stats[bot]
        rows.append(
            LeaderRow(
                rank=position,
                bot=bot,
                elo=rating.elo,
                low=rating.low,
                high=rating.high,
                games=s.games,
                wins=s.wins,
                win_share=s.win_share,
                mean_points=s.mean_points,
                mean_rank=s.mean_rank,
                points_vs_table=s.points_vs_table,
                faults=s.faults,
            )
        )
    return rows


def los_from_counts(wins: float, draws: float, losses: float) -> float:
    """The likelihood of superiority of a over b from their head-to-head counts: the
    probability that a is the better, ``Phi((wins - losses) / sqrt(wins + losses))`` (the
    normal approximation fishtest and cutechess print; draws say nothing of which is the
    better); ½ with no decided game."""
    del draws  # (in the signature so that a caller passes the triple as it has it)
    decided = wins + losses
    if decided <= 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(decided) / math.sqrt(2.0)))
