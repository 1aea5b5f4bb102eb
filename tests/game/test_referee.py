"""The referee with real bot subprocesses: full games, every fault, hidden information."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest
import trio

from arena.bots import BotSpec
from arena.engine import GameConfig
from arena.game.players import TimeSettings, open_pool
from arena.game.referee import play_game
from arena.game.record import GameRecord, record_from_replay
from arena.game.replay import encode_replay, read_replay, write_replay
from arena.game.verify import verify_replay

TESTBOT = Path(__file__).parents[1] / "data" / "bots" / "testbot.py"
FAST = TimeSettings(hello_ms=5_000, turn_ms=400, bank_ms=200)


def spec(*args: str, name: str = "testbot", marker: str = "") -> BotSpec:
    argv = (sys.executable, str(TESTBOT), "--name", marker or name, *args)
    return BotSpec(name=name, argv=argv, cwd=TESTBOT.parent)


def live_processes(marker: str) -> list[int]:
    """Pids of processes whose command line carries ``marker`` (zombies included)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def run_game(specs: list[BotSpec], config: GameConfig, seed: int = 1, ts: TimeSettings = FAST) -> GameRecord:
    async def main() -> GameRecord:
        async with open_pool() as pool:
            players = [pool.player(s) for s in specs]
            return await play_game(players, config, seed, time_settings=ts)

    return trio.run(main)


def faulty_game(mode: str, *extra: str, at: str = "1.2", players: int = 2, variant: str = "standard") -> tuple[GameRecord, str]:
    marker = f"mark-{uuid.uuid4().hex[:10]}"
    specs = [spec(name="good", marker=marker)] + [
        spec("--mode", mode, "--at", at, *extra, name="bad", marker=marker) if i == 1 else spec(name=f"good{i}", marker=marker)
        for i in range(1, players)
    ]
    record = run_game(specs, GameConfig(players, variant))
    assert record.status == "complete", record.void_reason
    verify_replay(record.replay)
    assert live_processes(marker) == [], "a bot process outlived the game"
    return record, marker


@pytest.mark.parametrize(("players", "variant"), [(2, "standard"), (3, "alternate"), (4, "standard"), (5, "alternate"), (2, "dummy")])
def test_full_games_verify_and_leave_no_process(players: int, variant: str, tmp_path: Path) -> None:
    marker = f"mark-{uuid.uuid4().hex[:10]}"
    specs = [spec(name=f"b{i}", marker=marker) for i in range(players)]
    record = run_game(specs, GameConfig(players, variant), seed=11)
    assert record.status == "complete"
    assert all(sum(f.values()) == 0 for f in record.faults)
    path = tmp_path / "game.json.gz"
    write_replay(path, record.replay)
    replay = read_replay(path)
    verify_replay(replay)
    assert replay.players == GameConfig(players, variant).seats
    assert len(replay.rounds) == 3 and replay.result is not None
    assert live_processes(marker) == []


def test_same_seed_same_game() -> None:
    specs = [spec(name="a"), spec(name="b"), spec(name="c")]
    one = run_game(specs, GameConfig(3), seed=5)
    two = run_game(specs, GameConfig(3), seed=5)
    def decided(record: GameRecord) -> list[object]:
        return [(t.hands, [(a.seat, a.cards, a.dummy_card, a.status) for a in t.actions]) for t in record.replay.turns]

    assert decided(one) == decided(two)
    assert one.replay.events == two.replay.events
    assert one.scores == two.scores and one.ranks == two.ranks


def only_fault(record: GameRecord) -> tuple[int, int, int, str, str]:
    faults = [f for f in record.replay.faults if f.kind != "autopilot"]
    assert len(faults) >= 1, record.replay.faults
    f = faults[0]
    return f.seat, f.round, f.turn, f.kind, f.message


def next_last_action(log: Path, round_: int, turn: int) -> dict:
    for line in log.read_text().splitlines():
        msg = json.loads(line)
        if msg["type"] == "act" and (msg["round"], msg["turn"]) > (round_, turn):
            return msg["last_action"]
    raise AssertionError("no later act")


