"""What `arena validate` shows of a bot's stderr, with real bot processes: a bot that
covered up an internal error (the SDK answered legal[0] for it) passes every check, but
its stderr is shown, kept in --json and warned about; a bot that crashes at start-up has
the first lines of its trace quoted, bounded, not only the last one."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from typer.testing import CliRunner

from arena.authoring.validate import TRACE_LINE_LIMIT, TRACE_LINES, trace_excerpt, validate_bot
from arena.cli.app import app
from arena.game.players import TimeSettings

runner = CliRunner()

#: An SDK bot whose act() fails at the first turn of round 2: the SDK logs the traceback
#: to stderr and answers legal[0], so every check passes.
COVERED_UP = textwrap.dedent(
    """
    from protocol.sdk import Bot, run

    class Flaky(Bot):
        name = "flaky"

        def act(self, view):
            if (view.round, view.turn) == (2, 1):
                return self.lookup[view.turn]  # no such attribute: AttributeError
            return view.legal[0]

    run(Flaky())
    """
)

#: A bot that dies while starting: a deep trace, one line of it 5000 characters long and
#: holding a terminal control sequence.
CRASHES = textwrap.dedent(
    """
    import sys

    def load(depth):
        if depth == 0:
            raise RuntimeError("model file missing: " + "x" * 5000 + "\\x1b]0;owned\\x07")
        load(depth - 1)

    print("starting up", file=sys.stderr)
    load(20)
    """
)

#: A bot that writes nothing to stderr: the test bot (seeded random legal plays).
QUIET = Path(__file__).parents[1] / "data" / "bots" / "testbot.py"


def _bot(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return path


def test_a_bot_that_covered_up_its_errors_passes_but_its_stderr_is_shown_and_warned_about(
    tmp_path: Path, monkeypatch
) -> None:  # noqa: ANN001
    monkeypatch.chdir(tmp_path)
    bot = _bot(tmp_path, "flaky", COVERED_UP)
    result = runner.invoke(app, ["validate", str(bot), "--sandbox", "limits", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["passed"] is True
    assert "AttributeError" in report["stderr"] and "answering legal[0] instead" in report["stderr"]
    assert report["warnings"] and "stderr" in report["warnings"][0]
    # Each piece says where it was written; the validator's own set-aside is explained.
    assert "[3 players, alternate]" in report["stderr"] and "aside on purpose" in report["warnings"][0]
    table = runner.invoke(app, ["validate", str(bot), "--sandbox", "limits"])
    assert table.exit_code == 0, table.output
    out = table.output
    assert "! the bot wrote to stderr during the validation" in out
    assert "the bot's stderr (the last 20 lines;" in out and "AttributeError" in out
    assert "all 15 checks passed" in out


def test_a_quiet_bot_gets_no_warning(tmp_path: Path) -> None:
    report = validate_bot(QUIET, TimeSettings(), build_cache=tmp_path / "build")
    assert report.passed and report.stderr == "" and report.warnings == []
    assert report.to_dict()["stderr"] == "" and report.to_dict()["warnings"] == []


def test_a_crash_at_start_up_quotes_the_first_lines_of_its_trace_bounded(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(tmp_path)
    bot = _bot(tmp_path, "crashes", CRASHES)
    report = validate_bot(bot, TimeSettings(), build_cache=tmp_path / "build")
    hello = next(c for c in report.checks if c.name == "hello")
    assert not hello.passed
    began = dict(hello.details)["stderr began"]
    lines = began.splitlines()
    assert lines[:2] == ["starting up", "Traceback (most recent call last):"]
    assert len(lines) <= TRACE_LINES + 2 and all(len(line) <= TRACE_LINE_LIMIT for line in lines)
    assert "more line(s)" in lines[-2] and lines[-1].startswith("RuntimeError: model file missing: xxx")
    assert "its stderr began:" in hello.message
    # The last line alone (here only the end of a long line: no error name) is still in what
    # the referee said; all of the stderr is in the report.
    assert "last stderr line" in dict(hello.details)["got"]
    assert "load(depth - 1)" in report.stderr
    table = runner.invoke(app, ["validate", str(bot), "--sandbox", "limits"])
    assert table.exit_code == 1
    assert "stderr began" in table.output and "Traceback (most recent call last):" in table.output
    assert "\x1b" not in table.output and "\x07" not in table.output


def test_the_trace_excerpt_is_short_when_the_trace_is() -> None:
    assert trace_excerpt("") == ""
    assert trace_excerpt("one\n\ntwo\n") == "one\ntwo"
    long = "\n".join(f"line {i}" for i in range(100))
    excerpt = trace_excerpt(long).splitlines()
    assert excerpt[:TRACE_LINES] == [f"line {i}" for i in range(TRACE_LINES)]
    assert excerpt[TRACE_LINES:] == [f"[… {100 - TRACE_LINES - 1} more line(s) …]", "line 99"]
