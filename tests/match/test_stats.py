"""The match's statistics (arena.match.stats): the pair's unit from twin games' ranks, the
--sprt text, the estimate, and the SPRT's error rates measured by simulation through the
real code."""

from __future__ import annotations

import math
import random

import pytest

from arena.match.stats import (
    NELO_PER_T,
    SequentialTest,
    SprtSpec,
    cells,
    estimate,
    llr,
    pair_unit,
    parse_sprt,
    seat_half_points,
    verdict,
)

# -- the unit -----------------------------------------------------------------------------


def test_two_player_pairs_are_the_pentanomial() -> None:
    """With two players the unit is B's total over the two games (seats swapped) over 2."""
    assert cells(2) == 5
    # A's game: A in seat 0 beats B; twin: B in seat 0 beats A -> 1 + 0 for B: ½.
    assert pair_unit(0, [1, 2], [False, False], [1, 2], [False, False]) == 2
    # B wins both (A's game: A in seat 0 ranked 2; twin: B in seat 0 ranked 1).
    assert pair_unit(0, [2, 1], [False, False], [1, 2], [False, False]) == 4
    # B loses both.
    assert pair_unit(1, [2, 1], [False, False], [1, 2], [False, False]) == 0
    # A shared first place in its game, B won its twin: 1½ of 2.
    assert pair_unit(0, [1, 1], [False, False], [1, 2], [False, False]) == 3


def test_multi_player_unit_is_the_rank_based_score_difference() -> None:
    """Four seats: a seat's score is its pairs won (½ for shared places) over the 3 others."""
    assert cells(4) == 13
    assert seat_half_points([1, 2, 3, 4], [], 0) == 6
    assert seat_half_points([1, 2, 2, 4], [], 1) == 3  # beats seat 3, ties seat 2
    # A in seat 2 came 4th (0 of 3); B in seat 2 of the twin came 2nd (2 of 3): x = (1 + 2/3) / 2.
    unit = pair_unit(2, [1, 2, 4, 3], [False] * 4, [1, 3, 2, 4], [False] * 4)
    assert unit == 6 + 4 - 0
    assert unit / 12 == pytest.approx((1 + 2 / 3) / 2)


def test_a_seat_on_autopilot_loses_to_every_seat_that_played_on() -> None:
    """As the leaderboard counts it, whatever the ranks say."""
    assert seat_half_points([1, 2, 3], [True, False, False], 0) == 0  # first, but on autopilot: loses both
    # Two seats on autopilot are compared by rank: seat 0 beats seat 2, and loses to seat 1.
    assert seat_half_points([1, 2, 3], [True, False, True], 0) == 2
    assert seat_half_points([1, 2, 3], [True, False, True], 2) == 0


# -- the settings ---------------------------------------------------------------------------


