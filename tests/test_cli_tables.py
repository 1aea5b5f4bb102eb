"""The leaderboard and game list fit the terminal without cutting a number or a path."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import arena.cli_run as cli_run
from arena.cli import app
from arena.standings import standings
from arena.store import open_store

EXAMPLES = Path(__file__).resolve().parent.parent / "example_bots"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tables")
    for name in ("random", "greedy", "minimal"):
        shutil.copytree(EXAMPLES / name, root / "bots" / name, ignore=shutil.ignore_patterns("__pycache__"))
    run = CliRunner().invoke(app, ["run", "--bots", str(root / "bots"), "--results", str(root / "res"), "--players", "2", "--json"])
    assert run.exit_code == 0, run.output
    return root / "res"


def _render(renderable: object, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize("width", [132, 100, 80, 64])
def test_the_leaderboard_drops_columns_before_it_cuts_a_number(results: Path, width: int) -> None:
    with open_store(results, create=False) as store:
        st = standings(store)
    text = _render(cli_run.leaderboard_table(st, width=width), width)
    assert "…" not in text.split("\n", 1)[1].rsplit("faults", 1)[-1]  # no cell cut short
    assert max(len(line) for line in text.splitlines()) <= width
    for row in st.rows:
        assert f"{row['elo']:.0f}" in text and f"{row['mean_points']:.1f}" in text
    header = text.splitlines()[2]
    assert ("CPU ms" in header) == (width >= 100) and "Elo" in header and "games" in header


def test_the_game_list_keeps_each_replay_path_whole_and_marks_the_winner(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_store(results, create=False) as store:
        games = store.games()
    for width in (132, 80):
        monkeypatch.setattr(cli_run, "out", Console(width=width, file=io.StringIO(), color_system=None))
        result = CliRunner().invoke(app, ["games", str(results)])
        assert result.exit_code == 0, result.output
        text = cli_run.out.file.getvalue()  # type: ignore[attr-defined]
        for g in games:
            assert str(results / g.replay) in text  # whole, on one line
            winner = next(s for s in g.seats if s.rank == 1)
            assert f"{winner.bot.name} {winner.points}*" in text
    listed = json.loads(CliRunner().invoke(app, ["games", str(results), "--json"]).stdout)["games"]
    assert len(listed) == len(games)
