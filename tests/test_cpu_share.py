"""Every bot's CPU share (arena/bots/_cgroup.py ``BotCgroup._share_cpu``): a quota of its
``cpus`` limit and the same weight as every other bot, in a cpu cgroup of its own, so that
a bot spinning processes while the other seat is on the clock cannot take that seat's CPU
time; the ``cpus`` limit checked and capped; one warning where there is no cpu cgroup.

The timing checks read the kernel's own accounting (cpu.stat, the quota the group holds),
or compare the victim's wall time with a generous factor of its CPU time: these machines
are shared and noisy."""

from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
import trio

from arena.bots import _cgroup, open_bot
from arena.bots.manifest import ManifestError, find_bot, prepare_bot
from arena.bots.sandbox import (
    DEFAULT_CAPS,
    DEFAULT_LIMITS,
    Level,
    Limits,
    SandboxSettings,
    strict_support,
)
from arena.engine import GameConfig
from arena.referee import DEFAULT_TIME, open_pool, play_game
from arena.replay import Replay

STRICT = strict_support()
needs_strict = pytest.mark.skipif(not STRICT.ok, reason=f"strict sandbox unavailable: {STRICT.missing}")
CPU = _cgroup.support().cpu if sys.platform.startswith("linux") else None
needs_cpu_cgroup = pytest.mark.skipif(CPU is None, reason="no cpu cgroup here (the arena is not root, or not delegated)")

# Answers at once, then lets its spinners run while the other seat is asked (they stop
# when the next request arrives), as the attack does.
HOG = '''
import json, os, signal, sys
kids = []
for _ in range(int(sys.argv[1])):
    pid = os.fork()
    if pid == 0:
        os.kill(os.getpid(), signal.SIGSTOP)
        while True:
            pass
    os.waitpid(pid, os.WUNTRACED)  # stopped, before it may be continued
    kids.append(pid)
def spin(on):
    for p in kids:
        os.kill(p, signal.SIGCONT if on else signal.SIGSTOP)
def send(m):
    sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
if sys.argv[2] == "now":
    spin(True)
for line in sys.stdin:
    msg = json.loads(line); k, mid = msg["type"], msg.get("id")
    spin(False)
    if k == "hello": send({"type": "hello", "re": mid, "version": 1, "name": "hog", "bot_version": "1"})
    elif k == "game_start": send({"type": "ready", "re": mid})
    elif k == "act":
        send({"type": "action", "re": mid, **msg["legal"][0]}); spin(True)
    elif k == "game_over": send({"type": "ack", "re": mid})
    elif k == "shutdown": break
'''

# Needs VICTIM_CPU_S of CPU time per decision.
VICTIM = '''
import json, sys, time
def send(m):
    sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line); k, mid = msg["type"], msg.get("id")
    if k == "hello": send({"type": "hello", "re": mid, "version": 1, "name": "victim", "bot_version": "1"})
    elif k == "game_start": send({"type": "ready", "re": mid})
    elif k == "act":
        t = time.process_time()
        while time.process_time() - t < %(cpu)s:
            pass
        send({"type": "action", "re": mid, **msg["legal"][0]})
    elif k == "game_over": send({"type": "ack", "re": mid})
    elif k == "shutdown": break
'''

VICTIM_CPU_S = 0.15
SPINNERS = 6


def write_bot(folder: Path, name: str, source: str, args: list[str] = (), limits: str = "") -> Path:  # type: ignore[assignment]
    bot = folder / name
    bot.mkdir(parents=True)
    (bot / "bot.py").write_text(source)
    run = ", ".join(f'"{a}"' for a in ["{python}", "bot.py", *args])
    (bot / "bot.toml").write_text(f'name = "{name}"\nrun = [{run}]\n' + (f"[limits]\n{limits}\n" if limits else ""))
    return bot


def hog_bot(folder: Path, *, when: str = "turns", limits: str = "processes = 16") -> Path:
    return write_bot(folder, "hog", HOG, [str(SPINNERS), when], limits)


