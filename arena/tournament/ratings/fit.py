"""The joint Elo fit: one Bradley-Terry model fitted to every pair of seats at once.

Pure: no I/O, no clock, no global random; numpy for the algebra.

- Bot ``a`` beats bot ``b`` with probability ``1 / (1 + 10 ** ((elo_b - elo_a) / 400))``, i.e.
  400/ln 10 Elo per logit. The fit maximises the likelihood of the pairs' win counts times a
  weak Gaussian prior on every rating (sd ``prior_sd``, 600 Elo by default), by Newton's method
  on the aggregated pair matrix (a dense solve of bots x bots per step). The prior keeps a bot
  that won or lost everything finite and barely moves anyone else.
- The pool's mean is ``mean`` (1500); with ``anchor=(BOT, ELO)`` every rating is shifted so that
  BOT has ELO instead (differences are unchanged).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from arena.tournament.ratings.aggregates import PairData, ResultColumns
from arena.tournament.ratings.results import ELO_PER_LOGIT, GameResult, RatingError


def win_probability(d: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-d))``, without overflow for any ``d``."""
    return np.exp(-np.logaddexp(0.0, -d))


def objective(r: np.ndarray, pair_i: np.ndarray, pair_j: np.ndarray, wins_i: np.ndarray, wins_j: np.ndarray, precision: float) -> float:
    """The penalised log-likelihood of ratings ``r`` (logits)."""
    d = r[pair_i] - r[pair_j]
    # log sigmoid(x) = -log(1 + exp(-x))
    return float(-0.5 * precision * np.dot(r, r) - np.dot(wins_i, np.logaddexp(0.0, -d)) - np.dot(wins_j, np.logaddexp(0.0, d)))


def gradient_hessian(
    r: np.ndarray, pair_i: np.ndarray, pair_j: np.ndarray, wins_i: np.ndarray, wins_j: np.ndarray, precision: float
) -> tuple[np.ndarray, np.ndarray]:
    """The gradient of the penalised log-likelihood at ``r`` (logits), and its negated Hessian
    (symmetric positive definite: the prior adds ``precision`` to its diagonal)."""
    n = len(r)
    p = win_probability(r[pair_i] - r[pair_j])
    total = wins_i + wins_j
    residual = wins_i - total * p
    grad = -precision * r + np.bincount(pair_i, weights=residual, minlength=n) - np.bincount(pair_j, weights=residual, minlength=n)
    h = total * p * (1.0 - p)
    hess = np.zeros((n, n))
    hess[pair_i, pair_j] = -h  # each pair once: no index repeats
    hess[pair_j, pair_i] = -h
    hess[np.arange(n), np.arange(n)] = precision + np.bincount(pair_i, weights=h, minlength=n) + np.bincount(pair_j, weights=h, minlength=n)
    return grad, hess


def newton(
    n: int,
    pair_i: np.ndarray,
    pair_j: np.ndarray,
    wins_i: np.ndarray,
    wins_j: np.ndarray,
    precision: float,
    start: np.ndarray | None = None,
    tolerance: float = 1e-9,
) -> np.ndarray:
    """Maximise the penalised Bradley-Terry log-likelihood; ratings in logits, mean zero.

    The objective is strictly concave, so Newton's method, with its step halved while a long
    step would lower the objective, converges from any start; it takes a handful of steps.
    """
    r = np.zeros(n) if start is None else np.array(start, dtype=np.float64)
    current: float | None = None
    for _ in range(200):
        grad, hess = gradient_hessian(r, pair_i, pair_j, wins_i, wins_j, precision)
        step = np.linalg.solve(hess, grad) if n else grad
        size = float(np.abs(step).max()) if n else 0.0
        if size <= 1.0:
            # Close to the optimum (within a logit) a full Newton step is safe and converges
            # quadratically: no need to evaluate the objective.
            r = r + step
            current = None
        else:
            if current is None:
                current = objective(r, pair_i, pair_j, wins_i, wins_j, precision)
            t = 1.0
            while True:
                trial = r + t * step
                value = objective(trial, pair_i, pair_j, wins_i, wins_j, precision)
                if value >= current or t < 1e-6:
                    break
                t *= 0.5
            r, current = trial, value
            size *= t
        if size < tolerance:
            break
    return r


def to_elo(r: np.ndarray, mean: float, anchor_index: int | None, anchor_elo: float = 0.0) -> np.ndarray:
    """Ratings in logits (one row per fit) as Elo: centred on ``mean``, or shifted so that the
    bot numbered ``anchor_index`` has ``anchor_elo``."""
    if r.shape[-1] == 0:
        return r.astype(np.float64)
    centre = r.mean(axis=-1, keepdims=True)  # zero up to rounding: the prior centres the fit
    elos = mean + (r - centre) * ELO_PER_LOGIT
    if anchor_index is not None:
        elos = elos + (anchor_elo - elos[..., anchor_index : anchor_index + 1])
        elos[..., anchor_index] = anchor_elo  # exactly, not to the last bit of a subtraction
    return elos