def test_never_answers_hello_plays_on_autopilot_and_ranks_last() -> None:
    record, _ = faulty_game("hello_silent")
    seat, rnd, turn, kind, message = only_fault(record)
    assert (seat, rnd, turn, kind) == (1, 0, 0, "timeout")
    assert "hello" in message
    assert record.autopilot[1] and not record.autopilot[0]
    assert record.ranks[1] == 2 and record.ranks[0] == 1


def test_late_reply_is_a_timeout_and_never_counts_for_the_next_request(tmp_path: Path) -> None:
    log = tmp_path / "late.log"
    record, _ = faulty_game("late", "--sleep", "0.75", "--log", str(log))
    assert only_fault(record)[:4] == (1, 1, 2, "timeout")
    faults = [f for f in record.replay.faults if f.seat == 1]
    assert len(faults) == 1, faults  # the stale answer was discarded, not a protocol fault
    last = next_last_action(log, 1, 2)
    assert last["status"] == "timeout" and "seeded random legal play" in last["message"]
    assert not record.autopilot[1]


def test_sleeping_forever_strikes_out_and_the_game_finishes() -> None:
    record, _ = faulty_game("sleep")
    kinds = [(f.round, f.turn, f.kind) for f in record.replay.faults if f.seat == 1]
    assert kinds[:3] == [(1, 2, "timeout"), (1, 3, "timeout"), (1, 4, "timeout")]
    assert kinds[3] == (1, 4, "autopilot")
    assert record.autopilot[1] and record.ranks[1] == 2


@pytest.mark.parametrize(
    ("mode", "kind", "words"),
    [
        ("badjson", "malformed", "JSON"),
        ("wrongshape", "malformed", "$.cards"),
        ("illegal", "illegal", "999"),
        ("otherseat", "illegal", "not in this seat's hand"),
        ("wrongre", "protocol", "re="),
        ("longline", "malformed", "longer than"),
    ],
)
def test_bad_replies_are_attributed_to_seat_turn_and_kind(mode: str, kind: str, words: str, tmp_path: Path) -> None:
    log = tmp_path / "bot.log"
    record, _ = faulty_game(mode, "--log", str(log), at="1.3")
    seat, rnd, turn, got_kind, message = only_fault(record)
    assert (seat, rnd, turn, got_kind) == (1, 1, 3, kind), message
    assert words in message
    assert record.faults[1][kind] == 1 and sum(record.faults[0].values()) == 0
    last = next_last_action(log, 1, 3)
    assert last["status"] == kind and words.lower()[:3] in last["message"].lower()
    action = next(a for t in record.replay.turns if (t.round, t.turn) == (1, 3) for a in t.actions if a.seat == 1)
    assert action.status == kind


def test_exit_mid_game_is_a_crash_then_autopilot() -> None:
    record, _ = faulty_game("exit", at="2.1", players=3)
    seat, rnd, turn, kind, message = only_fault(record)
    assert (seat, rnd, turn, kind) == (1, 2, 1, "crash")
    assert "exit" in message.lower() or "status 3" in message
    assert record.autopilot == [False, True, False]
    assert record.ranks[1] == 3


def test_a_second_answer_to_one_request_is_discarded() -> None:
    record, _ = faulty_game("stale")
    assert all(sum(f.values()) == 0 for f in record.faults), record.replay.faults


def test_dummy_variant_faults_use_fallbacks_with_the_dummy_card() -> None:
    record, _ = faulty_game("illegal", variant="dummy", at="1.1")
    assert only_fault(record)[:4] == (1, 1, 1, "illegal") or only_fault(record)[3] == "illegal"


def test_a_bot_that_cannot_start_is_a_crash_not_a_stall() -> None:
    missing = BotSpec(name="ghost", argv=("/nonexistent/bot",), cwd=TESTBOT.parent)
    record = run_game([spec(name="good"), missing], GameConfig(2))
    assert record.status == "complete"
    assert record.faults[1]["crash"] == 1 and record.autopilot[1]
    assert "ghost" in record.replay.faults[0].message or "nonexistent" in record.replay.faults[0].message


