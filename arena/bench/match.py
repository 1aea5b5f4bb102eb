"""`arena bench match`: how many games the paired design of `arena match` needs to resolve a
difference, against unpaired games of the same bots answering the same question.

One fixed match (B against A, ``pairs`` pairs, no SPRT) is played into a scratch results
folder. Each pair gives A's rank-based score in A's game and B's in the twin (same deal,
seat and opponents). The paired unit is B's minus A's within a pair; the unpaired unit
takes B's from the *next* pair's twin instead, a game of another deal, in another seat,
among other opponents: what two independent games of A and of B give, from the very same
games (so the two designs see the same bots, machine and luck).

Both designs estimate the same mean; what differs is the spread of a unit. The games a
design needs to resolve a difference ``d`` (its 95% interval clear of 0) are
``2 (1.96 sigma / d)²`` (two games per unit), so the ratio of games, unpaired over paired,
is the ratio of the variances whatever ``d`` is; the figures for the measured ``d`` are
reported too. The ratio's 95% interval comes from resampling the pairs (seeded, so the same
games give the same figures): the noise of the measurement itself.
"""

from __future__ import annotations

import math
import random
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from arena.bots.sandbox import Level, SandboxSettings
from arena.errors import ArenaError
from arena.game.players import TimeSettings
from arena.match.runner import MatchSettings, run_match

Z95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class MatchBench:
    a: str
    b: str
    opponents: list[str]
    players: int
    pairs: int
    seconds: float  # the match's wall time
    mean_difference: float  # B's mean rank-based score minus A's (0: as good)
    paired_sd: float  # of one unit (B's score minus A's) within pairs
    unpaired_sd: float  # of one unit across deals
    paired_games: float | None  # to resolve the measured difference; None if it is 0
    unpaired_games: float | None
    ratio: float  # unpaired games over paired games (the variance ratio)
    ratio_low: float  # its 95% interval (resampled pairs)
    ratio_high: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _variance(values: Sequence[float]) -> float:
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1)


def _designs(halves: Sequence[tuple[int, int]], players: int) -> tuple[list[float], list[float]]:
    """Paired and unpaired differences of scores (each in -1..1), from each pair's half points."""
    scale = 2.0 * (players - 1)
    paired = [(b - a) / scale for a, b in halves]
    unpaired = [(halves[(i + 1) % len(halves)][1] - a) / scale for i, (a, _) in enumerate(halves)]
    return paired, unpaired


def variance_ratio(halves: Sequence[tuple[int, int]], players: int, *, draws: int = 400, seed: int = 0) -> tuple[float, float, float]:
    """Unpaired over paired variance of a unit, and its 95% interval from ``draws`` resamples
    of the pairs (each resample's unpaired units again pair a twin with the next pair's)."""
    if len(halves) < 2:
        raise ValueError(f"a spread needs at least 2 pairs, not {len(halves)}")
    paired, unpaired = _designs(halves, players)
    vp, vu = _variance(paired), _variance(unpaired)
    ratio = vu / vp if vp > 0 else math.inf
    rng = random.Random(seed)
    ratios = []
    n = len(halves)
    for _ in range(draws):
        sample = [halves[rng.randrange(n)] for _ in range(n)]
        p, u = _designs(sample, players)
        v = _variance(p)
        if v > 0:
            ratios.append(_variance(u) / v)
    ratios.sort()
    if not ratios:
        return ratio, math.inf, math.inf
    return ratio, ratios[int(0.025 * (len(ratios) - 1))], ratios[int(0.975 * (len(ratios) - 1))]


def _games_to_resolve(sd: float, difference: float) -> float | None:
    if difference == 0:
        return None
    return 2.0 * (Z95 * sd / abs(difference)) ** 2


def bench_match(
    *,
    a: str = "random",
    b: str = "greedy",
    opponents: Sequence[str] = (),
    players: int = 4,
    pairs: int = 100,
    seed: int = 0,
    jobs: int | None = None,
    scratch: Path | None = None,
) -> MatchBench:
    """Play the match into a scratch results folder (removed afterwards) and measure."""
    if pairs < 4:
        raise ArenaError(f"--pairs {pairs}: the spreads need at least 4 pairs")
    base = scratch if scratch is not None else Path.cwd()
    try:
        work = Path(tempfile.mkdtemp(prefix=".arena-bench-match-", dir=base))
    except OSError as exc:
        raise ArenaError(f"{base}: cannot make a scratch folder there: {exc.strerror or exc}") from None
    try:
        summary = run_match(
            MatchSettings(
                a=a, b=b, opponents=tuple(opponents), players=players, games=2 * pairs, seed=seed, jobs=jobs,
                time=TimeSettings(), results=work / "results",
                sandbox=SandboxSettings(Level.NONE),  # the example bots: trusted, and the sandbox is not what is measured
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if summary.interrupted:
        raise ArenaError("the benchmark's match was interrupted: nothing measured")
    halves = summary.halves
    paired, unpaired = _designs(halves, players)
    difference = sum(paired) / len(paired)
    sd_p, sd_u = math.sqrt(_variance(paired)), math.sqrt(_variance(unpaired))
    ratio, low, high = variance_ratio(halves, players, seed=seed)
    return MatchBench(
        a=summary.a, b=summary.b, opponents=list(summary.opponents), players=players, pairs=len(halves),
        seconds=round(summary.seconds, 2), mean_difference=difference, paired_sd=sd_p, unpaired_sd=sd_u,
        paired_games=_games_to_resolve(sd_p, difference), unpaired_games=_games_to_resolve(sd_u, difference),
        ratio=ratio, ratio_low=low, ratio_high=high,
    )