def check_options(prior_sd: float, anchor: tuple[str, float] | None, bots: Sequence[str]) -> float:
    """The prior's precision in logits, once the options are checked."""
    if not (isinstance(prior_sd, int | float) and math.isfinite(prior_sd) and prior_sd > 0):
        raise RatingError(f"prior_sd must be a positive number of Elo, got {prior_sd!r}")
    if anchor is not None:
        bot, elo = anchor
        if bot not in bots:
            known = ", ".join(bots) if bots else "none"
            raise RatingError(f"anchor bot {bot!r} has no rated games (rated bots: {known})")
        if not math.isfinite(elo):
            raise RatingError(f"anchor Elo must be a finite number, got {elo!r}")
    return (ELO_PER_LOGIT / prior_sd) ** 2


def anchor_index(anchor: tuple[str, float] | None, bots: Sequence[str]) -> int | None:
    return None if anchor is None else list(bots).index(anchor[0])


def start_logits(start: Mapping[str, float] | None, bots: Sequence[str], mean: float) -> np.ndarray | None:
    """An earlier fit's Elos as a starting point in logits (bots it lacks start at ``mean``),
    centred: the fit's ratings sum to zero, whatever the earlier fit's anchor shifted."""
    if start is None or not bots:
        return None
    r = []
    for bot in bots:
        elo = start.get(bot, mean)
        if not (isinstance(elo, int | float) and math.isfinite(elo)):
            raise RatingError(f"start: the Elo of {bot!r} must be a finite number, got {elo!r}")
        r.append((elo - mean) / ELO_PER_LOGIT)
    x = np.array(r, dtype=np.float64)
    return x - x.mean()


def fit_pairs(
    bots: Sequence[str],
    pair_i: np.ndarray,
    pair_j: np.ndarray,
    wins_i: np.ndarray,
    wins_j: np.ndarray,
    *,
    prior_sd: float,
    mean: float,
    anchor: tuple[str, float] | None,
    start: Mapping[str, float] | None,
) -> dict[str, float]:
    """The fit of pair totals (bots in name order, pairs ``i < j`` sorted) as Elo by bot."""
    precision = check_options(prior_sd, anchor, bots)
    r = newton(len(bots), pair_i, pair_j, wins_i, wins_j, precision, start=start_logits(start, bots, mean))
    elos = to_elo(r, mean, anchor_index(anchor, bots), anchor[1] if anchor is not None else 0.0)
    return dict(zip(bots, elos.tolist(), strict=True))


def fit_pair_totals(
    bots: Sequence[str],
    pairs: Sequence[tuple[int, int]],
    wins_i: Sequence[float],
    wins_j: Sequence[float],
    *,
    prior_sd: float = 600.0,
    mean: float = 1500.0,
    anchor: tuple[str, float] | None = None,
    start: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """:func:`fit_pairs` of plain lists (pairs as ``(i, j)`` with ``i < j`` into ``bots``, in
    name order, each pair's wins with a draw as half of one): for callers that keep their own
    sums (the report's timeline), so that they need not know the fit's array layout."""
    return fit_pairs(
        bots,
        np.array([i for i, _ in pairs], dtype=np.intp),
        np.array([j for _, j in pairs], dtype=np.intp),
        np.array(wins_i, dtype=np.float64),
        np.array(wins_j, dtype=np.float64),
        prior_sd=prior_sd, mean=mean, anchor=anchor, start=start,
    )


def fit_elo(
    games: ResultColumns | Iterable[GameResult],
    *,
    prior_sd: float = 600.0,
    mean: float = 1500.0,
    anchor: tuple[str, float] | None = None,
    start: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """The joint Elo fit (see the package docstring) of every bot seated in ``games``.

    The result does not depend on the order of the games. ``start`` (the Elos of an earlier
    fit with the same ``mean`` and ``anchor``; a bot it lacks starts at ``mean``) only changes
    how fast the fit gets there: the result is the cold fit's to well within 1e-6 Elo. Raises
    :class:`RatingError` for an anchor bot without games or a non-positive ``prior_sd``.
    """
    data = PairData(games)
    return fit_pairs(
        data.bots, data.pair_i, data.pair_j, data.wins_i, data.wins_j,
        prior_sd=prior_sd, mean=mean, anchor=anchor, start=start,
    )
