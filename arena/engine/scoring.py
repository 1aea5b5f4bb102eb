"""Scoring (RULES R1, R9–R13): pure functions on counts, reusable by bots and tests."""

from __future__ import annotations

from collections.abc import Sequence

from .cards import (
    DUMPLING,
    DUMPLING_POINTS,
    MAKI1,
    MAKI2,
    MAKI3,
    MAKI_FIRST,
    MAKI_SECOND,
    PUDDING_BONUS,
    SASHIMI,
    SASHIMI_POINTS,
    SASHIMI_SET,
    TEMPURA,
    TEMPURA_POINTS,
    TEMPURA_SET,
)


def set_points(counts: Sequence[int], nigiri_points: int) -> int:
    """Points of one tableau for everything but maki and pudding (R1).

    ``counts`` is indexed by kind; ``nigiri_points`` already holds the wasabi
    tripling, which is decided when a nigiri enters the tableau (R7).
    """
    return (
        TEMPURA_POINTS * (counts[TEMPURA] // TEMPURA_SET)
        + SASHIMI_POINTS * (counts[SASHIMI] // SASHIMI_SET)
        + DUMPLING_POINTS[min(counts[DUMPLING], 5)]
        + nigiri_points
    )


def maki_symbols(counts: Sequence[int]) -> int:
    """Symbols on a tableau's maki cards (not the number of cards) (R10)."""
    return counts[MAKI1] + 2 * counts[MAKI2] + 3 * counts[MAKI3]


def maki_points(symbols: Sequence[int]) -> list[int]:
    """Maki majority points for every seat (R10).

    Most symbols: 6, second most: 3. Ties split evenly, rounding down, the
    remainder lost; a tie for first awards no second place; a seat with 0
    symbols never scores. ``[6, 4, 4, 1] -> [6, 1, 1, 0]``.
    """
    points = [0] * len(symbols)
    positive = [s for s in symbols if s > 0]
    if not positive:
        return points
    first = max(positive)
    winners = [i for i, s in enumerate(symbols) if s == first]
    for i in winners:
        points[i] = MAKI_FIRST // len(winners)
    if len(winners) > 1:
        return points
    rest = [s for s in positive if s < first]
    if not rest:
        return points
    second = max(rest)
    seconds = [i for i, s in enumerate(symbols) if s == second]
    for i in seconds:
        points[i] = MAKI_SECOND // len(seconds)
    return points


def round_points(counts: Sequence[Sequence[int]], nigiri_points: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    """A round's points for every seat (R9, R10): ``(points, maki symbols, maki points)``,
    where ``points[s]`` is ``set_points(counts[s], nigiri_points[s])`` plus the seat's
    maki points: the end of a round in one pass, with the formulas of the functions above."""
    symbols = [c[MAKI1] + 2 * c[MAKI2] + 3 * c[MAKI3] for c in counts]
    maki = maki_points(symbols)
    points = [
        TEMPURA_POINTS * (c[TEMPURA] // TEMPURA_SET)
        + SASHIMI_POINTS * (c[SASHIMI] // SASHIMI_SET)
        + DUMPLING_POINTS[min(c[DUMPLING], 5)]
        + n
        + m
        for c, n, m in zip(counts, nigiri_points, maki)
    ]
    return points, symbols, maki


def pudding_points(puddings: Sequence[int], *, penalty: bool = True) -> list[int]:
    """End-of-game pudding points for every seat (R12).

    Most puddings: +6, fewest: -6, each split evenly among the tied seats with
    the remainder dropped (-6 over 4 seats is -1 each, never -2). All equal:
    nobody gains or loses. ``penalty=False`` is the two-player rule: only the
    bonus is awarded. ``[3, 2, 0, 0] -> [6, 0, -3, -3]``.
    """
    points = [0] * len(puddings)
    most, fewest = max(puddings), min(puddings)
    if most == fewest:
        return points
    top = [i for i, p in enumerate(puddings) if p == most]
    for i in top:
        points[i] += PUDDING_BONUS // len(top)
    if penalty:
        bottom = [i for i, p in enumerate(puddings) if p == fewest]
        for i in bottom:
            points[i] -= PUDDING_BONUS // len(bottom)
    return points


def rank(points: Sequence[int], puddings: Sequence[int]) -> list[int]:
    """Places for every seat (R13): by points, then puddings; equal on both share
    the place, numbered as in sport (1, 1, 3)."""
    keys = [(p, q) for p, q in zip(points, puddings, strict=True)]
    return [1 + sum(1 for other in keys if other > key) for key in keys]
