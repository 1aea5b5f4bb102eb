"""`arena bench search`: the search path (determinize, clone, play the round out) and its command."""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

from arena.bench.search import bench_search, decision_views, play_round_out
from arena.cli.app import app
from arena.engine import GameConfig, Variant, determinize, legal_plays

CONFIGS = [GameConfig(2), GameConfig(4), GameConfig(5), GameConfig(3, Variant.ALTERNATE), GameConfig(2, Variant.DUMMY)]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.players}p-{c.variant.value}")
def test_every_view_of_all_three_rounds_determinizes_and_plays_its_round_out(config: GameConfig) -> None:
    views = decision_views(config, 2, seed=3)
    assert {view.round for view, _ in views} == {1, 2, 3}
    rng = random.Random(1)
    for view, unseen in views:
        state = determinize(view, rng, unseen=unseen)
        assert [list(p) for p in legal_plays(state, view.seat)] == view.legal
        twin = state.clone()
        decisions = play_round_out(twin, rng)
        assert decisions >= 1  # at least this seat's own decision
        assert twin.over or twin.round == view.round + 1
        assert (state.round, state.turn) == (view.round, view.turn)  # the clone played, not the sample


def test_bench_search_reports_positive_rates() -> None:
    r = bench_search(4, seconds=0.2)
    assert r.samples > 0 and r.cpu_seconds > 0
    assert r.determinizations_per_s > r.samples_per_s > 0 and r.playouts_per_s > r.samples_per_s
    assert 0 < r.determinize_share < 1


def test_bench_search_command_json_and_dummy_check() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["bench", "search", "-p", "4", "-p", "2", "-s", "0.2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["benchmark"] == "search" and report["players"] == 4
    assert set(report["per_players"]) == {"2", "4"}
    assert report["playouts_per_s"] > 0 and report["determinizations_per_s"] > 0
    result = runner.invoke(app, ["bench", "search", "--variant", "dummy", "-p", "3", "-s", "0.1"])
    assert result.exit_code != 0
