"""`arena bench env`: figures measured in one run, in CPU time, as ratios (no speed is asserted)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from arena.bench.env import bench_env
from arena.cli.app import app


def test_bench_env_measures_the_environment_beside_the_engine() -> None:
    r = bench_env(players=3, seconds=0.2, variant="alternate")
    assert r.env_decisions > 0 and r.engine_decisions > 0
    assert abs(r.cost - r.env_us_per_decision / r.engine_us_per_decision) < 0.05 * r.cost
    assert r.observe_us_per_decision > 0


def test_arena_bench_env_prints_json_for_scripts() -> None:
    result = CliRunner().invoke(app, ["bench", "env", "--players", "2", "--variant", "dummy", "--seconds", "0.2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["benchmark"] == "env" and data["players"] == 2 and data["cost"] > 0
