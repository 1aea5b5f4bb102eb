"""The command line's package has no import circle: app.py imports the command modules and
registers their commands; no module of the package imports the app (but the entry point)."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "arena" / "cli"


def _cli_imports(path: Path) -> set[str]:
    """The arena.cli modules ``path`` imports, lazily inside a function or not."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "arena.cli":
                names.update(f"arena.cli.{alias.name}" for alias in node.names)
            else:
                names.add(node.module)
    return {n for n in names if n.startswith("arena.cli.")}


def _graph() -> dict[str, set[str]]:
    return {f"arena.cli.{p.stem}": _cli_imports(p) for p in CLI.glob("*.py") if p.stem != "__init__"}


def test_no_module_of_the_cli_imports_the_app() -> None:
    graph = _graph()
    assert len(graph) > 10, graph  # the walk found the command modules
    assert {m for m, imported in graph.items() if "arena.cli.app" in imported} == set()


def test_the_cli_package_has_no_import_circle() -> None:
    graph = _graph()
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join((*path, module))
        if module in done:
            return
        for imported in sorted(graph.get(module, ())):
            visit(imported, (*path, module))
        done.add(module)

    for module in sorted(graph):
        visit(module, ())
    assert "arena.cli.run" in graph["arena.cli.app"]  # the app registers the commands, one way


def test_the_time_options_read_the_same_in_every_command_that_plays_at_once() -> None:
    import typer

    from arena.cli.app import app

    root = typer.main.get_command(app)
    flags = ("--hello-ms", "--turn-ms", "--bank-ms", "--time-scale", "--no-timeout")

    def options(command: str) -> list[tuple[str, object, object]]:
        by_flag = {p.opts[0]: p for p in root.commands[command].params}
        return [(flag, by_flag[flag].help, by_flag[flag].default) for flag in flags]

    assert options("play") == options("validate") == options("submit")
    assert [default for *_, default in options("play")] == [10_000, 1_000, 10_000, 1.0, False]


def test_the_time_options_reach_the_game(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from arena.cli.app import app
    from arena.game.replay import read_replay

    bot = str(Path(__file__).parents[1] / "data" / "bots" / "testbot.py")
    replay = tmp_path / "game.json.gz"
    result = CliRunner().invoke(
        app, ["play", bot, bot, "--turn-ms", "777", "--bank-ms", "0", "--time-scale", "2", "--replay", str(replay), "--json"]
    )
    assert result.exit_code == 0, result.output
    recorded = read_replay(replay).time
    assert (recorded["turn_ms"], recorded["bank_ms"], recorded["time_scale"], recorded["hello_ms"]) == (777, 0, 2.0, 10_000)
