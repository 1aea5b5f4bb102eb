"""`arena replay FILE --ask BOT --seat S --turn R.T`, with real bot processes.

The act sent is checked against what the seats really received in recorded games
(the test bot logs every line it reads), faults included; then real bots are
asked, and every mistake a user can make gets a clear error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from arena.authoring.ask import rebuild_position
from arena.bots import BotSpec
from arena.bots.strict import strict_support
from arena.cli.app import app
from arena.engine import GameConfig
from arena.errors import ArenaError
from arena.game.players import TimeSettings, open_pool
from arena.game.referee import play_game
from arena.game.replay import Replay, read_replay, write_replay
from protocol import encode_line

ROOT = Path(__file__).resolve().parents[2]
TESTBOT = ROOT / "tests" / "data" / "bots" / "testbot.py"
GREEDY = ROOT / "example_bots" / "greedy"
FAST = TimeSettings(hello_ms=5_000, turn_ms=400, bank_ms=200)
runner = CliRunner()


def bot_spec(*args: str, name: str = "testbot") -> BotSpec:
    return BotSpec(name=name, argv=(sys.executable, str(TESTBOT), "--name", name, *args), cwd=TESTBOT.parent)


def record_game(specs: list[BotSpec], config: GameConfig, seed: int, ts: TimeSettings = FAST, untimed: int = -1) -> Replay:
    async def main() -> Replay:
        async with open_pool() as pool:
            players = [pool.player(s, untimed=i == untimed) for i, s in enumerate(specs)]
            record = await play_game(players, config, seed, time_settings=ts)
        assert record.status == "complete", record.void_reason
        return record.replay

    return trio.run(main)


def _wire(obj: object) -> dict:
    data = json.loads(obj) if isinstance(obj, bytes | str) else json.loads(encode_line(obj))  # type: ignore[arg-type]
    data.pop("id")  # the request id depends on the process's history, not on the position
    return data


@pytest.mark.parametrize(
    ("players", "variant", "faults"),
    [
        (3, "standard", ("--mode", "illegal", "--at", "1.2")),  # last_action tells of the fault
        (4, "alternate", ("--mode", "wrongshape", "--at", "2.1")),
        (2, "dummy", ("--mode", "badjson", "--at", "1.3")),
    ],
)
def test_the_act_sent_is_exactly_the_one_the_seat_received(tmp_path: Path, players: int, variant: str, faults: tuple[str, ...]) -> None:
    logs = [tmp_path / f"seat{i}.jsonl" for i in range(players)]
    specs = [bot_spec("--log", str(logs[i]), *(faults if i == 1 else ()), name=f"bot{i}") for i in range(players)]
    replay = record_game(specs, GameConfig(players, variant), seed=11)
    assert replay.faults, "the game should hold the fault it was set up with"
    checked = 0
    for seat, log in enumerate(logs):
        for line in log.read_text().splitlines():
            msg = json.loads(line)
            if msg["type"] != "act":
                continue
            position = rebuild_position(replay, seat, msg["round"], msg["turn"])
            assert _wire(position.act) == _wire(line), (seat, msg["round"], msg["turn"])
            checked += 1
    asked = sum(1 for t in replay.turns for a in t.actions if a.status not in ("autopilot", "auto"))
    assert checked == asked


def test_an_untimed_seat_and_timeouts_are_rebuilt_too(tmp_path: Path) -> None:
    """Banks: one seat untimed (infinite, shown as 0), one that times out and loses its bank."""
    logs = [tmp_path / f"seat{i}.jsonl" for i in range(3)]
    specs = [
        bot_spec("--log", str(logs[0]), name="untimed"),
        bot_spec("--log", str(logs[1]), "--mode", "late", "--at", "1.2", "--sleep", "1.5", name="late"),
        bot_spec("--log", str(logs[2]), name="timed"),
    ]
    replay = record_game(specs, GameConfig(3, "standard"), seed=5, untimed=0)
    assert any(f.kind == "timeout" for f in replay.faults)
    for seat, log in enumerate(logs):
        for line in log.read_text().splitlines():
            msg = json.loads(line)
            if msg["type"] == "act":
                position = rebuild_position(replay, seat, msg["round"], msg["turn"])
                assert _wire(position.act) == _wire(line), (seat, msg["round"], msg["turn"])


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 3-player game: greedy, the test bot, random; fast deadlines."""
    path = tmp_path_factory.mktemp("ask") / "game.json.gz"
    specs = [
        BotSpec(name="greedy", argv=(sys.executable, "bot.py"), cwd=GREEDY),
        bot_spec(name="testbot"),
        BotSpec(name="random", argv=(sys.executable, "bot.py"), cwd=ROOT / "example_bots" / "random"),
    ]
    write_replay(path, record_game(specs, GameConfig(3, "standard"), seed=7))
    return path


