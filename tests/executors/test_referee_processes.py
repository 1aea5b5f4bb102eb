"""The local executor with more than one job: each job in a referee process of its own
(arena.executors.referees). What one process guarantees holds across them: each job is
reported once, with its own game, the same game as played in one process (determinism);
a bot's fault is reported as before; a referee process killed mid-run has its game
reported void (never lost, never twice) and leaves no process behind; a hurried stop
ends every referee process and bot. Real bot processes (tests/data/bots/testbot.py)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path

import msgspec
import pytest
import trio

from arena.bots.manifest import find_bot

from arena.bots.prepare import prepare_bot
from arena.engine import GameConfig, Variant
from arena.executors.jobs import GameJob, SeatBot
from arena.executors.local import AHEAD, LocalExecutor, open_local_executor
from arena.game.players import TimeSettings
from arena.game.record import GameRecord
from arena.game.replay import encode_replay

DATA = Path(__file__).resolve().parents[1] / "data" / "bots"
CONFIG = GameConfig(2, Variant.STANDARD)
TIME = TimeSettings(hello_ms=20_000, turn_ms=5_000, bank_ms=10_000)


def make_bot(folder: Path, name: str, *mode: str) -> Path:
    folder.mkdir(parents=True)
    shutil.copy(DATA / "testbot.py", folder / "testbot.py")
    argv = ", ".join(f'"{a}"' for a in ("{python}", "testbot.py", "--name", name, *mode))
    (folder / "bot.toml").write_text(f'name = "{name}"\nversion = "1"\nrun = [{argv}]\n', encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("referees")


@pytest.fixture(scope="module")
def seats(where: Path) -> dict[str, SeatBot]:
    out = {}
    for name, mode in (("plain", ("--mode", "ok")), ("cheat", ("--mode", "illegal", "--at", "2.3"))):
        manifest = find_bot(make_bot(where / "bots" / name, name, *mode))
        out[name] = SeatBot(prepare_bot(manifest, where / "build"), manifest)
    return out


def jobs_of(seats: dict[str, SeatBot], deals: list[int]) -> list[GameJob]:
    a, b = seats["plain"], seats["cheat"]
    return [GameJob(f"game-{i}", (a, b) if i % 2 == 0 else (b, a), seed, CONFIG, TIME) for i, seed in enumerate(deals)]


def play(jobs: list[GameJob], concurrency: int, on_each=None) -> list[tuple[GameJob, GameRecord]]:  # type: ignore[no-untyped-def]
    got: list[tuple[GameJob, GameRecord]] = []

    async def main() -> None:
        async with open_local_executor(processes_per_bot=2, jobs=concurrency) as local:
            with trio.CancelScope() as scope:

                def finished(job: GameJob, record: GameRecord) -> None:
                    got.append((job, record))
                    if on_each is not None:
                        on_each(local, scope, len(got))

                await local.play(iter(jobs), finished, concurrency=concurrency)

    trio.run(main)
    return got


def processes_under(folder: Path) -> list[int]:
    """Processes whose working directory or command line is inside ``folder`` (the bots'
    run copies are there): what a run left behind."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().decode(errors="replace")
        except OSError:
            continue
        if cwd.startswith(str(folder)) or str(folder) in cmdline:
            found.append(int(entry))
    return found


def referee_pids() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and b"arena.executors.referee_process" in cmdline:
            found.append(int(entry))
    return found


def outcome(record: GameRecord) -> tuple[object, ...]:
    plays = [(t.round, t.turn, a.seat, a.status, tuple(a.cards)) for t in record.replay.turns for a in t.actions]
    return record.status, record.scores, record.ranks, record.faults, plays


def replay_bytes(record: GameRecord) -> bytes:
    """The record's replay file (its JSON), with what measures time left out: each reply's
    elapsed ms and the bank left after it, the game's timing, and the bots' CPU and memory."""
    replay = msgspec.structs.replace(
        record.replay,
        turns=[
            msgspec.structs.replace(t, actions=[msgspec.structs.replace(a, elapsed_ms=None, bank_ms=None) for a in t.actions])
            for t in record.replay.turns
        ],
        timing={},
        usage=[],
    )
    return encode_replay(replay)


