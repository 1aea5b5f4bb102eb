"""A small real tournament for the report's tests: four bots at three-seat tables, one of
them answering an illegal card at round 1 turn 2 of every game (a fault per game)."""

from __future__ import annotations

import shutil
from pathlib import Path

from arena.game.players import TimeSettings
from arena.tournament.runner import run_tournament
from arena.tournament.settings import RunSettings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
TESTBOT = ROOT / "tests" / "data" / "bots" / "testbot.py"


def make_tournament(folder: Path) -> Path:
    """Play the tournament into ``folder / "results"`` and return that results folder:
    greedy (sends debug values), random, minimal and "faulty" (testbot --mode illegal),
    3 players, every table under its 3 rotations: 12 games."""
    bots = folder / "bots"
    for name in ("greedy", "random", "minimal"):
        shutil.copytree(EXAMPLES / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    faulty = bots / "faulty"
    faulty.mkdir()
    shutil.copy2(TESTBOT, faulty / "testbot.py")
    (faulty / "bot.toml").write_text(
        'name = "faulty"\nversion = "2"\nrun = ["{python}", "testbot.py", "--mode", "illegal", "--at", "1.2"]\n',
        encoding="utf-8",
    )
    results = folder / "results"
    summary = run_tournament(
        RunSettings(bots_dir=bots, results=results, players=3, deals=1, jobs=2,
                    time=TimeSettings(hello_ms=30_000, turn_ms=5_000, bank_ms=30_000))
    )
    assert summary.played == 12 and summary.void == 0, summary
    return results