def victim_bot(folder: Path) -> Path:
    return write_bot(folder, "victim", VICTIM % {"cpu": VICTIM_CPU_S})


def elapsed_ms(replay: Replay, seat: int) -> list[float]:
    return [a.elapsed_ms for t in replay.turns for a in t.actions if a.seat == seat and a.elapsed_ms is not None]


# -- the limit --------------------------------------------------------------------------


def test_the_cpus_limit_is_checked_and_held_within_the_caps(tmp_path: Path) -> None:
    assert DEFAULT_LIMITS.cpus == 1 and DEFAULT_CAPS.cpus == 1
    bot = tmp_path / "b"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "b"\nrun = ["x"]\n[limits]\ncpus = 2.5\n')
    m = find_bot(bot)
    assert m.limits == replace(DEFAULT_LIMITS, cpus=2.5)
    assert m.limits.over(DEFAULT_CAPS) == ["cpus 2.5 > 1"]
    assert SandboxSettings(Level.LIMITS).for_bot(bot, m.limits).limits.cpus == 1  # the default cap
    raised = Limits.from_table({"cpus": 4}, "the run's caps on bots' limits", DEFAULT_CAPS)
    assert SandboxSettings(Level.LIMITS, raised).for_bot(bot, m.limits).limits.cpus == 2.5
    assert Limits.from_table({"cpus": 0.5}, "x").cpus == 0.5
    for bad, why in [
        ('"two"', "must be a positive number, not 'two'"),
        ("0", "must be a positive number, not 0"),
        ("-1", "must be a positive number, not -1"),
        ("true", "must be a positive number, not True"),
        ("inf", "must be a positive number, not inf"),
        ("0.001", r"must be at least 0\.01 \(of one CPU\), not 0\.001"),
    ]:
        (bot / "bot.toml").write_text(f'name = "b"\nrun = ["x"]\n[limits]\ncpus = {bad}\n')
        with pytest.raises(ManifestError, match=rf"bot\.toml: limit 'cpus' {why}"):
            find_bot(bot)


@needs_cpu_cgroup
def test_each_bot_gets_its_quota_and_the_same_weight(tmp_path: Path) -> None:
    """The group holds the quota the bot's ``cpus`` asks for (within the cap), the same
    weight for every bot, and no quota at all where ``cpus`` covers the whole machine."""
    caps = replace(DEFAULT_CAPS, cpus=1024)
    settings = SandboxSettings(Level.LIMITS, caps)
    sleeper = "import time\ntime.sleep(60)\n"
    cases = [("plain", "", 1.0), ("half", "cpus = 0.5", 0.5), ("all", "cpus = 1024", None)]
    if (os.cpu_count() or 1) < 2:
        cases[0] = ("plain", "", None)  # one CPU's worth is all of this machine
    specs = [prepare_bot(find_bot(write_bot(tmp_path, n, sleeper, limits=lim)), tmp_path / "b", settings) for n, lim, _ in cases]

    async def main() -> list[tuple[float | None, str]]:
        out = []
        for spec in specs:
            async with open_bot(spec) as bot:
                cg = bot.jail.cgroup
                assert cg is not None and cg.cpu is not None
                weight = "cpu.weight" if cg.support.cpu_v2 else "cpu.shares"
                out.append((cg.cpu_quota(), (cg.cpu / weight).read_text().strip()))
                parent = (cg.cpu.parent / weight).read_text().strip()
                assert int(parent) >= int(out[-1][1])  # the arena's folder weighs its bots together
        return out

    got = trio.run(main)
    assert [q for q, _ in got] == [q for _, _, q in cases]
    assert len({w for _, w in got}) == 1  # one weight for all


