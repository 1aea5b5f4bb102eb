"""`arena bench sandbox`: the start-up and per-decision cost of each sandbox level."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from arena.bots.strict import strict_support
from arena.cli.app import app


@pytest.mark.skipif(shutil.which("cc") is None, reason="the bench compiles a tiny C bot with cc")
def test_bench_sandbox_measures_every_available_level() -> None:
    result = CliRunner().invoke(app, ["bench", "sandbox", "--starts", "2", "--games", "1", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    levels = [lv["level"] for lv in doc["levels"]]
    expected = ["unconfined", "none", "limits"] + (["strict"] if strict_support().ok else [])
    assert levels == expected
    assert all(lv["start_ms"] > 0 and lv["start_min_ms"] <= lv["start_ms"] and lv["cycle_us"] > 0 for lv in doc["levels"])
    assert (doc["strict_missing"] is None) == strict_support().ok
