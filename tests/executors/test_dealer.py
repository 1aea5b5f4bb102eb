"""How the local executor hands jobs to the processes that play them (arena.executors.local
._Dealer): every job exactly once, whatever order the processes ask in; the games of one
deal (a duplicate set) spread over the processes, so that each process starts fewer bot
processes that have not seen the deal; memory bounded however many jobs there are. Pure
logic: the executor's games are tested with real bots in test_referee_processes.py."""

from __future__ import annotations

import random
from pathlib import Path

from arena.bots import BotSpec
from arena.bots.manifest import BotManifest
from arena.engine import GameConfig, Variant
from arena.executors.jobs import GameJob, SeatBot
from arena.executors.local import LOOKAHEAD, REMEMBERED_DEALS, _Dealer
from arena.game.players import TimeSettings

CONFIG = GameConfig(4, Variant.STANDARD)
SEAT = SeatBot(BotSpec(name="b", argv=("b",), cwd=Path("/")), BotManifest(name="b", version="1", path=Path("/b"), run=("b",)))


def job(i: int, seed: int) -> GameJob:
    return GameJob(f"game-{i}", (SEAT,) * 4, seed, CONFIG, TimeSettings())


def sets(n_sets: int, per_set: int = 4) -> list[GameJob]:
    """``n_sets`` duplicate sets in schedule order: each set's games one after another,
    all of one deal."""
    return [job(s * per_set + g, 1000 + s) for s in range(n_sets) for g in range(per_set)]


def test_one_process_takes_the_jobs_in_order() -> None:
    jobs = sets(5)
    dealer = _Dealer(iter(jobs), 1)
    assert [dealer.take(0) for _ in jobs] == jobs
    assert dealer.take(0) is None


def test_every_job_is_dealt_exactly_once_whatever_order_the_processes_ask_in() -> None:
    for trial in range(20):
        rng = random.Random(trial)
        jobs = sets(30, per_set=rng.choice((2, 3, 4, 5)))
        processes = rng.choice((2, 3, 4))
        dealer = _Dealer(iter(jobs), processes)
        dealt: list[GameJob] = []
        while (got := dealer.take(rng.randrange(processes))) is not None:
            dealt.append(got)
        assert sorted(j.game_id for j in dealt) == sorted(j.game_id for j in jobs)


def test_two_processes_asking_in_turn_each_play_half_of_every_set() -> None:
    # Each process then needs 2 processes of each bot (one per game of a set it plays),
    # not up to 4: a bot process never plays two games of one deal.
    dealer = _Dealer(iter(sets(40)), 2)
    per_process: list[dict[int, int]] = [{}, {}]
    k = 0
    while (got := dealer.take(k)) is not None:
        per_process[k][got.seed] = per_process[k].get(got.seed, 0) + 1
        k = 1 - k
    for played in per_process:
        assert set(played.values()) == {2}


def test_memory_stays_bounded_over_many_jobs() -> None:
    taken = 0

    def schedule():  # noqa: ANN202 - a generator too long to hold, made as it is read
        nonlocal taken
        for i in range(20_000):
            taken += 1
            yield job(i, i // 4)

    dealer = _Dealer(schedule(), 2)
    for n in range(20_000):
        assert dealer.take(n % 2) is not None
        assert taken - (n + 1) <= LOOKAHEAD * 2  # jobs read ahead: a bounded window
        assert all(len(p) <= REMEMBERED_DEALS for p in dealer._played)
    assert dealer.take(0) is None