def ask(game: Path, bot: Path | str, *args: str, sandbox: str = "limits"):  # noqa: ANN201
    """`arena replay GAME --ask BOT ARGS`; the test bots' program lives outside their
    folder, which only the strict sandbox hides, so they run at ``limits``."""
    return runner.invoke(app, ["replay", str(game), "--ask", str(bot), *args, "--sandbox", sandbox])


@pytest.mark.skipif(not strict_support().ok, reason="strict sandbox unavailable")
def test_ask_runs_the_bot_in_the_sandbox_strict_by_default(game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["replay", str(game), "--ask", str(GREEDY), "--seat", "1", "--turn", "2.3", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["status"] == "ok"
    # A bot whose program is outside its own folder cannot reach it under strict.
    outside = _folder_bot(tmp_path, "outside")
    result = runner.invoke(app, ["replay", str(game), "--ask", str(outside), "--seat", "1", "--turn", "2.3"])
    assert isinstance(result.exception, ArenaError)
    assert "No such file or directory" in str(result.exception)


def test_sandbox_goes_with_ask(game: Path) -> None:
    result = runner.invoke(app, ["replay", str(game), "--sandbox", "limits"])
    assert isinstance(result.exception, ArenaError)
    assert "--sandbox go with --ask BOT" in str(result.exception)


def test_greedy_answers_legally_and_is_timed(game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = ask(game, GREEDY, "--seat", "1", "--turn", "2.3", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["status"] == "ok" and report["legal"] is True and report["message"] == ""
    assert report["bot"] == "greedy" and report["recorded"]["bot"] == "testbot"
    assert report["elapsed_ms"] >= 0
    act = report["act"]
    assert (act["seat"], act["round"], act["turn"]) == (1, 2, 3)
    assert report["answer"]["cards"] in [p["cards"] for p in act["legal"]]
    turn = next(t for t in read_replay(game).turns if (t.round, t.turn) == (2, 3))
    assert [c["id"] for c in act["hand"]] == turn.hands[1]
    assert report["recorded"]["cards"] == next(a.cards for a in turn.actions if a.seat == 1)


def test_the_same_bot_at_the_first_turn_plays_as_it_did(game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At turn 1.1 a fresh process knows what the recorded one knew (its seed comes from
    game_start): the test bot makes the same seeded choice again."""
    monkeypatch.chdir(tmp_path)
    result = ask(game, TESTBOT, "--seat", "1", "--turn", "1.1", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["same_as_recorded"] is True


def test_the_table_shows_answer_legality_recorded_play_and_time(game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = ask(game, GREEDY, "--seat", "2", "--turn", "1.4")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Asked greedy for seat 2 at round 1 turn 4" in out
    assert "✓ legal" in out and "recorded" in out and "random" in out and " ms" in out


def _folder_bot(tmp_path: Path, name: str, *args: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    run = json.dumps(["{python}", str(TESTBOT), "--name", name, *args])
    (folder / "bot.toml").write_text(f'name = "{name}"\nversion = "1"\nrun = {run}\n')
    return folder


@pytest.mark.parametrize(
    ("mode", "status", "says"),
    [
        ("illegal", "illegal", "999"),
        ("wrongshape", "malformed", "cards"),
        ("wrongre", "protocol", "re="),
        ("exit", "crash", "exit"),
        ("sleep", "timeout", "deadline"),
    ],
)
def test_a_bad_answer_is_reported_with_its_fault(
    game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, status: str, says: str
) -> None:
    monkeypatch.chdir(tmp_path)
    bot = _folder_bot(tmp_path, f"bad-{mode}", "--mode", mode, "--at", "1.3")
    result = ask(game, bot, "--seat", "0", "--turn", "1.3", "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["status"] == status and report["legal"] is False
    assert says in report["message"]
    table = ask(game, bot, "--seat", "0", "--turn", "1.3")
    assert table.exit_code == 1 and f"✗ {status}" in table.output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--seat", "1"], "--ask needs --seat S and --turn ROUND.TURN"),
        (["--turn", "1.1"], "--ask needs --seat S and --turn ROUND.TURN"),
        (["--seat", "1", "--turn", "2-3"], "--turn takes ROUND.TURN"),
        (["--seat", "1", "--turn", "1.9"], "no turn 1.9 in this game; round 1 has decisions at turns 1 to 8"),
        (["--seat", "1", "--turn", "4.1"], "no turn 4.1 in this game; it has rounds 1 to 3"),
        (["--seat", "3", "--turn", "1.1"], "--seat 3: this game has seats 0 to 2"),
    ],
)
def test_bad_seat_or_turn_is_a_clear_error(game: Path, args: list[str], says: str) -> None:
    result = ask(game, GREEDY, *args)
    assert result.exit_code == 1
    assert isinstance(result.exception, ArenaError) and says in str(result.exception)


def test_bad_file_or_bot_is_a_clear_error(game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cases = [
        (runner.invoke(app, ["replay", str(tmp_path / "none.json.gz"), "--ask", str(GREEDY), "--seat", "0", "--turn", "1.1"]),
         "none.json.gz: cannot read"),
        (ask(game, tmp_path / "nobot", "--seat", "0", "--turn", "1.1"), "no such bot"),
        (ask(game, _quitter(tmp_path), "--seat", "0", "--turn", "1.1"), "bot quitter"),
    ]
    (tmp_path / "junk.json.gz").write_text("{}")
    cases.append((ask(tmp_path / "junk.json.gz", GREEDY, "--seat", "0", "--turn", "1.1"), "not a Sushi Go! Arena replay"))
    for result, says in cases:
        assert result.exit_code == 1
        assert isinstance(result.exception, ArenaError) and says in str(result.exception), result.exception


def _quitter(tmp_path: Path) -> Path:
    """A bot that exits before answering hello."""
    folder = tmp_path / "quitter"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "quitter"\nrun = ["{python}", "-c", "raise SystemExit(4)"]\n')
    return folder


def test_seat_options_need_ask(game: Path) -> None:
    result = runner.invoke(app, ["replay", str(game), "--seat", "1"])
    assert isinstance(result.exception, ArenaError) and "go with --ask" in str(result.exception)


def test_a_seat_that_was_sent_no_act_is_refused(tmp_path: Path) -> None:
    """After a crash the seat is on autopilot; in the dummy variant seat 2 is the dummy."""
    specs = [bot_spec(name="ok"), bot_spec("--mode", "exit", "--at", "1.2", name="crasher")]
    replay = record_game(specs, GameConfig(2, "dummy"), seed=3)
    with pytest.raises(ArenaError, match="seat 1 was sent no act at turn 1.3: it was on autopilot"):
        rebuild_position(replay, 1, 1, 3)
    with pytest.raises(ArenaError, match="is the dummy's seat"):
        rebuild_position(replay, 2, 1, 1)
    assert rebuild_position(replay, 1, 1, 2).recorded.status == "crash"


def test_a_replay_that_differs_from_the_engine_is_refused(game: Path) -> None:
    replay = read_replay(game)
    turn = replay.turns[3]
    turn.hands[0] = list(reversed(turn.hands[0]))
    with pytest.raises(ArenaError, match=rf"turn {turn.round}\.{turn.turn}: the replay does not match the engine"):
        rebuild_position(replay, 0, 2, 1)


def test_ask_sends_the_bot_the_game_start_and_act_the_seat_received(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    logs = [tmp_path / f"seat{i}.jsonl" for i in range(2)]
    specs = [bot_spec("--log", str(logs[i]), name=f"bot{i}") for i in range(2)]
    game = tmp_path / "game.json.gz"
    write_replay(game, record_game(specs, GameConfig(2, "alternate"), seed=9))
    asked_log = tmp_path / "asked.jsonl"
    bot = _folder_bot(tmp_path, "logger", "--log", str(asked_log))
    result = ask(game, bot, "--seat", "1", "--turn", "2.4", "--json")
    assert result.exit_code == 0, result.output
    received = [json.loads(line) for line in logs[1].read_text().splitlines()]
    asked = [json.loads(line) for line in asked_log.read_text().splitlines()]
    assert [m["type"] for m in asked[:3]] == ["hello", "game_start", "act"]
    recorded_start = next(m for m in received if m["type"] == "game_start")
    recorded_act = next(m for m in received if m["type"] == "act" and (m["round"], m["turn"]) == (2, 4))
    for sent, original in ((asked[1], recorded_start), (asked[2], recorded_act)):
        sent.pop("id"), original.pop("id")
        assert sent == original


COUNTER = ROOT / "tests" / "data" / "bots" / "counter"


@pytest.mark.parametrize(("players", "variant", "seat"), [(3, "standard", 1), (2, "dummy", 0)])
def test_a_card_counting_bot_asked_again_makes_every_recorded_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, players: int, variant: str, seat: int
) -> None:
    """The act is self-sufficient: a fresh process of a deterministic card counter, asked
    at each of its recorded decisions, counts what it counted then (its debug) and plays
    what it played then."""
    monkeypatch.chdir(tmp_path)
    counter = BotSpec(name="counter", argv=(sys.executable, "bot.py"), cwd=COUNTER)
    others = [bot_spec(name=f"other{i}") for i in range(players)]
    specs = [counter if i == seat else others[i] for i in range(players)]
    game = tmp_path / "game.json.gz"
    replay = record_game(specs, GameConfig(players, variant), seed=8)
    write_replay(game, replay)
    decisions = [(t.round, t.turn, a) for t in replay.turns for a in t.actions if a.seat == seat and a.status == "ok"]
    assert len(decisions) >= 3 * (GameConfig(players, variant).hand_size - 2)
    for rnd, turn, recorded in decisions:
        result = ask(game, COUNTER, "--seat", str(seat), "--turn", f"{rnd}.{turn}", "--json")
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert report["answer"]["debug"] == report["recorded"]["debug"] == recorded.debug, (rnd, turn)
        assert report["same_as_recorded"] is True, (rnd, turn)
    assert any(d.debug["known"] for _, _, d in decisions)  # it did follow hands it had passed on
