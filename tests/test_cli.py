"""The command line, called in-process with typer's CliRunner and once as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from arena import __version__
from arena.cli import app

runner = CliRunner()


def test_version_names_the_rules_version() -> None:
    from arena.engine import RULES_VERSION

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output and RULES_VERSION in result.output


def test_every_command_has_help() -> None:
    for args in (["--help"], ["bench", "--help"], ["bench", "engine", "--help"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
        assert "Usage" in result.output


def test_bench_engine_json_reports_games_per_second() -> None:
    result = runner.invoke(app, ["bench", "engine", "--players", "4", "--seconds", "0.2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["benchmark"] == "engine"
    assert report["players"] == 4
    assert report["games_per_s"] > 0
    assert report["per_players"]["4"]["baseline_games_per_s"] > 0
    assert report["ratio"] > 0


def test_bench_engine_table_when_piped_is_plain_text() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "bench", "engine", "-p", "2", "-s", "0.2"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "games/s" in proc.stdout
    assert "\x1b[" not in proc.stdout  # no colour codes when not on a terminal


def test_dummy_variant_needs_two_players() -> None:
    result = runner.invoke(app, ["bench", "engine", "--variant", "dummy", "--players", "3", "--seconds", "0.1"])
    assert result.exit_code != 0