def test_no_act_reveals_another_seats_hand(tmp_path: Path) -> None:
    """PROTOCOL.md: no act ever contains another seat's current hand or this turn's choices
    (but for the cards this seat saw itself: the hands it held earlier in the round)."""
    for players, variant in [(4, "standard"), (3, "alternate"), (2, "dummy")]:
        logs = [tmp_path / f"{variant}-{players}-{i}.log" for i in range(players)]
        specs = [spec("--log", str(log), name=f"b{i}") for i, log in enumerate(logs)]
        record = run_game(specs, GameConfig(players, variant), seed=23)
        turns = {(t.round, t.turn): t for t in record.replay.turns}
        returned = {p["chopsticks_returned"] for e in record.replay.event_dicts() if e["type"] == "reveal" for p in e["plays"]}
        checked = 0
        for seat, log in enumerate(logs):
            for line in log.read_text().splitlines():
                msg = json.loads(line)
                if msg["type"] != "act":
                    continue
                t = turns[(msg["round"], msg["turn"])]
                # What this seat held earlier this round it has seen (hands_seen): allowed.
                held = {c for k in range(1, msg["turn"]) for c in turns[(msg["round"], k)].hands[seat]}
                others = {c for s, hand in enumerate(t.hands) if s != seat for c in hand} - returned - held
                text = json.dumps(msg)
                ids = {int(tok) for tok in _numbers(text)}
                assert not (others & ids & _all_card_ids_in(msg)), (seat, msg["round"], msg["turn"])
                checked += 1
        assert checked > 0


def _numbers(text: str) -> list[str]:
    import re

    return re.findall(r"\b\d+\b", text)


def _all_card_ids_in(msg: dict) -> set[int]:
    """Every value of an id-like field in the message, however deeply nested."""
    found: set[int] = set()

    def walk(x: object, key: str = "") -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, k)
        elif isinstance(x, list):
            for v in x:
                walk(v, key)
        elif isinstance(x, int) and key in {"id", "cards", "dummy_card", "nigiri", "wasabi", "chopsticks_returned"}:
            found.add(x)

    walk({k: v for k, v in msg.items() if k not in {"id"}})
    return found


