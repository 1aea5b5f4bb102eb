"""The command line, called in-process with typer's CliRunner and once as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from arena import __version__
from arena.cli.app import app

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
    report = json.loads(result.stdout)
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


TESTBOT = str(__import__("pathlib").Path(__file__).parents[1] / "data" / "bots" / "testbot.py")


def _play(tmp_path, *extra: str):  # noqa: ANN001, ANN202
    replay = tmp_path / "g.json.gz"
    result = runner.invoke(app, ["play", TESTBOT, TESTBOT, TESTBOT, "--seed", "3", "--replay", str(replay), *extra])
    assert result.exit_code == 0, result.output
    return replay, result


def test_play_then_replay_then_verify(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(tmp_path)
    replay, result = _play(tmp_path)
    assert "rank" in result.output and "testbot" in result.output
    shown = runner.invoke(app, ["replay", str(replay), "--turn", "2.3"])
    assert shown.exit_code == 0 and "Round 2 turn 3" in shown.output
    summary = json.loads(runner.invoke(app, ["replay", str(replay), "--json"]).output)
    assert summary["players"] == 3 and len(summary["rounds"]) == 3
    assert all(len(r["tableaus"]) == 3 for r in summary["rounds"])
    ok = runner.invoke(app, ["verify", str(tmp_path)])
    assert ok.exit_code == 0 and "1 replay(s) verified" in ok.output


def test_play_json_and_dummy_variant(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(tmp_path)
    replay = tmp_path / "d.json.gz"
    result = runner.invoke(app, ["play", TESTBOT, TESTBOT, "--variant", "dummy", "--replay", str(replay), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["variant"] == "dummy" and summary["players"] == 3
    assert summary["result"]["ranks"][2] == 3  # the dummy can win nothing


def test_verify_names_the_game_and_turn_of_a_tampered_replay(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from arena.game.replay import read_replay, write_replay

    monkeypatch.chdir(tmp_path)
    replay, _ = _play(tmp_path)
    rep = read_replay(replay)
    turn = rep.turns[4]
    action = turn.actions[0]
    other = next(c for c in turn.hands[0] if c not in action.cards)
    action.cards = [other]  # a different card than the one the engine saw applied
    write_replay(replay, rep)
    bad = runner.invoke(app, ["verify", str(replay)])
    assert bad.exit_code == 1
    text = " ".join(bad.output.split())
    assert f"round {turn.round} turn {turn.turn}:" in text and "differ" in text


def test_verify_an_empty_folder_is_an_error(tmp_path) -> None:  # noqa: ANN001
    result = runner.invoke(app, ["verify", str(tmp_path)])
    assert result.exit_code != 0


def test_replay_of_a_file_that_is_not_one_names_it(tmp_path) -> None:  # noqa: ANN001
    from arena.cli import main

    junk = tmp_path / "junk.json.gz"
    junk.write_bytes(b"hello")
    proc = subprocess.run([sys.executable, "-m", "arena", "replay", str(junk)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "junk.json.gz" in proc.stderr and "Traceback" not in proc.stderr
    assert main is not None


def test_play_with_a_missing_bot_names_it(tmp_path) -> None:  # noqa: ANN001
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "play", str(tmp_path / "nobot"), TESTBOT], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1 and "nobot" in proc.stderr and "Traceback" not in proc.stderr


def test_schema_lists_every_message() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    text = json.dumps(schema)
    for name in ("Hello", "GameStart", "Act", "GameOver", "Shutdown", "HelloReply", "Ready", "Action", "Ack"):
        assert name in text


def _flat(text: str) -> str:
    """Output with its line wrapping undone, for phrases a wide message may split."""
    return " ".join(text.split())


def test_a_bot_that_crashes_at_start_up_shows_why(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(tmp_path)
    crasher = tmp_path / "crashbot.py"
    crasher.write_text('import sys\nprint("missing model file weights.bin", file=sys.stderr)\nsys.exit(1)\n')
    replay = tmp_path / "c.json.gz"
    played = runner.invoke(app, ["play", str(crasher), TESTBOT, "--replay", str(replay)])
    assert played.exit_code == 0, played.output
    text = _flat(played.output)
    assert "Before the first turn" in text and "seat 0 crashbot · crash: game_start:" in text
    assert "missing model file weights.bin" in text
    assert text.index("missing model file") < text.index("rank")  # before the final table
    shown = runner.invoke(app, ["replay", str(replay)])
    assert shown.exit_code == 0, shown.output
    text = _flat(shown.output)
    assert "missing model file weights.bin" in text
    assert text.index("Before the first turn") < text.index("Round 1 turn 1")


def test_a_fault_after_the_last_turn_is_shown_after_it(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from arena.game.replay import FaultRecord, read_replay, write_replay

    monkeypatch.chdir(tmp_path)
    replay, _ = _play(tmp_path)
    rep = read_replay(replay)
    rep.faults.append(FaultRecord(seat=1, round=0, turn=0, kind="timeout", message="game_over: no reply before the deadline"))
    write_replay(replay, rep)
    text = _flat(runner.invoke(app, ["replay", str(replay)]).output)
    fault = text.index("seat 1 testbot · timeout: game_over: no reply before the deadline")
    assert text.rindex("Round 3 turn") < text.index("After the last turn") < fault < text.index(f"Game {rep.game_id}")
    assert "Before the first turn" not in text
    one_turn = runner.invoke(app, ["replay", str(replay), "--turn", "1.1"])
    assert one_turn.exit_code == 0 and "game_over" not in one_turn.output


def test_replay_of_a_turn_not_in_the_game_is_an_error(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from arena.errors import ArenaError

    monkeypatch.chdir(tmp_path)
    replay, _ = _play(tmp_path)
    for turn, says in (
        ("4.1", "g.json.gz: no turn 4.1 in this game (rounds 1 to 3, each with turns 1 to 9)"),
        ("2.10", "g.json.gz: no turn 2.10 in this game (round 2 has turns 1 to 9)"),
        ("2.0", "no turn 2.0 in this game (round 2 has turns 1 to 9)"),
    ):
        result = runner.invoke(app, ["replay", str(replay), "--turn", turn])
        assert result.exit_code == 1
        assert isinstance(result.exception, ArenaError) and says in str(result.exception), result.exception
        assert result.output == ""  # nothing printed before the error
    last = runner.invoke(app, ["replay", str(replay), "--turn", "2.9"])  # the last card, played for everyone
    assert last.exit_code == 0 and "Round 2 turn 9 (last card" in last.output
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "replay", str(replay), "--turn", "4.1"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1 and proc.stdout == "" and "error:" in proc.stderr and "no turn 4.1" in proc.stderr


def test_verify_counts_files_that_are_not_replays_apart(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(tmp_path)
    toml = tmp_path / "somefile.toml"
    toml.write_text('name = "x"\n')
    alone = runner.invoke(app, ["verify", str(toml)])
    assert alone.exit_code == 1
    text = _flat(alone.output)
    assert "somefile.toml: not a replay: not JSON" in text and "1 file is not a readable replay" in text
    assert "differ" not in text
    folder = tmp_path / "replays"
    folder.mkdir()
    _play(folder)
    (folder / "stray.json.gz").write_bytes(b"not gzip, not json")
    mixed = runner.invoke(app, ["verify", str(folder)])
    assert mixed.exit_code == 1
    text = _flat(mixed.output)
    assert "stray.json.gz: not a replay" in text and "2 files checked: 1 file is not a readable replay" in text
    assert "the other 1 replay(s) verified" in text and "differ" not in text
    report = json.loads(runner.invoke(app, ["verify", str(folder), "--json"]).stdout)
    assert report["checked"] == 2 and report["failed"] == 1
    assert report["failures"][0]["kind"] == "unreadable" and "stray.json.gz" in report["failures"][0]["file"]


def test_replay_of_json_that_is_not_a_replay_says_what_is_missing(tmp_path) -> None:  # noqa: ANN001
    from arena.errors import ArenaError

    cases = {
        "leaderboard.json": ('{"players": 2, "variant": "standard"}', 'not a Sushi Go! Arena replay (no "format" field)'),
        "other.json": ('{"format": "xyz"}', "not a Sushi Go! Arena replay (format is 'xyz')"),
        "odd.json": ('{"format": {"players": 2}}', 'not a Sushi Go! Arena replay ("format" is not a string)'),
        "list.json": ("[1, 2]", "not a Sushi Go! Arena replay (JSON array, not an object)"),
    }
    for name, (content, says) in cases.items():
        (tmp_path / name).write_text(content)
        result = runner.invoke(app, ["replay", str(tmp_path / name)])
        assert result.exit_code == 1
        message = str(result.exception)
        assert isinstance(result.exception, ArenaError) and f"{name}: {says}" in message, message
        assert "players" not in message  # never the file's own values
