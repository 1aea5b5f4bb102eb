"""Bots that attack the referee's clock, as real processes (tests/data/hostile_bots/hostile.py),
under the strict sandbox where the referee runs them.

- A stale flood: stdout (enlarged to 1 MiB) kept full of valid but stale replies, the
  real answer sent only after every other seat's deadline. The referee must stay
  responsive (deadlines, signals, the other seats), count the flood as a ``protocol``
  fault, never take the late answer as ``ok``, and charge the opponent nothing.
- Hidden time: stdin shrunk to one page and read with tee(2), so that the next request
  does not fit and the referee's write waits while the bot thinks. The time the request
  waits in the pipe is the bot's: it is charged, and past the deadline it is a timeout.

Plus the group's bounds themselves, on plain processes: a reply read after its deadline
is late whatever it says, a flood of stale lines ends the request at once, and an
endless line never keeps the task from the scheduler.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import proc_helpers
import pytest
import trio
from proc_helpers import needs_strict

from arena.bots import (
    MAX_STALE_LINES,
    BotGroup,
    BotSpec,
    BotTimeout,
    LineTooLong,
    Question,
    StaleFlood,
    open_bot,
)
from arena.bots.manifest import find_bot
from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import Level, SandboxSettings
from arena.engine import GameConfig
from arena.game.players import TimeSettings, open_pool
from arena.game.referee import play_game
from arena.game.record import GameRecord

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).resolve().parents[1] / "data" / "hostile_bots" / "hostile.py"
GREEDY = ROOT / "example_bots" / "greedy"
PROCBOTS = Path(__file__).resolve().parents[1] / "data" / "procbots"


STALE = b'{"type":"ack","re":0}'


def make_hostile(folder: Path, name: str, behaviour: str, trigger: int, *args: str) -> Path:
    bot = folder / name
    bot.mkdir(parents=True)
    shutil.copy(HOSTILE, bot / "bot.py")
    run = ["{python}", "bot.py", behaviour, str(trigger), *args]
    (bot / "bot.toml").write_text(f'name = "{name}"\nversion = "1"\nrun = {json.dumps(run)}\n')
    return bot


def strict_spec(folder: Path, build: Path) -> BotSpec:
    return prepare_bot(find_bot(folder), build, SandboxSettings(Level.STRICT))


def play(tmp_path: Path, bots: list[Path], ts: TimeSettings, seed: int = 3) -> GameRecord:
    specs = [strict_spec(b, tmp_path / "build") for b in bots]

    async def main() -> GameRecord:
        async with open_pool() as pool:
            return await play_game([pool.player(s) for s in specs], GameConfig(2), seed, time_settings=ts)

    record = trio.run(main)
    assert record.status == "complete", record.void_reason
    return record


def actions_of(record: GameRecord, seat: int) -> list:
    return [a for t in record.replay.turns for a in t.actions if a.seat == seat]


def faults_of(record: GameRecord, seat: int) -> list:
    return [f for f in record.replay.faults if f.seat == seat]


def copy_greedy(folder: Path) -> Path:
    return Path(shutil.copytree(GREEDY, folder / "greedy", ignore=shutil.ignore_patterns("__pycache__")))


# -- the stale flood -----------------------------------------------------------------------


@needs_strict
def test_a_stale_flood_is_a_protocol_fault_and_the_opponent_is_not_charged(tmp_path: Path) -> None:
    """The flooder's late answers never count: every act it is asked ends in a protocol
    fault at once (three strikes, then autopilot), and the greedy opponent answers in
    its usual few milliseconds, with its bank untouched, in a game that takes about a
    second instead of minutes."""
    bots = tmp_path / "bots"
    flood = make_hostile(bots, "flood", "stale_flood", 1)
    greedy = copy_greedy(bots)
    ts = TimeSettings(hello_ms=10_000, turn_ms=400, bank_ms=400)
    started = time.monotonic()
    record = play(tmp_path, [flood, greedy], ts)
    took = time.monotonic() - started

    faults = faults_of(record, 0)
    kinds = [f.kind for f in faults]
    assert kinds == ["protocol", "protocol", "protocol", "autopilot"], faults
    assert (faults[0].round, faults[0].turn) == (1, 1)
    assert "stale replies" in faults[0].message and f"more than the {MAX_STALE_LINES} lines" in faults[0].message
    assert record.replay.result.autopilot[0]
    deadline_ms = ts.turn_ms + ts.bank_ms
    for action in actions_of(record, 0):
        # Never the late answer taken as ok; a fault was decided well before any deadline.
        assert action.status in ("protocol", "autopilot", "auto"), action
        assert action.elapsed_ms is None or action.elapsed_ms < deadline_ms, action

    assert faults_of(record, 1) == []
    greedy_ms = [a.elapsed_ms for a in actions_of(record, 1) if a.status == "ok"]
    assert len(greedy_ms) == 27
    assert max(greedy_ms) < ts.turn_ms, greedy_ms  # never charged the flooder's stall
    assert all(a.bank_ms == ts.bank_ms for a in actions_of(record, 1) if a.status == "ok")
    # The flooder would hold every act past 0.7 s: 27 of them would take 20 s.
    assert took < 15, f"the game took {took:.1f} s"
    print(f"flood game: {took:.2f} s, greedy max {max(greedy_ms):.1f} ms")


@needs_strict
def test_a_flood_at_hello_keeps_the_bot_out_with_the_reason(tmp_path: Path) -> None:
    """The handshake reads through the same bound: a flood before the hello reply is a
    protocol fault at once, and the bot cannot start."""
    spec = strict_spec(make_hostile(tmp_path / "bots", "flood", "stale_flood", 0, "60"), tmp_path / "build")

    async def main() -> str:
        async with open_pool() as pool:
            player = pool.player(spec)
            with pytest.raises(Exception) as info:  # noqa: PT011 - BotFault, checked below
                with trio.fail_after(8):
                    await player.start(TimeSettings(hello_ms=5_000))
            return f"{type(info.value).__name__}: {getattr(info.value, 'kind', '')}: {info.value}"

    started = time.monotonic()
    text = trio.run(main)
    assert text.startswith("BotFault: protocol:") and "hello:" in text and "stale replies" in text, text
    assert time.monotonic() - started < 5


@needs_strict
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_a_stale_flood_ends_the_run_at_once(tmp_path: Path, signum: signal.Signals) -> None:
    """Ctrl-C (or SIGTERM) to `arena run` while a bot floods its stdout (and the game
    waits on a hung opponent with a minute to go): the arena exits 130 within seconds and
    no bot process is left."""
    bots = tmp_path / "bots"
    make_hostile(bots, "flood", "stale_flood", 1)
    make_hostile(bots, "sleepy", "hang", 2)
    argv = [
        sys.executable, "-m", "arena", "run", "--bots", str(bots), "--results", str(tmp_path / "results"),
        "--players", "2", "--games", "2", "--turn-ms", "60000", "--bank-ms", "0", "--no-report",
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        deadline = time.monotonic() + 30
        while len(proc_helpers.processes_in(tmp_path / "results" / "build")) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(proc_helpers.processes_in(tmp_path / "results" / "build")) >= 2, "the bots never started"
        time.sleep(1.0)  # the flood is on, the game waits on the hung bot
        assert proc.poll() is None
        sent = time.monotonic()
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=15)
        exited_s = time.monotonic() - sent
        while proc_helpers.processes_in(tmp_path / "results" / "build") and time.monotonic() < sent + 10:
            time.sleep(0.02)
        left = proc_helpers.processes_in(tmp_path / "results" / "build")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = " ".join(err.decode(errors="replace").split())
    assert proc.returncode == 130, text[-2000:]
    assert "interrupted" in text
    assert exited_s < 5, f"the arena exited {exited_s:.1f} s after {signum.name}"
    assert left == {}
    print(f"{signum.name} during a flood: exited after {exited_s * 1000:.0f} ms")


# -- hidden time ---------------------------------------------------------------------------


@needs_strict
def test_a_request_held_out_of_a_full_stdin_is_charged_to_the_bot(tmp_path: Path) -> None:
    """The tee bot keeps its next request out of its stdin for 0.4 s: that request's
    elapsed time includes those 0.4 s (its clock ran from the first byte the referee
    tried to write), and its bank pays for them."""
    bots = tmp_path / "bots"
    tee = make_hostile(bots, "tee", "tee_hold", 0, "0.4", "1")
    greedy = copy_greedy(bots)
    ts = TimeSettings(hello_ms=10_000, turn_ms=100, bank_ms=2_000)
    record = play(tmp_path, [tee, greedy], ts)
    assert "REPORT held_s=" in record.replay.stderr[0], record.replay.stderr[0][-500:]
    held_s = float(record.replay.stderr[0].split("REPORT held_s=")[1].split()[0])
    assert held_s >= 0.4
    mine = actions_of(record, 0)
    slowest = max((a for a in mine if a.status == "ok"), key=lambda a: a.elapsed_ms)
    assert slowest.elapsed_ms >= 300, [a.elapsed_ms for a in mine]  # the ~0.4 s held out, counted
    assert slowest.bank_ms <= ts.bank_ms - (slowest.elapsed_ms - ts.turn_ms) + 1
    assert faults_of(record, 0) == [] and faults_of(record, 1) == []


@needs_strict
def test_time_held_out_of_stdin_plus_thinking_past_the_deadline_is_a_timeout(tmp_path: Path) -> None:
    """Held out 0.35 s, then 0.25 s of thinking once the request is in: each alone fits
    the 0.5 s deadline, both together do not. The request's clock ran from the referee's
    first attempt to write it, so the answer is late: a timeout (three of them, then
    autopilot), never an ok answer with only the thinking counted."""
    bots = tmp_path / "bots"
    tee = make_hostile(bots, "tee", "tee_hold", 0, "0.35", "3", "0.25")
    greedy = copy_greedy(bots)
    ts = TimeSettings(hello_ms=10_000, turn_ms=200, bank_ms=300)
    record = play(tmp_path, [tee, greedy], ts)
    assert "REPORT held_s=" in record.replay.stderr[0], record.replay.stderr[0][-500:]
    faults = faults_of(record, 0)
    assert faults and faults[0].kind == "timeout" and "no reply before the deadline" in faults[0].message, faults
    deadline_ms = ts.turn_ms + ts.bank_ms
    for action in actions_of(record, 0):
        assert action.status != "ok" or action.elapsed_ms < deadline_ms, action
        # The thinking alone (0.25 s) is never what was measured for an answer taken as ok.
        assert action.status != "ok" or action.elapsed_ms < 200, action
    assert faults_of(record, 1) == []


@needs_strict
def test_a_request_that_cannot_be_written_by_its_deadline_is_a_timeout(tmp_path: Path) -> None:
    """Held out for 1.5 s against a 0.5 s deadline: the write cannot complete in time,
    which is a timeout for the tee bot (whose process, which does not read its input,
    is then done for: autopilot), and the game goes on at once."""
    bots = tmp_path / "bots"
    tee = make_hostile(bots, "tee", "tee_hold", 0, "1.5", "3")
    greedy = copy_greedy(bots)
    ts = TimeSettings(hello_ms=10_000, turn_ms=200, bank_ms=300)
    started = time.monotonic()
    record = play(tmp_path, [tee, greedy], ts)
    took = time.monotonic() - started
    faults = faults_of(record, 0)
    assert faults and faults[0].kind == "timeout" and "did not read its input in time" in faults[0].message, faults
    assert record.replay.result.autopilot[0]
    deadline_ms = ts.turn_ms + ts.bank_ms
    for action in actions_of(record, 0):
        assert action.status != "ok" or action.elapsed_ms < deadline_ms, action
    assert faults_of(record, 1) == []
    assert took < 3 * 1.5, f"the game took {took:.1f} s: the hold was not cut short"


# -- the group's bounds, on plain processes ------------------------------------------------


FLOODER = """
import fcntl, os, sys
fcntl.fcntl(1, 1031, 1 << 20)  # F_SETPIPE_SZ
sys.stdin.readline()
chunk = {stale!r} * 3000
while True:
    os.write(1, chunk)
