"""The live leaderboard of `arena run`: flat memory over a long run, and the same ratings as
the final fit."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from size_helpers import held_entries

from arena.cli.progress import ConsoleReporter
from arena.tournament.ratings import GameResult, bot_stats, fit_elo

BOTS = [f"bot{i}" for i in range(6)]


def finished_games(count: int, seed: int = 0):
    """(game, record) pairs as the runner hands them to the reporter: four seats of six bots,
    ranks drawn by strength, a crash now and then (that seat last), a void game now and then."""
    rng = random.Random(seed)
    strength = {bot: 1.0 + i for i, bot in enumerate(BOTS)}
    for number in range(count):
        seats = rng.sample(BOTS, 4)
        order = sorted(range(4), key=lambda s: -strength[seats[s]] * rng.random())
        crashed = rng.random() < 0.1
        if crashed:  # any seat may crash; it then ranks last
            order.append(order.pop(rng.randrange(4)))
        ranks = [0] * 4
        for place, seat in enumerate(order, start=1):
            ranks[seat] = place
        faults = [{"crash": 1} if crashed and seat == order[-1] else {} for seat in range(4)]
        autopilot = [crashed and seat == order[-1] for seat in range(4)]
        record = SimpleNamespace(
            game_id=f"g{number}",
            status="void" if rng.random() < 0.02 else "complete",
            config=SimpleNamespace(players=4),
            ranks=ranks,
            scores=[50 - 10 * r + rng.randrange(5) for r in ranks],
            autopilot=autopilot,
            faults=faults,
            void_reason="the referee failed",
        )
        yield SimpleNamespace(set_id=f"s{number // 4}", seats=seats), record


def as_result(game, record) -> GameResult:
    return GameResult(
        record.game_id, game.set_id, tuple(game.seats), tuple(record.ranks), tuple(record.scores),
        tuple(record.autopilot), tuple(record.faults),
    )


def test_the_reporters_memory_does_not_grow_with_games() -> None:
    """Once every bot has met every other, ten times the games add no entry to anything the
    reporter holds (it once kept a result per game)."""
    reporter = ConsoleReporter(quiet=True)
    games = list(finished_games(3000))
    for done, (game, record) in enumerate(games[:300], start=1):
        reporter.game_done(game, record, done, len(games))
    reporter.live_rows()
    before = held_entries(reporter)
    for done, (game, record) in enumerate(games[300:], start=301):
        reporter.game_done(game, record, done, len(games))
    reporter.live_rows()
    assert held_entries(reporter) == before
    assert reporter.played == sum(record.status == "complete" for _, record in games)


def test_the_live_table_shows_what_the_final_fit_shows() -> None:
    """At every refresh (each a warm start from the last), the live rows are the fit and the
    statistics of the run's complete games so far."""
    reporter = ConsoleReporter(quiet=True)
    games = list(finished_games(1200, seed=1))
    results = []
    for done, (game, record) in enumerate(games, start=1):
        reporter.game_done(game, record, done, len(games))
        if record.status == "complete":
            results.append(as_result(game, record))
        if done in (40, 400, len(games)):
            rows = reporter.live_rows()
            elo, stats = fit_elo(results), bot_stats(results)
            assert [row["label"] for row in rows] == sorted(elo, key=lambda k: -elo[k])
            assert [row["rank"] for row in rows] == list(range(1, len(elo) + 1))
            for row in rows:
                s = stats[row["label"]]
                assert row["elo"] == pytest.approx(elo[row["label"]], abs=1e-6)
                assert (row["games"], row["wins"], row["mean_points"], row["mean_rank"], row["faults"]) == (
                    s.games, s.wins, s.mean_points, s.mean_rank, s.faults
                )
    assert any(row["faults"] for row in rows)
