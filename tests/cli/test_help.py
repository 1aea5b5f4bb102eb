"""`--help` of every command: flags shown as flags (no `<bool>`), nothing cut short, at 80
columns in-process and as a real piped subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import typer
from typer.testing import CliRunner

from arena.cli.app import app

runner = CliRunner()

# What typer or click print in place of a flag's value when a flag is shown as an option
# that takes one; none of them may appear.
BOOL_PLACEHOLDERS = re.compile(r"<bool>|\bBOOLEAN\b|\[default: (?:True|False)\]|--[\w-]+ (?:bool|BOOL)\b")


def _commands(group, path=()):
    """Every command path under the root, the groups themselves included."""
    yield path
    for name, command in getattr(group, "commands", {}).items():
        if not command.hidden:
            yield from _commands(command, (*path, name))


def _flat(text: str) -> str:
    # Wrapping may break a line after a hyphen ("read-" / "only"): undo it with the spaces.
    return re.sub(r"-\s+", "-", " ".join(text.split()))


def _check(args: tuple[str, ...], output: str, command) -> None:
    assert "Usage" in output, (args, output)
    assert not BOOL_PLACEHOLDERS.search(output), (args, BOOL_PLACEHOLDERS.search(output), output)
    usage, _, rest = output.partition("\n\n")  # the usage line may end in "[ARGS]...": it is whole
    assert not usage.endswith("…"), (args, usage)
    for line in rest.splitlines():
        assert not line.endswith(("…", "...")), (args, line)
        assert line == line.rstrip(), (args, repr(line))
        assert len(line) <= 80, (args, line)
    flat = _flat(output)
    # Every description is there in full: each option's help, and each subcommand's
    # first paragraph in a group's list.
    for param in command.params:
        if getattr(param, "help", None):
            assert _flat(param.help) in flat, (args, param.name, param.help)
        if getattr(param, "is_flag", False) and not getattr(param, "count", False):
            for opt in param.opts:
                # The flag's name is followed by its description or the end of the line, never a value.
                assert re.search(rf"{re.escape(opt)}(?:,| / |\s{{2,}}|\n|$)", output), (args, opt, output)
    for name, sub in getattr(command, "commands", {}).items():
        if not sub.hidden:
            first = sub.short_help or (sub.help or "").split("\n\n")[0]
            assert _flat(first) in flat, (args, name, first)


def test_every_commands_help_shows_flags_as_flags_and_cuts_nothing() -> None:
    root = typer.main.get_command(app)
    paths = list(_commands(root))
    assert len(paths) > 20, paths  # the walk found the commands (run, report, bench …)
    assert ("run",) in paths and ("store", "key", "import") in paths
    for path in paths:
        command = root
        for name in path:
            command = command.commands[name]
        result = runner.invoke(app, [*path, "--help"], terminal_width=80, env={"COLUMNS": "80"})
        assert result.exit_code == 0, (path, result.output)
        _check(path, result.output, command)


def test_run_help_piped_from_a_real_process() -> None:
    """`arena run --help | cat`, at 80 columns and with no COLUMNS at all."""
    root = typer.main.get_command(app)
    for columns in ("80", None):
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        if columns:
            env["COLUMNS"] = columns
        proc = subprocess.run(
            [sys.executable, "-m", "arena", "run", "--help"], capture_output=True, text=True, timeout=60, env=env
        )
        assert proc.returncode == 0, proc.stderr
        assert "\x1b[" not in proc.stdout
        _check(("run",), proc.stdout, root.commands["run"])
        for flag in ("--no-timeout", "--quiet", "--no-report", "--json"):
            line = next(line for line in proc.stdout.splitlines() if flag in line)
            assert re.fullmatch(rf"\s+(?:-\w, )?{flag}\s{{2,}}\S.*", line), line
