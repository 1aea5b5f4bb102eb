"""`arena bench tournament` runs its configurations and reports consistent figures
(no timing assertions: speed is the benchmark's business, not the tests')."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from arena.bench.tournament import CONFIGS, GAMES_PER_DEAL, bench_tournament, make_instant_bots
from arena.store.opening import open_store
from arena.tournament.runner import run_tournament
from arena.tournament.settings import RunSettings

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="the instant bots are compiled with cc")


def test_bench_tournament_reports_every_configuration(tmp_path: Path) -> None:
    r = bench_tournament(games=60, rounds=1, scratch=tmp_path, long_deals=2)
    assert r.games == GAMES_PER_DEAL and r.rounds == 1
    assert r.scratch == str(tmp_path) and list(tmp_path.iterdir()) == []  # its scratch folder is gone
    assert r.file_create_us > 0
    assert min(r.games_per_s, r.games_per_s_jobs1, r.games_per_s_unrecorded) > 0
    assert r.scaling == pytest.approx(r.games_per_s / r.games_per_s_jobs1)
    assert r.store_share == pytest.approx(1 - r.games_per_s / r.games_per_s_unrecorded)
    assert r.store_ms_per_game > 0 and 0 < r.store_cpu_share < 1
    assert r.arena_cpu_ms_per_game > r.store_ms_per_game
    # The referee processes' CPU is counted with 2 jobs: the games' own cost is in both.
    assert r.arena_cpu_ms_per_game_jobs1 > 0 and r.arena_cpu_ms_per_game > r.store_ms_per_game + 0.5
    # Per process: the run's own, the referee process and the writer add up to the arena's
    # CPU; with 2 jobs the games are played in the referee processes.
    assert r.main_cpu_ms_per_game + r.referee_cpu_ms_per_game + r.store_ms_per_game == pytest.approx(r.arena_cpu_ms_per_game)
    assert r.main_cpu_ms_per_game_jobs1 + r.store_ms_per_game_jobs1 == pytest.approx(r.arena_cpu_ms_per_game_jobs1)
    assert r.referee_cpu_ms_per_game > 0 and r.main_cpu_ms_per_game > 0 and r.store_ms_per_game_jobs1 > 0
    assert r.bots_cpu_ms_per_game_jobs1 is None or r.bots_cpu_ms_per_game_jobs1 >= 0
    assert r.bot_start_ms > 0  # a bot process started to its hello and ended, in CPU
    # Both process modes, short and long runs, each with both job counts: every recorded
    # configuration is reported, and the scalings are its games/s ratios.
    assert set(r.modes) == set(CONFIGS) - {"unrecorded"}
    for key, (jobs, _record, trusted, long) in CONFIGS.items():
        if key == "unrecorded":
            continue
        m = r.modes[key]
        assert (m["jobs"], m["trusted_reuse"], m["deals"]) == (jobs, trusted, 2 if long else 1)
        assert m["games"] == m["deals"] * GAMES_PER_DEAL and m["games_per_s"] > 0 and m["arena_cpu_ms_per_game"] > 0
    assert r.modes["jobs2"]["games_per_s"] == r.games_per_s
    for scaling, prefix in ((r.scaling_trusted, "trusted_"), (r.scaling_long, "long_"), (r.scaling_long_trusted, "long_trusted_")):
        assert scaling == pytest.approx(r.modes[f"{prefix}jobs2"]["games_per_s"] / r.modes[f"{prefix}jobs1"]["games_per_s"])
    assert r.long_deals == 2
    assert list(r.cpu_scaling) == ["short", "trusted", "long", "long_trusted"]
    assert all(v is None or v > 0 for v in r.cpu_scaling.values())


def test_an_unrecorded_run_plays_every_game_and_stores_none(tmp_path: Path) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    bots = make_instant_bots(folder, 4)
    summary = run_tournament(RunSettings(bots_dir=bots, results=tmp_path / "res", players=4, record=False))
    assert summary.played == 4 and summary.void == 0
    with open_store(tmp_path / "res", create=False) as store:
        assert store.games() == []
