"""`arena bench match`: the paired and unpaired designs from the same games, and their ratio."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.bench.match import variance_ratio
from arena.cli.app import app


def test_pairing_that_cancels_the_deal_gives_a_ratio_above_one() -> None:
    """Synthetic pairs where the deal decides most of both twins' scores (A's and B's move
    together) and B is a little better: the paired differences vary far less than those
    across deals, and the ratio says so, its resampled interval too."""
    halves = [(d, min(6, d + (1 if i % 3 else 0))) for i, d in enumerate([0, 6, 2, 4, 1, 5, 3, 6, 0, 2] * 6)]
    ratio, low, high = variance_ratio(halves, 4, draws=200, seed=1)
    assert ratio > 5 and 5 < low <= high
    assert variance_ratio(halves, 4, draws=200, seed=1) == (ratio, low, high)  # seeded: the same figures


def test_bench_match_reports_both_designs_and_the_ratio(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["bench", "match", "-p", "2", "--pairs", "4", "--scratch", str(tmp_path), "--json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["pairs"] == 4 and doc["players"] == 2 and doc["a"] == "random" and doc["b"] == "greedy"
    assert {"paired_sd", "unpaired_sd", "paired_games", "unpaired_games", "ratio", "ratio_low", "ratio_high"} <= doc.keys()
    assert list(tmp_path.iterdir()) == []  # the scratch results folder is gone


def test_bench_match_needs_a_few_pairs() -> None:
    result = CliRunner().invoke(app, ["bench", "match", "--pairs", "2"])
    assert result.exit_code != 0
    with pytest.raises(ValueError):
        variance_ratio([], 4)
