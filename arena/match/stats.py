"""The statistics of a match: pure functions, no I/O, no clock, no global random.

**The unit.** A match plays pairs of games on one deal (:mod:`arena.match.schedule`): in
A's game, A sits in seat ``s``; in its twin, B sits in that seat, everything else equal.
A seat's result is the leaderboard's rank-based score: against each other seat of the table
it scores 1 for a better place, ½ for a shared place, 0 for a worse one (a seat that ended
on autopilot loses to every seat that did not), and its score is the mean over the other
seats (``0..1``). The pair's unit is ``x = (1 + score of B - score of A) / 2`` in ``0..1``,
½ when B did exactly what A did. Why ranks and not points: a game's points swing with the
deal (a pudding-rich deal gives 60, a thin one 30) and the rank is what wins; the rated
table speaks of places, so the match measures the same thing.

With two players this is the pentanomial of fishtest and fastchess: A's game is A against
B, its twin the same deal with the seats swapped, and ``x`` is B's total over the two games
divided by 2 (0, ¼, ½, ¾ or 1). With ``k`` players ``x`` is a multiple of ``1 / (4(k-1))``:
the units are counts over those ``4(k-1) + 1`` values, a "pentanomial" with more cells.

**The test.** The generalized SPRT of fishtest and fastchess on those counts
(hardy.uhasselt.be/Fishtest/normalized_elo_practical.pdf): for each hypothesis, the
distribution over the observed cells that is most likely given the data among those whose
normalized Elo (``model=normalized``, the default) or whose logistic Elo
(``model=logistic``) is the hypothesis's; the LLR is ``N`` times the mean log ratio of the
two. A test stops at ``LLR >= log((1 - beta) / alpha)`` (H1: B is better by at least elo1)
or ``LLR <= log(beta / (1 - alpha))`` (H0: B is not better by elo1; elo0 or worse).
Cells with no count are given 1/1000 of one, as fishtest does, so that a test can stop on
an unbroken run of one outcome.

**Normalized Elo** is what an SPRT can be set in without knowing the game's draw rate or
noise: ``(mean - ½) / sigma`` per game, times ``800 / ln 10``, where a pair counts as two
games (``sigma`` per game is ``sqrt(2)`` times a pair's), exactly as fishtest's
pentanomial. **Logistic Elo** is the Elo of an even two-player game with score ``mean``:
in a field much weaker or stronger than A and B, it reads smaller than their rating
difference (every seat's score saturates), so multi-player bounds are best set in
normalized Elo.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "NELO_PER_T",
    "Estimate",
    "SequentialTest",
    "SprtSpec",
    "cells",
    "estimate",
    "llr",
    "los",
    "pair_unit",
    "parse_sprt",
    "seat_half_points",
    "unit_of",
    "verdict",
]

#: Normalized Elo per unit of t (``(mean - ½) / sigma`` of one game).
NELO_PER_T = 800.0 / math.log(10.0)
#: What a cell with no count weighs in the test (fishtest's regularization).
EMPTY_CELL = 1e-3
Z95 = 1.959963984540054  # the 97.5% quantile of the normal distribution

MODELS = ("normalized", "logistic")


# -- the unit ------------------------------------------------------------------------------


def cells(players: int) -> int:
    """The number of values a pair's unit can take with ``players`` seats: ``4(k-1) + 1``
    (5 with two players: the pentanomial)."""
    return 4 * (players - 1) + 1


def seat_half_points(ranks: Sequence[int], autopilot: Sequence[bool], seat: int) -> int:
    """The seat's rank-based score in half points: 2 for each other seat it beat, 1 for
    each it shared a place with (``0..2(k-1)``). A seat on autopilot loses to one that is
    not, whatever the ranks; otherwise the lower rank wins (as the leaderboard counts)."""
    half = 0
    mine = (bool(autopilot[seat]) if autopilot else False, ranks[seat])
    for other in range(len(ranks)):
        if other == seat:
            continue
        theirs = (bool(autopilot[other]) if autopilot else False, ranks[other])
        half += 2 if mine < theirs else 1 if mine == theirs else 0
    return half


def pair_unit(
    seat: int,
    a_ranks: Sequence[int],
    a_autopilot: Sequence[bool],
    b_ranks: Sequence[int],
    b_autopilot: Sequence[bool],
) -> int:
    """The pair's unit as a cell number ``0..4(k-1)`` (the unit ``x`` is it over ``4(k-1)``):
    A in ``seat`` of A's game, B in that seat of its twin."""
    k = len(a_ranks)
    if len(b_ranks) != k:
        raise ValueError(f"twin games of {k} and {len(b_ranks)} seats")
    return unit_of(k, seat_half_points(a_ranks, a_autopilot, seat), seat_half_points(b_ranks, b_autopilot, seat))