def test_referee_failure_voids_the_game_and_blames_nobody(monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.game.referee as referee

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated referee bug")

    monkeypatch.setattr(referee, "apply_turn", broken)
    record = run_game([spec(name="a"), spec(name="b")], GameConfig(2))
    assert record.status == "void"
    assert "simulated referee bug" in record.void_reason
    assert all(sum(f.values()) == 0 for f in record.faults)


def test_processes_are_reused_across_games_and_restarted_after_a_crash() -> None:
    async def main() -> tuple[list[int], list[int]]:
        async with open_pool() as pool:
            good = pool.player(spec(name="good"))
            bad = pool.player(spec("--mode", "exit", "--at", "1.1", name="bad"))
            for seed in range(3):
                await play_game([good, bad], GameConfig(2), seed, time_settings=FAST)
            return [good.starts], [bad.starts]

    good_starts, bad_starts = trio.run(main)
    assert good_starts == [1]  # one process for three games
    assert bad_starts == [3]  # restarted before each game after its crash


def test_stderr_flood_is_capped_and_never_blocks() -> None:
    record, _ = faulty_game("chatty")
    assert record.status == "complete"
    assert 0 < len(record.replay.stderr[1]) <= 20_000


def test_an_untimed_player_never_times_out_whatever_the_time_settings(tmp_path: Path) -> None:
    """PlayerPool.player(untimed=True), e.g. a human seat: no deadline at hello,
    game_start, act or game_over, and its acts say so (time_ms 0)."""
    # Real budgets of 1 ms (10 ms for game_over): a bot sleeping 20 ms before every reply
    # misses each one when timed.
    tight = TimeSettings(hello_ms=100, turn_ms=100, bank_ms=0, time_scale=0.01)
    logs = [tmp_path / "timed.log", tmp_path / "untimed.log"]

    async def main() -> GameRecord:
        async with open_pool() as pool:
            timed = pool.player(spec("--mode", "slow", "--sleep", "0.02", "--log", str(logs[0]), name="timed"))
            untimed = pool.player(
                spec("--mode", "slow", "--sleep", "0.02", "--log", str(logs[1]), name="untimed"), untimed=True
            )
            assert untimed.untimed and not timed.untimed
            return await play_game([timed, untimed], GameConfig(2), 3, time_settings=tight)

    record = trio.run(main)
    assert record.status == "complete", record.void_reason
    assert record.faults[0]["timeout"] == 1 and record.autopilot[0]  # the settings do bite
    assert sum(record.faults[1].values()) == 0 and not record.autopilot[1], record.replay.faults
    messages = [json.loads(line) for line in logs[1].read_text().splitlines()]
    acts = [m for m in messages if m["type"] == "act"]
    answered = [a for t in record.replay.turns for a in t.actions if a.seat == 1 and a.status == "ok"]
    assert len(acts) == len(answered) > 0
    assert all(a["time_ms"] == 0 and a["banks_ms"][1] == 0 for a in acts)
    assert messages[-1]["type"] in {"game_over", "shutdown"}
    assert any(m["type"] == "game_over" for m in messages)
    verify_replay(record.replay)


def test_an_error_in_the_pool_block_arrives_as_itself() -> None:
    """trio >= 0.25 nurseries wrap an error of their block in a group: open_pool unwraps it."""

    async def main() -> None:
        async with open_pool() as pool:
            await play_game([pool.player(spec(name="a")), pool.player(spec(name="b"))], GameConfig(2), 1, time_settings=FAST)
            raise LookupError("raised in the block")

    with pytest.raises(LookupError, match="raised in the block"):
        trio.run(main)


@pytest.mark.parametrize(
    ("mode", "at", "players", "variant"),
    [("sleep", "1.2", 2, "standard"), ("exit", "2.1", 3, "standard"), ("illegal", "1.1", 2, "dummy"), ("badjson", "1.3", 4, "alternate")],
)
def test_a_record_rebuilt_from_its_replay_file_equals_the_played_one(
    mode: str, at: str, players: int, variant: str, tmp_path: Path
) -> None:
    """What a resumed run records for a game whose replay was written but whose row was
    not (a kill between the two) is what the game itself returned, faults and autopilot
    included."""
    record, _ = faulty_game(mode, at=at, players=players, variant=variant)
    assert any(sum(f.values()) for f in record.faults)
    path = tmp_path / "game.json.gz"
    write_replay(path, record.replay)
    rebuilt = record_from_replay(read_replay(path))
    for name in GameRecord.__dataclass_fields__:
        if name == "duration_s":
            assert rebuilt.duration_s == pytest.approx(record.duration_s, abs=0.001)
        elif name != "replay":
            assert getattr(rebuilt, name) == getattr(record, name), name
    assert encode_replay(rebuilt.replay) == encode_replay(record.replay)
    record.replay.status, record.replay.result = "void", None
    with pytest.raises(ValueError, match="not complete"):
        record_from_replay(record.replay)


def test_a_bot_that_fails_to_start_leaves_its_stderr_in_the_replay(tmp_path: Path) -> None:
    """Why a bot could not start is what a user looks for: its last words on stderr stay in
    the game's record even though its process is gone."""
    crasher = tmp_path / "crasher.py"
    crasher.write_text("import sys\nsys.stderr.write('missing model file weights.bin\\n')\nsys.exit(1)\n")
    bad = BotSpec(name="crasher", argv=(sys.executable, str(crasher)), cwd=tmp_path)
    record = run_game([spec(name="good"), bad], GameConfig(2))
    assert record.status == "complete" and record.autopilot == [False, True]
    assert "missing model file weights.bin" in record.replay.stderr[1]
    assert record.replay.stderr[0] == ""


def test_a_referee_failure_after_the_result_keeps_the_game_complete_and_verifiable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure while telling the bots game_over (the referee's, not a bot's) comes after
    every play and the result: the game stands, and its replay verifies as complete."""
    import arena.game.referee as referee

    def broken(*args: object, **kwargs: object) -> object:
        raise OSError("the machine failed while telling game_over")

    monkeypatch.setattr(referee, "GameOver", broken)
    rec = run_game([spec(), spec()], GameConfig(2))
    assert rec.status == "complete" and rec.replay.result is not None and not rec.replay.void_reason
    path = tmp_path / "g.json.gz"
    write_replay(path, rec.replay)
    verify_replay(read_replay(path))
