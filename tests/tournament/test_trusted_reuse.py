"""`arena run --trusted-reuse`: an opt-in that keeps each bot's process through every game
it is dealt (the games of one duplicate deal included); the same games, the same table,
fewer process starts, and never the default."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from arena.cli.app import app
from arena.store.opening import open_store
from arena.tournament.settings import RunSettings, load_config, settings_from

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"


def make_bots(folder: Path) -> Path:
    for name in ("random", "greedy", "minimal"):
        shutil.copytree(EXAMPLES / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def run_cli(*args: str) -> dict:
    result = CliRunner().invoke(app, ["run", *args, "--json", "--no-report"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def points(results: Path) -> dict[str, list[int]]:
    with open_store(results, create=False) as store:
        return {g.id: [s.points for s in g.seats] for g in store.games()}


def test_trusted_reuse_plays_the_same_games_to_the_same_table(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots")
    args = ["--bots", str(bots), "--players", "2", "--deals", "2", "--sandbox", "limits"]
    fair = run_cli(*args, "--results", str(tmp_path / "fair"), "--jobs", "2")
    with open_store(tmp_path / "fair") as a, open_store(tmp_path / "trusted") as b:
        b.import_deal_key(a.deal_key().hex())  # the same deals
    trusted = run_cli(*args, "--results", str(tmp_path / "trusted"), "--jobs", "2", "--trusted-reuse")
    assert trusted["run"]["played"] == fair["run"]["played"] == 12
    assert points(tmp_path / "trusted") == points(tmp_path / "fair")
    assert [(r["bot"], r["elo"], r["games"]) for r in trusted["rows"]] == [(r["bot"], r["elo"], r["games"]) for r in fair["rows"]]


def test_trusted_reuse_is_off_by_default_and_read_from_a_config_file(tmp_path: Path) -> None:
    assert RunSettings(bots_dir=tmp_path).trusted_reuse is False
    cfg = tmp_path / "league.toml"
    cfg.write_text('bots = "bots"\ntrusted_reuse = true\n')
    loaded = load_config(cfg)
    assert settings_from(loaded, base=RunSettings(bots_dir=Path(loaded["bots"]))).trusted_reuse is True
    cfg.write_text('bots = "bots"\ntrusted_reuse = "yes"\n')
    result = CliRunner().invoke(app, ["run", "--config", str(cfg)])
    assert result.exit_code == 1
    assert "trusted_reuse" in str(result.exception)


def test_trusted_reuse_with_a_cluster_is_a_clear_error(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots")
    result = CliRunner().invoke(
        app, ["run", "--bots", str(bots), "--results", str(tmp_path / "out"), "--trusted-reuse", "--cluster", "local:1"]
    )
    assert result.exit_code == 1
    assert str(result.exception).startswith("--trusted-reuse keeps a local run's bot processes")
    assert not (tmp_path / "out").exists()
