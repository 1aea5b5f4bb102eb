"""Bot names are plain (they show in tables, file names and name@hash keys), and nothing a
bot or a user writes can break the terminal output (rich markup is escaped)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.bots.manifest import ManifestError, discover_bots, find_bot
from arena.cli.app import app

EXAMPLES = Path(__file__).resolve().parents[2] / "example_bots"


def test_a_name_with_markup_or_spaces_is_refused_naming_the_file(tmp_path: Path) -> None:
    bot = tmp_path / "b"
    bot.mkdir()
    (bot / "main.py").write_text("pass\n")
    for bad in ("[/red]x", "my bot", "a@b", "-dash", "x" * 65, "", "Élan+"):
        (bot / "bot.toml").write_text(f'name = "{bad}"\nrun = ["python3", "main.py"]\n')
        with pytest.raises(ManifestError, match=r"bot\.toml: field 'name' must be 1 to 64 ASCII letters"):
            find_bot(bot)
    for good in ("greedy", "js-greedy", "mcts_v2.1", "Elan+"):
        (bot / "bot.toml").write_text(f'name = "{good}"\nrun = ["python3", "main.py"]\n')
        assert find_bot(bot).name == good


def test_a_name_taken_from_a_folder_or_file_says_how_to_fix_it(tmp_path: Path) -> None:
    folder = tmp_path / "my bot"
    folder.mkdir()
    (folder / "main.py").write_text("pass\n")
    with pytest.raises(ManifestError, match=r"my bot: a bot's name \(here the folder's\).*add a bot\.toml with a name"):
        find_bot(folder)
    script = tmp_path / "we[1]rd.py"
    script.write_text("pass\n")
    with pytest.raises(ManifestError, match=r"rename the file"):
        find_bot(script)
    (folder / "bot.toml").write_text('name = "mybot"\nrun = ["python3", "main.py"]\n')
    assert find_bot(folder).name == "mybot"
    bots, errors = discover_bots(tmp_path)
    assert [b.name for b in bots] == ["mybot"] and [p.name for p, _ in errors] == ["we[1]rd.py"]


def test_markup_in_what_a_bot_writes_never_breaks_the_output(tmp_path: Path) -> None:
    """A bot that dies at start-up with '[/red]' on stderr: it is skipped with that text
    shown as written, and the others play on."""
    bots = tmp_path / "bots"
    for name in ("random", "greedy"):
        shutil.copytree(EXAMPLES / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    (bots / "loud.py").write_text("import sys\nsys.stderr.write('[/red] [bold]boom\\n')\nsys.exit(2)\n")
    result = CliRunner().invoke(app, ["run", "--bots", str(bots), "--results", str(tmp_path / "res"), "--players", "2"])
    assert result.exit_code == 0, result.output
    assert "[/red] [bold]boom" in result.output