"""


def flooder(tmp_path: Path) -> BotSpec:
    script = tmp_path / "flooder.py"
    script.write_text(textwrap.dedent(FLOODER.format(stale=STALE + b"\n")))
    return BotSpec(name="flooder", argv=(sys.executable, str(script)), cwd=tmp_path)


def scripted(name: str) -> BotSpec:
    return BotSpec(name=name, argv=(sys.executable, str(PROCBOTS / "scripted.py")), cwd=PROCBOTS)


def test_a_flood_ends_its_request_at_once_and_the_other_bot_is_timed_alone(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_bot(flooder(tmp_path)) as flood, open_bot(scripted("quick")) as quick:
            with BotGroup() as group:
                started = trio.current_time()
                a, b = await group.exchange(
                    [Question(flood, b"go\n", 5.0), Question(quick, b"sleep 0.05\n", 5.0)],
                    lambda i, line: None if line == STALE else line,
                )
                assert isinstance(a, StaleFlood) and a.lines == MAX_STALE_LINES + 1, a
                assert b.value == b"late" and 0.05 <= b.elapsed_s < 0.5, b
                assert trio.current_time() - started < 1
                # The flood goes on: the next request to it fails the same way, at once.
                (again,) = await group.exchange([Question(flood, b"more\n", 5.0)], lambda i, line: None)
                assert isinstance(again, StaleFlood)
            await flood.aclose(grace=0.05, term_grace=0.05)

    trio.run(main)


def test_a_reply_read_after_its_deadline_is_late_even_if_it_was_waiting(tmp_path: Path) -> None:
    """Lines already buffered when a request is written with no time to spare: taking
    one as the reply would be an answer after the deadline, so it is a timeout."""

    async def main() -> None:
        async with open_bot(scripted("buffered")) as bot:
            with BotGroup() as group:
                (first,) = await group.exchange([Question(bot, b"multi\n", 5.0)], lambda i, line: line)
                assert first.value == b"one"  # "two" and "three" stay buffered
                (late,) = await group.exchange([Question(bot, b"echo x\n", 0.0)], lambda i, line: line)
                assert isinstance(late, BotTimeout) and late.timeout_s == 0.0
                (on_time,) = await group.exchange([Question(bot, b"echo y\n", 5.0)], lambda i, line: line)
                assert on_time.value == b"three" and on_time.elapsed_s < 5.0

    trio.run(main)


def test_an_endless_line_never_holds_the_task_from_the_scheduler() -> None:
    """`cat /dev/zero` writes one line without end, faster than it is read: every request
    to it is refused (the line is too long) within a bounded amount of reading, and a
    ticker task keeps its pace all along."""
    spec = BotSpec(name="zeros", argv=("cat", "/dev/zero"), cwd=PROCBOTS)
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(trio.current_time())
            await trio.sleep(0.005)

    async def main() -> list[object]:
        results = []
        async with open_bot(spec) as bot, trio.open_nursery() as nursery:
            nursery.start_soon(ticker)
            with BotGroup() as group:
                stop = trio.current_time() + 0.5
                while trio.current_time() < stop:
                    (answer,) = await group.exchange([Question(bot, b"", 0.3)], lambda i, line: line)
                    results.append(answer)
            nursery.cancel_scope.cancel()
        return results

    results = trio.run(main)
    assert results and all(isinstance(r, (LineTooLong, BotTimeout)) for r in results), results
    assert any(isinstance(r, LineTooLong) and "still going" in str(r) for r in results)
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert len(ticks) > 20 and max(gaps) < 0.2, f"{len(ticks)} ticks, longest gap {max(gaps):.3f} s"