def unit_of(players: int, a_half: int, b_half: int) -> int:
    """The cell of a pair where A scored ``a_half`` and B ``b_half`` half points
    (:func:`seat_half_points`): ``2(k-1) + b_half - a_half``."""
    return 2 * (players - 1) + b_half - a_half


# -- the test's settings -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SprtSpec:
    """An SPRT's hypotheses (Elo of B over A, in ``model``'s Elo) and error rates."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"

    @property
    def lower(self) -> float:
        """Accept H0 at or below this LLR: ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this LLR: ``log((1 - beta) / alpha)``."""
        return math.log((1.0 - self.beta) / self.alpha)

    def text(self) -> str:
        return f"elo0={self.elo0:g},elo1={self.elo1:g},alpha={self.alpha:g},beta={self.beta:g},model={self.model}"

    def to_dict(self) -> dict[str, Any]:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta, "model": self.model}


#: The largest |elo| a hypothesis may have (normalized or logistic): beyond it a game is
#: all but decided, and the test's constrained distributions stop existing.
MAX_ELO = 400.0


def parse_sprt(text: str) -> SprtSpec:
    """``elo0=0,elo1=10,alpha=0.05,beta=0.05[,model=normalized|logistic]`` (any subset, any
    order; the rest default). Raises ValueError saying what is wrong, quoting the text."""
    shown = text if len(text) <= 120 else text[:117] + "..."
    values: dict[str, Any] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in ("elo0", "elo1", "alpha", "beta", "model"):
            raise ValueError(
                f"--sprt {shown!r}: {part[:40]!r} is not one of elo0=, elo1=, alpha=, beta=, model= "
                "(e.g. --sprt elo0=0,elo1=10,alpha=0.05,beta=0.05)"
            )
        if key in values:
            raise ValueError(f"--sprt {shown!r}: {key} is given twice")
        if key == "model":
            if value not in MODELS:
                raise ValueError(f"--sprt {shown!r}: model must be {' or '.join(MODELS)}, not {value[:40]!r}")
            values[key] = value
            continue
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"--sprt {shown!r}: {key} must be a number, not {value[:40]!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"--sprt {shown!r}: {key} must be a finite number, not {value[:40]!r}")
        values[key] = number
    spec = SprtSpec(**values)
    for key in ("alpha", "beta"):
        if not 0.0 < getattr(spec, key) < 0.5:
            raise ValueError(f"--sprt {shown!r}: {key} must be between 0 and 0.5 (e.g. 0.05), not {getattr(spec, key):g}")
    if not spec.elo0 < spec.elo1:
        raise ValueError(f"--sprt {shown!r}: elo0 ({spec.elo0:g}) must be below elo1 ({spec.elo1:g})")
    for key in ("elo0", "elo1"):
        if abs(getattr(spec, key)) > MAX_ELO:
            raise ValueError(f"--sprt {shown!r}: {key} must be within ±{MAX_ELO:g}, not {getattr(spec, key):g}")
    return spec


# -- distributions over the cells ----------------------------------------------------------


def _mean_var(values: Sequence[float], probs: Sequence[float]) -> tuple[float, float]:
    mu = sum(p * v for v, p in zip(values, probs, strict=True))
    var = sum(p * (v - mu) ** 2 for v, p in zip(values, probs, strict=True))
    return mu, var


def _secular(a: Sequence[float], p: Sequence[float]) -> float | None:
    """The root ``x`` of ``sum p_i a_i / (1 + x a_i) = 0`` with every ``1 + x a_i > 0``
    (None when there is none: every ``a_i`` on one side of 0). The sum falls as ``x``
    grows, so Newton's steps are kept inside the bracket the signs give, halving it when
    a step would leave it."""
    live = [(ai, pi) for ai, pi in zip(a, p, strict=True) if pi > 0.0]
    top = max(ai for ai, _ in live)
    bottom = min(ai for ai, _ in live)
    if not (top > 0.0 > bottom):
        return None
    lo, hi = -1.0 / top, -1.0 / bottom
    width = hi - lo
    lo, hi = lo + width * 1e-12, hi - width * 1e-12
    x = 0.0
    for _ in range(200):
        f = df = 0.0
        for ai, pi in live:
            d = 1.0 / (1.0 + x * ai)
            f += pi * ai * d
            df -= pi * ai * ai * d * d
        if f > 0.0:
            lo = x
        else:
            hi = x
        if abs(f) < 1e-15:
            return x
        step = x - f / df if df < 0.0 else (lo + hi) / 2
        if not lo < step < hi:
            step = (lo + hi) / 2
        if abs(step - x) < 1e-15 * max(1.0, abs(x)):
            return step
        x = step
    return x


def _mle(values: Sequence[float], phat: Sequence[float], model: str, target: float) -> list[float] | None:
    """The most likely distribution over ``values`` given the observed ``phat`` among those
    whose logistic score is ``target`` (``model=logistic``: the mean is ``target``) or whose
    t-value per pair ``(mean - ½) / sigma`` is ``target`` (``normalized``), as fishtest
    finds it; None if there is none."""
    if model == "logistic":
        x = _secular([v - target for v in values], phat)
        if x is None:
            return None
        return [p / (1.0 + x * (v - target)) for v, p in zip(values, phat, strict=True)]
    probs = [1.0 / len(values)] * len(values)
    for _ in range(25):
        mu, var = _mean_var(values, probs)
        sigma = math.sqrt(var)
        if sigma <= 0.0:
            return None
        shifted = [v - 0.5 - target * sigma * (1.0 + ((mu - v) / sigma) ** 2) / 2.0 for v in values]
        x = _secular(shifted, phat)
        if x is None:
            return None
        new = [p / (1.0 + x * s) for p, s in zip(phat, shifted, strict=True)]
        change = max(abs(n - o) for n, o in zip(new, probs, strict=True))
        probs = new
        if change < 1e-10:
            break
    return probs


def _logistic_score(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def _targets(spec: SprtSpec) -> tuple[float, float]:
    """The two hypotheses as the constrained fits take them: a pair's t-value (a pair is two
    games, so ``sqrt(2)`` times a game's), or a logistic score."""
    if spec.model == "logistic":
        return _logistic_score(spec.elo0), _logistic_score(spec.elo1)
    return spec.elo0 / NELO_PER_T * math.sqrt(2.0), spec.elo1 / NELO_PER_T * math.sqrt(2.0)


