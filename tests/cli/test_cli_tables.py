"""The leaderboard and game list fit the terminal without cutting a number or a path."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import arena.cli.run as cli_run
from arena.cli.app import app
from arena.cli.render_results import leaderboard_table
from arena.store.opening import open_store
from arena.tournament.standings import standings

EXAMPLES = Path(__file__).resolve().parents[2] / "example_bots"


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
    text = _render(leaderboard_table(st, width=width), width)
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


@pytest.mark.parametrize("columns", ["80", None])
def test_a_long_piped_run_gives_every_game_its_whole_line(tmp_path: Path, columns: str | None) -> None:
    """`arena run … | cat` of more than a hundred games, into a results folder whose path
    is longer than any width: every finished game has its line, no path is broken, no
    line ends in spaces."""
    import os
    import subprocess
    import sys

    bots = tmp_path / "bots"
    for name in ("random", "minimal"):
        shutil.copytree(EXAMPLES / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    res = tmp_path / ("a-results-folder-whose-name-is-long-" * 3) / "and-deeper-still" / "results"
    assert len(str(res)) > 140
    res.parent.mkdir(parents=True)  # a results folder's parent must exist (the run says so otherwise)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | ({"COLUMNS": columns} if columns else {})
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "run", "--bots", str(bots), "--results", str(res),
         "--players", "2", "--deals", "55", "--sandbox", "none"],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    with open_store(res, create=False) as store:
        ids = {g.id for g in store.games()}
    assert len(ids) == 110
    lines = proc.stderr.splitlines() + proc.stdout.splitlines()
    numbered = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert [line.split("]")[0] for line in numbered] == [f"[{k}/110" for k in range(1, 111)]
    assert {line.split()[2] for line in numbered} == ids  # "[k/N] game ID seats…"
    for line in lines:
        assert line == line.rstrip(), repr(line)
    assert any(f"results in {res}/ (leaderboard.md" in line for line in lines), proc.stderr
    assert any(line == f"report: {res}/bots-2p-standard-" + line.rsplit("bots-2p-standard-", 1)[-1] for line in lines)
    assert any(line.endswith("/report/index.html") and line.startswith("report: ") for line in lines)
    table = [line for line in proc.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and max(len(line) for line in table) <= int(columns or 132)
