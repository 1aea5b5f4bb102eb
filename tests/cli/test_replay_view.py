"""`arena replay FILE` in the terminal shows each decision's time, the bot's debug value
and the tail of its stderr, as the HTML viewer does; `--ask` shows the debug value too.
Everything a bot wrote comes out escaped. Real bot processes throughout."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arena.authoring.ask import _dumpable
from arena.cli.app import app
from arena.cli.render import DEBUG_LIMIT, debug_text
from arena.game.replay import read_replay

runner = CliRunner()
#: The debug note as shown: JSON whose string holds the escapes, not the controls.
NOTE = r'"\\x1b[31mred\\u202e"'

#: A bot (standard library only) that plays legal[0], sets a debug value holding terminal
#: controls, and writes 30 lines to stderr each game, a terminal title sequence among them.
NOISY = textwrap.dedent(
    '''
    import json, sys
    turn = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            reply = {"type": "hello", "re": msg["id"], "version": 1, "name": "noisy"}
        elif msg["type"] == "game_start":
            for i in range(30):
                print(f"noisy line {i}" + ("\\x1b]0;owned\\x07" if i == 29 else ""), file=sys.stderr, flush=True)
            reply = {"type": "ready", "re": msg["id"]}
        elif msg["type"] == "act":
            turn += 1
            debug = {"decision": turn, "note": "\\x1b[31mred\\u202e"}
            reply = {"type": "action", "re": msg["id"], **msg["legal"][0], "debug": debug}
        elif msg["type"] == "game_over":
            reply = {"type": "ack", "re": msg["id"]}
        else:
            break
        sys.stdout.write(json.dumps(reply) + "\\n")
        sys.stdout.flush()
    '''
)


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("view")
    bot = folder / "noisy.py"
    bot.write_text(NOISY)
    path = folder / "game.json.gz"
    result = runner.invoke(app, ["play", str(bot), str(bot), "--seed", "5", "--replay", str(path), "--sandbox", "limits"])
    assert result.exit_code == 0, result.output
    return path


def test_each_decision_shows_its_time_and_the_debug_value_escaped(game: Path) -> None:
    result = runner.invoke(app, ["replay", str(game), "--turn", "1.2"])
    assert result.exit_code == 0, result.output
    out = result.output
    replay = read_replay(game)
    turn = next(t for t in replay.turns if (t.round, t.turn) == (1, 2))
    assert "time" in out
    for action in turn.actions:
        shown = f"{action.elapsed_ms:.2f} ms" if action.elapsed_ms < 10 else f"{action.elapsed_ms:,.0f} ms"
        assert shown in out
    assert out.count('debug: {"decision": 2, "note": ' + NOTE + "}") == 2, out
    assert "\x1b" not in out and "\u202e" not in out


def test_the_whole_game_ends_with_each_bots_stderr_tail_escaped(game: Path) -> None:
    result = runner.invoke(app, ["replay", str(game)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "What each bot wrote to stderr" in out
    assert out.count("the last 20 lines; 10 before them") == 2
    assert "noisy line 29\\x1b]0;owned\\x07" in out and "noisy line 10" in out
    assert "noisy line 9\n" not in out  # before the tail
    assert "\x1b" not in out and "\x07" not in out
    # every decision of both seats has its debug line
    decisions = sum(1 for t in read_replay(game).turns for a in t.actions if a.debug is not None)
    assert out.count("debug: {") == decisions > 40


def test_ask_shows_the_answers_debug_and_the_recorded_one(game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "again"
    folder.mkdir()
    (folder / "bot.py").write_text(NOISY)
    (folder / "bot.toml").write_text('name = "again"\nrun = ["{python}", "bot.py"]\n')
    result = runner.invoke(app, ["replay", str(game), "--ask", str(folder), "--seat", "1", "--turn", "2.3", "--sandbox", "limits"])
    assert result.exit_code == 0, result.output
    out = result.output
    # A fresh process answers its first act (decision 1); the recorded bot was further on.
    assert 'its debug value: {"decision": 1, "note": ' + NOTE + "}" in out
    recorded = next(a for t in read_replay(game).turns if (t.round, t.turn) == (2, 3) for a in t.actions if a.seat == 1)
    assert f'recorded debug value: {{"decision": {recorded.debug["decision"]}, "note": {NOTE}}}' in out
    assert "\x1b" not in out


def test_a_debug_value_nested_near_the_decoders_limit_is_shown_without_a_traceback(tmp_path: Path) -> None:
    """900 levels of lists fit in the 4 KiB the referee keeps and decode, but are too deep
    to encode again from deep in the command's own stack."""
    bot = tmp_path / "deep.py"
    bot.write_text(NOISY.replace('debug = {"decision": turn, "note": "\\x1b[31mred\\u202e"}', "debug = json.loads('[' * 900 + ']' * 900)"))
    assert "900" in bot.read_text()
    path = tmp_path / "deep.json.gz"
    played = runner.invoke(app, ["play", str(bot), str(bot), "--seed", "2", "--replay", str(path), "--sandbox", "limits"])
    assert played.exit_code == 0, played.output
    assert any(a.debug is not None for t in read_replay(path).turns for a in t.actions)
    result = runner.invoke(app, ["replay", str(path), "--turn", "1.1"])
    assert result.exit_code == 0, result.output
    assert "deep debug:" in result.output and "[[[[" in result.output
    # Deeper in the stack (as a bigger command might be) the plain encoder gives up: a note instead.
    deep = read_replay(path).turns[0].actions[0].debug

    def from_deep_in_the_stack(levels: int) -> str:
        return from_deep_in_the_stack(levels - 1) if levels else debug_text(deep)

    assert from_deep_in_the_stack(300) == "(a value nested too deeply to show)"
    assert debug_text(deep).startswith("[[[[") and len(debug_text(deep)) <= DEBUG_LIMIT


def test_ask_json_survives_a_debug_value_nested_near_the_decoders_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "deep"
    folder.mkdir()
    (folder / "bot.py").write_text(NOISY.replace('debug = {"decision": turn, "note": "\\x1b[31mred\\u202e"}', "debug = json.loads('[' * 900 + ']' * 900)"))
    (folder / "bot.toml").write_text('name = "deep"\nrun = ["{python}", "bot.py"]\n')
    game = tmp_path / "g.json.gz"
    played = runner.invoke(app, ["play", str(folder / "bot.py"), str(folder / "bot.py"), "--seed", "2", "--replay", str(game), "--sandbox", "limits"])
    assert played.exit_code == 0, played.output
    result = runner.invoke(app, ["replay", str(game), "--ask", str(folder), "--seat", "0", "--turn", "1.1", "--sandbox", "limits", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    deep = json.loads("[" * 900 + "]" * 900)
    assert report["status"] == "ok" and report["answer"]["debug"] == report["recorded"]["debug"] == deep
    # From deeper in the stack the standard encoder gives up: the report carries a note instead.

    def from_deep_in_the_stack(levels: int) -> Any:
        return from_deep_in_the_stack(levels - 1) if levels else _dumpable(deep)

    assert from_deep_in_the_stack(300) == {"not_shown": "nested too deeply"}