def _grid(counts: Sequence[int]) -> list[float]:
    steps = len(counts) - 1
    return [j / steps for j in range(len(counts))]


def llr(counts: Sequence[int], spec: SprtSpec) -> float:
    """The generalized log-likelihood ratio of H1 over H0 for the pairs counted by cell
    (``counts[j]`` pairs had unit ``j / (len(counts) - 1)``); 0 with no pair."""
    n = sum(counts)
    if n <= 0:
        return 0.0
    if len(counts) < 2:
        raise ValueError("a pair's unit needs at least two cells")
    weights = [c if c > 0 else EMPTY_CELL for c in counts]
    total = sum(weights)
    phat = [w / total for w in weights]
    values = _grid(counts)
    t0, t1 = _targets(spec)
    p0 = _mle(values, phat, spec.model, t0)
    p1 = _mle(values, phat, spec.model, t1)
    if p0 is None or p1 is None or min(p0) <= 0.0 or min(p1) <= 0.0:
        return _llr_normal(values, phat, n, spec)
    return n * sum(p * (math.log(q1) - math.log(q0)) for p, q0, q1 in zip(phat, p0, p1, strict=True))


def _llr_normal(values: Sequence[float], phat: Sequence[float], n: int, spec: SprtSpec) -> float:
    """The LLR of the normal approximation (the fit's limit for small differences): the
    fallback where the constrained fits do not exist (hypotheses far beyond the data)."""
    mu, var = _mean_var(values, phat)
    sigma = math.sqrt(var)
    if spec.model == "logistic":
        s0, s1 = _targets(spec)
        return n * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var)
    t0, t1 = _targets(spec)
    t = (mu - 0.5) / sigma
    return n * (t1 - t0) * (2.0 * t - t0 - t1) / 2.0


def verdict(value: float, spec: SprtSpec) -> str:
    """``"H1"``, ``"H0"`` or ``"none"`` for an LLR."""
    if value >= spec.upper:
        return "H1"
    if value <= spec.lower:
        return "H0"
    return "none"


# -- the estimate --------------------------------------------------------------------------


def _phi(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def _elo_of(score: float) -> float:
    """The logistic Elo of an expected score strictly between 0 and 1."""
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True, slots=True)
class Estimate:
    """What the pairs say of B against A, every figure a finite number. ``score``: the mean
    unit (½: as good as A); ``elo``/``elo_low``/``elo_high``: logistic Elo and its 95%
    interval; ``nelo``…: normalized Elo; ``los``: the likelihood of superiority, P(B better
    than A). ``adjusted``: the pairs had no spread (every pair the same result: a perfect
    score, identical deterministic bots, or the first pair), so the figures are those of the
    pairs with half a pair of each extreme result added (:func:`estimate`), but ``elo``
    wherever the pairs' own score has a finite one; ``score`` and ``stdev`` are always the
    pairs' own."""

    pairs: int
    score: float
    stdev: float  # of one pair's unit
    elo: float
    elo_low: float
    elo_high: float
    nelo: float
    nelo_low: float
    nelo_high: float
    los: float
    adjusted: bool = False


