"""`arena bench sandbox`: what each sandbox level costs to start a bot, and per decision.

For each level (no sandbox at all, ``none``, ``limits``, ``strict`` where available) the
instant C bot of the referee benchmark (:data:`arena.bench.referee.INSTANT_C`) is started
and greeted (``hello``) again and again, and the median time from the spawn to the hello
reply is taken; then four of them play whole games, for the cost of a decision cycle
once the bots run. The levels are measured interleaved, round after round, so that a busy
machine sways them alike.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import trio

from arena.bench.referee import compile_instant_bot
from arena.bots import BotSpec
from arena.bots.sandbox import Level, SandboxSettings
from arena.bots.strict import strict_support
from arena.engine import HAND_SIZE, GameConfig
from arena.game.players import DEFAULT_TIME, open_pool
from arena.game.referee import play_game

LEVELS = ("unconfined", "none", "limits", "strict")
_CYCLES_PER_GAME = 3 * (HAND_SIZE[4] - 1)  # decision cycles of a 4-player game (each round's last card is auto)


@dataclass(frozen=True, slots=True)
class LevelCost:
    level: str
    start_ms: float  # median, spawn to the hello reply
    start_min_ms: float
    cycle_us: float  # per 4-seat decision cycle, whole games

    def to_dict(self) -> dict[str, object]:
        return {
            "level": self.level, "start_ms": round(self.start_ms, 2), "start_min_ms": round(self.start_min_ms, 2),
            "cycle_us": round(self.cycle_us, 1),
        }


def bench_sandbox(starts: int = 20, games: int = 20) -> tuple[list[LevelCost], str | None]:
    """The cost of each level; and why ``strict`` was left out, if it was."""
    support = strict_support()
    levels = [lv for lv in LEVELS if lv != "strict" or support.ok]
    with tempfile.TemporaryDirectory(prefix="arena-bench-sandbox-") as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)  # a strict bot runs as a user of its own, who must be able to enter it
        exe = compile_instant_bot(folder)
        base = BotSpec(name="instant", argv=(str(exe),), cwd=folder)
        specs = {
            lv: base if lv == "unconfined" else replace(base, sandbox=SandboxSettings(Level(lv)).for_bot(folder))
            for lv in levels
        }
        costs = trio.run(_measure, specs, starts, games)
    return costs, None if support.ok else support.missing


async def _measure(specs: dict[str, BotSpec], starts: int, games: int) -> list[LevelCost]:
    times: dict[str, list[float]] = {lv: [] for lv in specs}
    async with open_pool() as pool:
        for _ in range(starts):
            for lv, spec in specs.items():
                player = pool.player(spec)
                t = time.perf_counter()
                await player.start(DEFAULT_TIME)
                times[lv].append(1000 * (time.perf_counter() - t))
                await player.close()
        cycle: dict[str, float] = {}
        for lv, spec in specs.items():
            players = [pool.player(replace(spec, name=f"instant{i}")) for i in range(4)]
            await play_game(players, GameConfig(4), seed=0)  # started and warm
            t = time.perf_counter()
            for seed in range(1, games + 1):
                await play_game(players, GameConfig(4), seed=seed)
            cycle[lv] = 1e6 * (time.perf_counter() - t) / (games * _CYCLES_PER_GAME)
            for p in players:
                await p.shutdown()
    return [LevelCost(lv, statistics.median(times[lv]), min(times[lv]), cycle[lv]) for lv in specs]