def test_sprt_text_defaults_and_bounds() -> None:
    spec = parse_sprt("elo0=0,elo1=10,alpha=0.05,beta=0.05")
    assert spec == SprtSpec()
    assert spec.lower == pytest.approx(math.log(0.05 / 0.95))
    assert spec.upper == pytest.approx(math.log(0.95 / 0.05))
    assert parse_sprt("elo1=5, model=logistic") == SprtSpec(elo1=5, model="logistic")
    assert parse_sprt("") == SprtSpec()


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("elo0=0,elo1=ten", "elo1 must be a number"),
        ("elo0=5,elo1=1", "elo0 (5) must be below elo1 (1)"),
        ("alpha=0.7", "alpha must be between 0 and 0.5"),
        ("gamma=1", "'gamma=1' is not one of"),
        ("elo1", "'elo1' is not one of"),
        ("elo1=3,elo1=4", "elo1 is given twice"),
        ("model=bayes", "model must be normalized or logistic"),
        ("elo1=nan", "elo1 must be a finite number"),
        ("elo1=10000", "elo1 must be within"),
    ],
)
def test_bad_sprt_text_says_what_is_wrong(text: str, names: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_sprt(text)
    assert names in str(info.value) and "--sprt" in str(info.value)


# -- the test and the estimate --------------------------------------------------------------


def test_llr_is_zero_without_pairs_and_signs_follow_the_data() -> None:
    spec = SprtSpec(0, 20)
    assert llr([0] * 5, spec) == 0.0
    assert llr([5, 20, 50, 20, 5], spec) < 0  # even: for H0
    assert llr([2, 10, 40, 30, 18], spec) > 0  # B ahead: for H1
    assert verdict(spec.upper, spec) == "H1" and verdict(spec.lower, spec) == "H0" and verdict(0, spec) == "none"


def test_llr_matches_the_normal_approximation_for_small_differences() -> None:
    """Large samples, small differences: the GSPRT's LLR tends to the normal one,
    N (t1 - t0)(2t - t0 - t1) / 2 with t the pairs' (mean - ½) / sigma."""
    counts = [39, 8843, 26675, 9240, 44]
    spec = SprtSpec(0.5, 2.5)
    n = sum(counts)
    mu = sum(j / 4 * c for j, c in enumerate(counts)) / n
    var = sum(c * (j / 4 - mu) ** 2 for j, c in enumerate(counts)) / n
    t = (mu - 0.5) / math.sqrt(var)
    t0, t1 = (e / NELO_PER_T * math.sqrt(2) for e in (spec.elo0, spec.elo1))
    assert llr(counts, spec) == pytest.approx(n * (t1 - t0) * (2 * t - t0 - t1) / 2, rel=1e-3)


def test_estimate_of_known_counts() -> None:
    """Mean ¾ over pairs: logistic Elo 190.8; the interval and LOS from the pairs' spread."""
    e = estimate([0, 0, 5, 0, 5])
    assert e.score == pytest.approx(0.75)
    assert e.elo == pytest.approx(-400 * math.log10(1 / 0.75 - 1))
    se = math.sqrt(0.0625 / 10)
    assert e.elo_low == pytest.approx(-400 * math.log10(1 / (0.75 - 1.959963984540054 * se) - 1))
    assert e.los == pytest.approx(0.5 * (1 + math.erf((0.25 / se) / math.sqrt(2))))
    assert e.nelo == pytest.approx(0.25 / math.sqrt(2 * 0.0625) * NELO_PER_T)
    assert not e.adjusted
    assert estimate([0] * 5).pairs == 0


@pytest.mark.parametrize("players", [2, 4])
def test_a_perfect_score_has_the_elo_of_half_a_pair_more_each_way(players: int) -> None:
    """B won (or lost) every pair outright: no finite Elo as it is, so the figures are those
    of the pairs with half a pair won and half a pair lost added: after n pairs the Elo of
    (n + ½) / (n + 1), 400 log10(2n + 1); the interval ends below it, and nothing is
    infinite or missing."""
    top = cells(players) - 1
    for n in (1, 3, 10, 200):
        won = estimate([0] * top + [n])
        lost = estimate([n] + [0] * top)
        assert won.adjusted and lost.adjusted and won.score == 1.0 and lost.score == 0.0
        assert won.elo == pytest.approx(400 * math.log10(2 * n + 1))
        assert lost.elo == pytest.approx(-won.elo)
        assert won.elo_low < won.elo == won.elo_high and lost.elo_low == lost.elo < lost.elo_high
        assert won.nelo_low < won.nelo < won.nelo_high and won.los > 0.5 > lost.los
        for figure in (won, lost):
            values = [getattr(figure, f) for f in ("elo", "elo_low", "elo_high", "nelo", "nelo_low", "nelo_high", "los")]
            assert all(isinstance(v, float) and math.isfinite(v) for v in values), figure
    # More pairs, more Elo: the estimate grows with the evidence.
    assert estimate([0, 0, 0, 0, 10]).elo_low > estimate([0, 0, 0, 0, 3]).elo_low


def test_an_interval_reaching_a_perfect_score_ends_at_the_most_the_pairs_can_show() -> None:
    """One pair short of perfect out of 100: the normal interval passes 1; its top is taken
    at what the pairs show, never past a score of 1 (no infinite Elo)."""
    e = estimate([0, 0, 0, 1, 99])
    assert not e.adjusted and e.elo == pytest.approx(-400 * math.log10(1 / 0.9975 - 1))
    assert e.elo_low < e.elo == e.elo_high and math.isfinite(e.elo_high)


@pytest.mark.parametrize("players", [2, 3, 5])
def test_zero_spread_at_even_divides_by_nothing_and_reaches_h0(players: int) -> None:
    """A deterministic A against its own copy: every pair exactly ½, no spread at all. The
    estimate is Elo 0 with an interval that narrows as pairs come (half a pair each way
    added), LOS 50%; the LLR falls by the same small step each pair and crosses H0 after
    about 1,785 pairs at the default hypotheses (nElo 0 vs 10), 287 with elo1=25 (measured:
    1,784 to 1,788 and 287 to 288 with 2 to 5 players: the empty cells' weight differs)."""
    middle = (cells(players) - 1) // 2
    for spec, pairs in ((SprtSpec(), 1786), (SprtSpec(0, 25), 287)):
        test = SequentialTest(players, spec, 100_000)
        llrs = []
        while not test.stopped:
            test.add(middle)
            llrs.append(test.llr)
        assert test.decided == "H0" and abs(test.pairs - pairs) <= 3
        assert all(b < a for a, b in zip(llrs, llrs[1:]))  # every pair a step towards H0
        e = test.estimate()
        assert e.adjusted and e.score == 0.5 and e.stdev == 0.0
        assert e.elo == 0.0 and e.nelo == 0.0 and e.los == 0.5 and -3 < e.elo_low < 0 < e.elo_high < 3
    first = estimate([0] * middle + [1] + [0] * middle)
    later = estimate([0] * middle + [100] + [0] * middle)
    assert first.elo_high > later.elo_high > 0


def test_the_json_figures_are_numbers_never_nan_or_infinite() -> None:
    """What --json prints is strict JSON (no NaN or Infinity) for every kind of record."""
    import json

    from arena.match.progress import MatchStatus

    for counts in ([0, 0, 0, 0, 5], [5, 0, 0, 0, 0], [0, 0, 9, 0, 0], [0, 0, 0, 1, 0], [0] * 5, [1, 2, 3, 2, 1]):
        test = SequentialTest(2, SprtSpec(), 1000)
        test.extend(j for j, c in enumerate(counts) for _ in range(c))
        e = test.estimate()
        status = MatchStatus(test.pairs, 1000, test.llr, -2.94, 2.94, test.decided, e)
        doc = json.loads(json.dumps(status.to_dict(), allow_nan=False))
        assert all(isinstance(doc[k], (int, float)) for k in ("elo", "elo_low", "elo_high", "nelo", "los", "llr"))


def test_a_fixed_test_judges_only_at_the_end_and_a_stopped_test_takes_no_more() -> None:
    fixed = SequentialTest(2, None, 3)
    fixed.extend([4, 4])
    assert fixed.decided == "none" and not fixed.stopped
    fixed.add(4)
    assert fixed.stopped
    with pytest.raises(ValueError):
        fixed.add(4)
    sprt = SequentialTest(2, SprtSpec(0, 100), 1000)
    sprt.extend([4] * 1000)
    assert sprt.decided == "H1" and sprt.pairs < 1000


# -- error rates, by simulation -------------------------------------------------------------


def _with_nelo(base: list[float], nelo: float) -> list[float]:
    """``base`` tilted (p_j times e^(λ j)) to the pair distribution of normalized Elo ``nelo``."""
    values = [j / (len(base) - 1) for j in range(len(base))]
    target = nelo / NELO_PER_T * math.sqrt(2)

    def tilt(lam: float) -> tuple[float, list[float]]:
        w = [b * math.exp(lam * v) for b, v in zip(base, values, strict=True)]
        p = [x / sum(w) for x in w]
        mu = sum(pi * v for pi, v in zip(p, values, strict=True))
        sd = math.sqrt(sum(pi * (v - mu) ** 2 for pi, v in zip(p, values, strict=True)))
        return (mu - 0.5) / sd, p

    lo, hi = -30.0, 30.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if tilt(mid)[0] < target else (lo, mid)
    return tilt(lo)[1]


def _error_rates(base: list[float], players: int, spec: SprtSpec, runs: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    out: dict[str, float] = {}
    for name, nelo in (("alpha", spec.elo0), ("beta", spec.elo1)):
        probs = _with_nelo(base, nelo)
        wrong = pairs = 0
        for _ in range(runs):
            test = SequentialTest(players, spec, 100_000)
            while not test.stopped:
                test.add(rng.choices(range(len(base)), probs)[0])
            pairs += test.pairs
            wrong += test.decided == ("H1" if name == "alpha" else "H0")
        out[name] = wrong / runs
        out[f"pairs_{name}"] = pairs / runs
    return out


def test_sprt_error_rates_are_near_alpha_and_beta_two_players() -> None:
    """Pentanomial pairs drawn at exactly elo0 = 0 and at elo1 = 60 normalized Elo, 200 seeded
    tests each, alpha = beta = 0.05. Measured (seed 17): false H1 at elo0 0.055, false H0 at
    elo1 0.045; 95 pairs on average at elo0, 102 at elo1 (300 tests: 0.043 and 0.043, 94 and
    97 pairs). Wald's bounds promise about alpha and beta; the check allows three standard
    errors above."""
    spec = SprtSpec(0, 60, 0.05, 0.05)
    rates = _error_rates([0.05, 0.25, 0.4, 0.25, 0.05], 2, spec, runs=200, seed=17)
    margin = 3 * math.sqrt(0.05 * 0.95 / 200)
    assert rates["alpha"] <= 0.05 + margin, rates
    assert rates["beta"] <= 0.05 + margin, rates
    assert 20 < rates["pairs_alpha"] < 400 and 20 < rates["pairs_beta"] < 400, rates


@pytest.mark.slow
def test_sprt_error_rates_are_near_alpha_and_beta_four_players() -> None:
    """The same with four players' units (13 cells, a spread like greedy's against the
    example bots), elo0 = 0, elo1 = 60, 300 seeded tests each. Measured (seed 5): false H1
    at elo0 0.077, false H0 at elo1 0.040, 97 pairs on average at both: the plug-in fit over
    13 cells errs a little more often early on than the 5-cell pentanomial; within three
    standard errors of alpha and beta."""
    base = [0.01, 0.02, 0.04, 0.07, 0.1, 0.13, 0.26, 0.13, 0.1, 0.07, 0.04, 0.02, 0.01]
    spec = SprtSpec(0, 60, 0.05, 0.05)
    rates = _error_rates(base, 4, spec, runs=300, seed=5)
    margin = 3 * math.sqrt(0.05 * 0.95 / 300)
    assert rates["alpha"] <= 0.05 + margin, rates
    assert rates["beta"] <= 0.05 + margin, rates