def estimate(counts: Sequence[int]) -> Estimate:
    """Elo (logistic and normalized) with 95% intervals and the LOS from the pairs' counts by
    cell, from the normal approximation of the mean of the units (as fishtest's).

    Pairs without spread (every one the same result) give no interval and, away from ½, no
    finite Elo: a perfect score is +∞ on the logistic scale, any constant result ±∞ on the
    normalized one. Their figures are then those of the counts with half a pair added at
    each extreme (a pair B lost outright, one B won outright: ±½ pair, the usual adjustment
    of an all-win record), but for the logistic Elo of a score strictly between 0 and 1,
    which is the pairs' own: after ``n`` perfect pairs, the Elo of ``(n + ½) / (n + 1)``,
    that is ``400 log10(2n + 1)``. An interval's end beyond what the pairs can show (a score of 0 or
    1) is taken at that same most they can show, ``(n + ½) / (n + 1)`` or ``½ / (n + 1)``,
    or at the estimate itself where that is further out."""
    n = sum(counts)
    if n <= 0:
        return Estimate(0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5)
    values = _grid(counts)
    mu, var = _mean_var(values, [c / n for c in counts])
    var = max(var, 0.0)
    weights = [float(c) for c in counts]
    adjusted = var <= 0.0
    if adjusted:
        weights[0] += 0.5
        weights[-1] += 0.5
    total = sum(weights)
    m, v = _mean_var(values, [w / total for w in weights])
    se = math.sqrt(max(v, 0.0) / total)
    if se > 0.0:
        los_value = _phi((m - 0.5) / se)
    else:
        los_value = 1.0 if m > 0.5 else 0.0 if m < 0.5 else 0.5
    low, high = m - Z95 * se, m + Z95 * se
    sigma_game = math.sqrt(2.0 * v)
    if sigma_game > 0.0:
        nelo = (m - 0.5) / sigma_game * NELO_PER_T
        nelo_low = (low - 0.5) / sigma_game * NELO_PER_T
        nelo_high = (high - 0.5) / sigma_game * NELO_PER_T
    else:  # (not reached: the adjustment gives every count a spread)
        nelo = nelo_low = nelo_high = 0.0
    point = mu if 0.0 < mu < 1.0 else m  # the pairs' own score wherever its Elo is finite
    # (+ 0.0 below: an even score is Elo 0, never -0)
    floor, cap = min(point, 0.5 / (n + 1)), max(point, (n + 0.5) / (n + 1))
    return Estimate(
        pairs=n, score=mu, stdev=math.sqrt(var), elo=_elo_of(point) + 0.0, elo_low=_elo_of(min(max(low, floor), cap)),
        elo_high=_elo_of(max(min(high, cap), floor)), nelo=nelo, nelo_low=nelo_low, nelo_high=nelo_high,
        los=los_value, adjusted=adjusted,
    )


def los(counts: Sequence[int]) -> float:
    """The likelihood of superiority of B over A from the pairs' counts by cell."""
    return estimate(counts).los


# -- the sequential test -------------------------------------------------------------------


class SequentialTest:
    """The pairs of a match in schedule order: after each, the LLR, the estimate and
    whether the test has stopped (``spec`` None: a fixed number of pairs, judged once
    all are in; ``max_pairs`` the cap)."""

    def __init__(self, players: int, spec: SprtSpec | None, max_pairs: int) -> None:
        self.players = players
        self.spec = spec
        self.judge = spec or SprtSpec()
        self.max_pairs = max_pairs
        self.counts = [0] * cells(players)
        self.llr = 0.0

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def add(self, unit: int) -> None:
        """Count one more pair (the next in schedule order); once stopped, no more."""
        if self.stopped:
            raise ValueError("the test has stopped: no more pairs count")
        if not 0 <= unit < len(self.counts):
            raise ValueError(f"a pair's unit is a cell from 0 to {len(self.counts) - 1}, not {unit}")
        self.counts[unit] += 1
        self.llr = llr(self.counts, self.judge)

    def extend(self, units: Iterable[int]) -> None:
        for unit in units:
            if self.stopped:
                return
            self.add(unit)

    @property
    def decided(self) -> str:
        """The verdict so far: with an SPRT, as soon as a bound is crossed; without, only
        once every pair is in."""
        if self.spec is None and self.pairs < self.max_pairs:
            return "none"
        return verdict(self.llr, self.judge)

    @property
    def stopped(self) -> bool:
        return self.pairs >= self.max_pairs or (self.spec is not None and self.decided != "none")

    def estimate(self) -> Estimate:
        return estimate(self.counts)
