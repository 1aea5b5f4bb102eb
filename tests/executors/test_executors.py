"""The executor seam: game jobs in, one record per finished game out, bounded
concurrency, bot processes reused (never within a deal), stoppable and cancellable.
Real bot processes (the example Python bots), no Dask needed."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from arena.bots.manifest import find_bot

from arena.bots.prepare import prepare_bot
from arena.engine import GameConfig, Variant
from arena.executors.cluster import failed_record
from arena.executors.jobs import GameJob, SeatBot
from arena.executors.local import open_local_executor
from arena.game.players import DEFAULT_TIME
from arena.game.record import GameRecord

ROOT = Path(__file__).resolve().parents[2]
CONFIG = GameConfig(2, Variant.STANDARD)


@pytest.fixture(scope="module")
def seats(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SeatBot]:
    cache = tmp_path_factory.mktemp("build")
    out = {}
    for name in ("random", "greedy"):
        manifest = find_bot(ROOT / "example_bots" / name)
        out[manifest.name] = SeatBot(prepare_bot(manifest, cache), manifest)
    return out


def jobs_of(seats: dict[str, SeatBot], deals: list[int]) -> list[GameJob]:
    a, b = sorted(seats)
    return [
        GameJob(f"game-{i}", (seats[a], seats[b]) if i % 2 == 0 else (seats[b], seats[a]), seed, CONFIG, DEFAULT_TIME, ids=None)
        for i, seed in enumerate(deals)
    ]


def run_local(jobs: list[GameJob], **how: object) -> tuple[list[tuple[GameJob, GameRecord]], dict[str, int]]:
    """Play ``jobs`` on a LocalExecutor; the (job, record) pairs it reported, and how many
    processes each bot had."""
    got: list[tuple[GameJob, GameRecord]] = []
    stop_after = how.pop("stop_after", None)
    cancel_after = how.pop("cancel_after", None)
    processes_per_bot = how.pop("processes_per_bot", 1)
    trusted_reuse = bool(how.pop("trusted_reuse", False))

    async def main() -> dict[str, int]:
        async with open_local_executor(processes_per_bot=processes_per_bot) as local:  # type: ignore[arg-type]
            local.trusted_reuse = trusted_reuse
            with trio.CancelScope() as scope:

                def finished(job: GameJob, record: GameRecord) -> None:
                    got.append((job, record))
                    if cancel_after is not None and len(got) >= cancel_after:
                        local.hurry()
                        scope.cancel()

                await local.play(
                    jobs, finished, keep_going=lambda: stop_after is None or len(got) < stop_after, **how  # type: ignore[arg-type]
                )
            owned: dict[str, int] = {}
            for p in local.pool.players:
                owned[p.name] = owned.get(p.name, 0) + 1
            return owned

    return got, trio.run(main)


def test_every_job_is_played_once_and_its_record_is_the_jobs_game(seats: dict[str, SeatBot]) -> None:
    jobs = jobs_of(seats, [11, 12, 13, 14])
    got, _ = run_local(jobs, concurrency=2)
    assert sorted(job.game_id for job, _ in got) == [j.game_id for j in jobs]
    for job, record in got:
        assert record.status == "complete"
        assert record.game_id == job.game_id
        assert record.seed == job.seed
        assert record.bots == [s.name for s in job.seats]


def test_one_process_per_bot_plays_every_deal_when_games_go_one_at_a_time(seats: dict[str, SeatBot]) -> None:
    got, owned = run_local(jobs_of(seats, [21, 22, 23]), concurrency=1)
    assert len(got) == 3
    assert owned == dict.fromkeys(seats, 1)


def test_a_deal_played_twice_gets_a_second_process_while_the_bot_may_have_one(seats: dict[str, SeatBot]) -> None:
    # The two seatings of one deal: a process that has seen the deal never plays it again.
    got, owned = run_local(jobs_of(seats, [31, 31]), concurrency=1, processes_per_bot=2)
    assert len(got) == 2
    assert owned == dict.fromkeys(seats, 2)



def test_trusted_reuse_plays_a_deal_again_in_the_same_processes_and_the_same_games(seats: dict[str, SeatBot]) -> None:
    jobs = jobs_of(seats, [31, 31, 32, 32])
    fresh, fresh_owned = run_local(jobs, concurrency=1, processes_per_bot=2)
    trusted, owned = run_local(jobs, concurrency=1, processes_per_bot=2, trusted_reuse=True)
    assert fresh_owned == dict.fromkeys(seats, 2)
    assert owned == dict.fromkeys(seats, 1)  # the one process of each bot played all four
    assert [(j.game_id, r.scores, r.ranks) for j, r in trusted] == [(j.game_id, r.scores, r.ranks) for j, r in fresh]

def test_no_game_starts_once_the_caller_says_stop(seats: dict[str, SeatBot]) -> None:
    got, _ = run_local(jobs_of(seats, [41, 42, 43, 44]), concurrency=1, stop_after=1)
    assert [job.game_id for job, _ in got] == ["game-0"]


def test_a_cancelled_caller_hears_of_no_game_after_it_cancelled(seats: dict[str, SeatBot]) -> None:
    got, _ = run_local(jobs_of(seats, [51, 52, 53, 54, 55, 56]), concurrency=2, cancel_after=1)
    assert len(got) == 1


def test_a_game_that_kept_failing_on_the_cluster_is_void_with_its_reasons_and_blames_nobody(
    seats: dict[str, SeatBot],
) -> None:
    job = jobs_of(seats, [61])[0]
    record = failed_record(job, ["OSError: disk full", "OSError: disk full"])
    assert record.status == "void"
    assert record.game_id == job.game_id and record.seed == job.seed
    assert record.void_reason == "failed 2 time(s) on the cluster: OSError: disk full | OSError: disk full"
    assert record.bots == [s.name for s in job.seats]
    assert [s.hash for s in record.replay.seats] == [s.manifest.content_hash for s in job.seats]
    assert all(not any(f.values()) for f in record.faults)


class _OneAtATime:
    """Jobs an executor may only iterate: no ``len()``, no indexing, and each job is made
    when it is taken (``taken``), as a schedule too long to hold hands them out."""

    def __init__(self, jobs: list[GameJob], started: list[str]) -> None:
        self.jobs, self.started, self.taken = jobs, started, 0

    def __iter__(self):  # noqa: ANN204
        for job in self.jobs:
            self.taken += 1
            yield job

    def __len__(self) -> int:
        raise AssertionError("an executor asked for the number of jobs")


def test_jobs_are_taken_one_at_a_time_as_games_start(seats: dict[str, SeatBot]) -> None:
    """The executor contract: any iterable, consumed lazily. With one game at a time and a
    stop after the first, the executor took one job, and at most one more to look at."""
    source = _OneAtATime(jobs_of(seats, [71, 72, 73, 74, 75]), [])
    got, _ = run_local(source, concurrency=1, stop_after=1)  # type: ignore[arg-type]
    assert [job.game_id for job, _ in got] == ["game-0"]
    assert source.taken <= 2


def test_the_cluster_executor_with_no_jobs_starts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty generator (everything is in the store) is seen without len(): no cluster is opened."""
    import arena.executors.cluster as cluster

    monkeypatch.setattr(cluster, "require_dask", lambda: None)
    opened: list[object] = []
    monkeypatch.setattr(cluster._Session, "run", lambda self: opened.append(self))
    executor = cluster.DaskExecutor(cluster.ClusterTarget(local_workers=1), None)  # type: ignore[arg-type]
    trio.run(executor.play, (j for j in ()), lambda job, record: None)
    assert opened == []