@needs_strict
@needs_cpu_cgroup
def test_a_bot_spinning_many_processes_gets_no_more_than_its_cpus(tmp_path: Path) -> None:
    """Six spinning processes get half a CPU's worth when the bot asks ``cpus = 0.5``
    at most (whatever the number of cores), as the kernel counts it over a second."""
    spec = prepare_bot(
        find_bot(hog_bot(tmp_path, when="now", limits="processes = 16\ncpus = 0.5")), tmp_path / "b", SandboxSettings()
    )

    async def main() -> float:
        async with open_bot(spec) as bot:
            cg = bot.jail.cgroup
            assert cg is not None and cg.cpu_quota() == 0.5
            await trio.sleep(0.5)  # the spinners are up
            used0, t0 = cg.cpu_seconds(), time.monotonic()
            await trio.sleep(1.0)
            used1, t1 = cg.cpu_seconds(), time.monotonic()
            assert used0 is not None and used1 is not None
            return (used1 - used0) / (t1 - t0)

    rate = trio.run(main)
    assert 0 < rate <= 0.5 * 1.3, f"the bot used {rate:.2f} CPUs' worth, over its 0.5"


@needs_strict
@needs_cpu_cgroup
def test_a_hog_does_not_take_the_clock_of_the_seat_being_asked(tmp_path: Path) -> None:
    """The repro: the hog spins while the victim is asked. The victim's decisions take a
    bounded multiple of their CPU time, never a timeout; the hog's CPU time (its
    spinners' included: charged to its game's cpu_s) stays within one CPU's worth of the
    game's wall time."""
    settings = SandboxSettings()
    specs = [prepare_bot(find_bot(b), tmp_path / "b", settings) for b in (victim_bot(tmp_path), hog_bot(tmp_path))]
    time_settings = replace(DEFAULT_TIME, turn_ms=2000, bank_ms=20000, hello_ms=10000)

    async def main():  # noqa: ANN202
        async with open_pool() as pool:
            players = [pool.player(s) for s in specs]
            return await play_game(players, GameConfig(2), seed=5, time_settings=time_settings)

    t0 = time.monotonic()
    record = trio.run(main)
    wall_ms = 1000 * (time.monotonic() - t0)
    assert record.status == "complete", record.void_reason
    assert record.replay.faults == [], [(f.seat, f.kind, f.message) for f in record.replay.faults]
    victim, hog = record.replay.usage
    assert victim.limits is not None and victim.limits["cpus"] == 1.0
    waits = elapsed_ms(record.replay, 0)
    mean = sum(waits) / len(waits)
    assert mean <= 4 * 1000 * VICTIM_CPU_S, f"the victim's decisions took {mean:.0f} ms on average"
    assert hog.cpu_ms is not None
    own = sum(elapsed_ms(record.replay, 1))
    assert hog.cpu_ms > own + 1000 * VICTIM_CPU_S  # what it ran while not asked is charged to it
    assert hog.cpu_ms <= 1.2 * wall_ms, f"the hog used {hog.cpu_ms:.0f} ms of CPU in {wall_ms:.0f} ms"


# -- where there is no cpu cgroup -------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")
def test_without_a_cpu_cgroup_bots_run_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Where the cpu controller is not delegated, each bot still runs (with its other
    groups), and the run says once that bots get no CPU share."""
    real = _cgroup.support()
    monkeypatch.setattr(
        _cgroup, "_support", replace(real, cpu=None, cpu_v2=False, problems=("the cpu controller is not delegated to /x",))
    )
    monkeypatch.setattr(_cgroup, "_warned_no_cpu", False)
    settings = SandboxSettings(Level.LIMITS)
    specs = [
        prepare_bot(find_bot(write_bot(tmp_path, n, VICTIM % {"cpu": 0.001})), tmp_path / "b", settings)
        for n in ("one", "two")
    ]

    async def main():  # noqa: ANN202
        async with open_pool() as pool:
            players = [pool.player(s) for s in specs]
            return await play_game(players, GameConfig(2), seed=1, time_settings=DEFAULT_TIME)

    with caplog.at_level(logging.WARNING, logger="arena.bots._cgroup"):
        record = trio.run(main)
    assert record.status == "complete", record.void_reason
    warnings = [r.getMessage() for r in caplog.records if "no CPU share" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert "the cpu controller is not delegated to /x" in warnings[0]
    assert "Delegate=yes" in warnings[0]
    assert all(u.cpu_ms is not None for u in record.replay.usage)  # still measured