def test_two_referee_processes_play_each_job_once_and_the_same_games_as_one_process(
    seats: dict[str, SeatBot], where: Path
) -> None:
    jobs = jobs_of(seats, [101, 102, 103, 104, 105, 106])
    first = play(jobs, 1)
    alone = {job.game_id: outcome(record) for job, record in first}
    files = {job.game_id: replay_bytes(record) for job, record in first}
    got = play(jobs, 2)
    assert sorted(job.game_id for job, _ in got) == sorted(j.game_id for j in jobs)
    for job, record in got:
        assert record.game_id == job.game_id and record.seed == job.seed
        assert record.bots == [s.name for s in job.seats]
        assert outcome(record) == alone[job.game_id]  # same seed and bots, same game
        # ... and the same replay, byte for byte, but for what the clock measured.
        assert replay_bytes(record) == files[job.game_id]
    assert not processes_under(where / "build")


def test_a_bot_fault_inside_a_referee_process_is_reported_as_in_one_process(seats: dict[str, SeatBot]) -> None:
    # The cheat names a card in no hand at round 2, turn 3 of every game: an illegal play,
    # one strike, the seeded fallback applied.
    for job, record in play(jobs_of(seats, [201, 202]), 2):
        cheat = [s.name for s in job.seats].index("cheat")
        assert record.status == "complete"
        assert record.faults[cheat]["illegal"] == 1
        assert sum(record.faults[1 - cheat].values()) == 0
        (fault,) = [f for f in record.replay.faults if f.seat == cheat]
        assert (fault.kind, fault.round, fault.turn) == ("illegal", 2, 3)
        assert "999" in fault.message


def test_a_killed_referee_process_voids_its_game_and_the_others_play_on(seats: dict[str, SeatBot], where: Path) -> None:
    jobs = jobs_of(seats, list(range(301, 311)))
    killed: list[int] = []

    def kill_them(local: LocalExecutor, scope: trio.CancelScope, n: int) -> None:
        if n == 1:  # every referee process now running, the one that just reported included
            for referee in local._running:
                os.kill(referee.pid, signal.SIGKILL)
                killed.append(referee.pid)

    got = play(jobs, 2, kill_them)
    assert killed
    ids = [job.game_id for job, _ in got]
    assert sorted(ids) == sorted(j.game_id for j in jobs)  # each job once: none lost, none twice
    void = [record for _, record in got if record.status == "void"]
    # Each killed process voids the game it was playing and the one already sent to it.
    assert 1 <= len(void) <= AHEAD * len(killed)
    for record in void:
        assert "was killed by SIGKILL" in record.void_reason
        assert all(not any(f.values()) for f in record.faults)  # nobody is blamed
        assert record.replay.status == "void"
    assert all(r.status == "complete" for _, r in got if r not in void)
    assert not processes_under(where / "build")  # the killed ones' bots died with them
    assert not referee_pids()


def test_a_hurried_stop_ends_every_referee_process_and_bot(seats: dict[str, SeatBot], where: Path) -> None:
    def stop(local: LocalExecutor, scope: trio.CancelScope, n: int) -> None:
        local.hurry()
        scope.cancel()

    got = play(jobs_of(seats, list(range(401, 409))), 2, stop)
    assert len(got) == 1  # nothing is reported after the stop
    assert not processes_under(where / "build")
    assert not referee_pids()


def test_a_referee_process_that_cannot_start_stops_the_run_with_a_clear_error(
    seats: dict[str, SeatBot], monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.errors import ArenaError

    monkeypatch.setattr(sys, "executable", "/bin/false")  # every referee process exits at once
    with pytest.raises(ArenaError, match="referee processes in a row ended before finishing a game"):
        play(jobs_of(seats, list(range(501, 506))), 2)
