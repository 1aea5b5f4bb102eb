"""`arena bench referee`: four instant C bots through the referee vs raw pipes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.app import app

runner = CliRunner()


def _children_named(name: str) -> list[int]:
    """Pids of this process's children (zombies included) whose command name is ``name``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if comm == name and ppid == os.getpid():
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler (cc)")
def test_bench_referee_json_reports_positive_numbers() -> None:
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    result = runner.invoke(app, ["bench", "referee", "--seconds", "0.5", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for key in ("overhead_ratio", "raw_us_per_cycle", "referee_us_per_cycle", "games_per_s"):
        value = report[key]
        assert isinstance(value, int | float) and not isinstance(value, bool), (key, value)
        assert value > 0, (key, value)
    assert report["cycles"] == 21 * report["games"]  # 4 players: 3 rounds of 7 decisions
    assert _children_named("instant") == [], "a bot process outlived the bench"
    if cpus is not None:
        assert os.sched_getaffinity(0) == cpus, "the bench did not give back the CPUs it pinned"
