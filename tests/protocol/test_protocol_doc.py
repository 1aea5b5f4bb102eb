"""protocol/PROTOCOL.md and protocol/REPLAY.md agree with the code.

PROTOCOL.md: every JSON example is a complete, valid message of the direction it
claims, the examples cover every message and event type, every field of every
message is documented, the annotated game is what the real referee sends
(re-captured here with tests/bench/tools/capture_exchange.py), and the minimal bot in the doc
plays clean games. REPLAY.md: every field is documented, its examples are real
replay data, and its Python reader runs on a real replay."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest

import protocol
from protocol import EVENT_TYPES, REPLY_TYPES, REQUEST_TYPES, decode_reply, decode_request
from protocol import messages as messages_module

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "protocol" / "PROTOCOL.md"
TEXT = DOC.read_text(encoding="utf-8")
REPLAY_DOC = ROOT / "protocol" / "REPLAY.md"
REPLAY_TEXT = REPLAY_DOC.read_text(encoding="utf-8")

TO_BOT = "referee → bot"
TO_REFEREE = "bot → referee"


@dataclass(frozen=True)
class Block:
    direction: str  # TO_BOT or TO_REFEREE
    body: str
    section: str  # the "## " heading it sits under
    line: int  # 1-based line of the opening fence
    before: str = ""  # the direction line: it says which lists are shortened

    def __str__(self) -> str:
        return f"PROTOCOL.md line {self.line} ({self.section})"


def _blocks(lang: str, text: str = TEXT) -> list[tuple[str, str, int, str]]:
    """(body, section, fence line, the last non-blank line before the fence) per block."""
    out = []
    lines = text.splitlines()
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        if line.strip().startswith("```"):
            tag = line.strip()[3:].strip()
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            if tag == lang:
                before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
                out.append(("\n".join(lines[i + 1 : end]), section, i + 1, before))
            i = end + 1
            continue
        i += 1
    return out


def json_blocks() -> list[Block]:
    blocks = []
    for body, section, line, before in _blocks("json"):
        has_to_bot, has_to_referee = TO_BOT in before, TO_REFEREE in before
        assert has_to_bot != has_to_referee, (
            f"PROTOCOL.md line {line}: the line before a ```json block must say its direction, "
            f"'{TO_BOT}' or '{TO_REFEREE}'; got {before!r}"
        )
        blocks.append(Block(TO_BOT if has_to_bot else TO_REFEREE, body, section, line, before))
    return blocks


BLOCKS = json_blocks()


def decode(block: Block) -> Any:
    try:
        return (decode_request if block.direction == TO_BOT else decode_reply)(block.body)
    except protocol.ProtocolDecodeError as exc:
        pytest.fail(f"{block}: not a valid {block.direction} message: {exc}")


def test_every_json_block_is_a_valid_message_of_its_direction() -> None:
    assert len(BLOCKS) >= 12, f"only {len(BLOCKS)} ```json examples"
    for block in BLOCKS:
        decode(block)


def test_json_blocks_hold_one_message_and_no_unknown_field() -> None:
    """A typo in a field name would be silently ignored by the decoder (unknown fields
    are allowed): re-encoding must give back exactly the example."""
    for block in BLOCKS:
        raw = json.loads(block.body)
        assert isinstance(raw, dict), f"{block}: one JSON object per block"
        assert msgspec.to_builtins(decode(block)) == raw, f"{block}: unknown, misspelt or extra fields"


def test_examples_cover_every_message_and_event_type() -> None:
    seen = {type(decode(b)) for b in BLOCKS}
    missing = [t.__name__ for t in (*REQUEST_TYPES, *REPLY_TYPES) if t not in seen]
    assert not missing, f"no example of {missing}"
    events = {type(e) for b in BLOCKS for e in getattr(decode(b), "events", [])}
    missing = [t.__name__ for t in EVENT_TYPES if t not in events]
    assert not missing, f"no example of the events {missing}"
    acts = [decode(b) for b in BLOCKS if isinstance(decode(b), protocol.Act)]
    assert any(a.dummy for a in acts), "no example of the dummy controller's act"
    actions = [decode(b) for b in BLOCKS if isinstance(decode(b), protocol.Action)]
    assert any(len(a.cards) == 2 for a in actions), "no example of a chopsticks action"
    assert any(a.last_action and a.last_action.status != "ok" for a in acts), "no example of a fault"


def _structs() -> list[type[msgspec.Struct]]:
    return [
        obj
        for obj in vars(messages_module).values()
        if isinstance(obj, type) and issubclass(obj, msgspec.Struct) and obj.__module__ == messages_module.__name__
    ]


def test_every_field_of_every_message_struct_is_documented() -> None:
    structs = _structs()
    assert len(structs) >= 20
    missing = sorted(
        f"{s.__name__}.{name}"
        for s in structs
        for name in s.__struct_fields__
        if f"`{name}`" not in TEXT
    )
    assert not missing, f"fields never mentioned (as `name`) in PROTOCOL.md: {missing}"
    tags = [str(s.__struct_config__.tag) for s in structs if not s.__name__.startswith("_") and s.__struct_config__.tag]
    assert not [t for t in tags if f"`{t}`" not in TEXT], "every message and event type is named"


@pytest.mark.parametrize("doc", [DOC, REPLAY_DOC], ids=lambda p: p.name)
def test_no_machine_paths(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    for marker in ("/work/", "/home/", "/tmp/", "/Users/", "C:\\"):
        assert marker not in text, f"{doc.name} mentions a local path ({marker})"


# -- the examples are what the real referee sends -----------------------------------------


def _capture_module() -> Any:
    spec = importlib.util.spec_from_file_location("capture_exchange", ROOT / "tests" / "bench" / "tools" / "capture_exchange.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _normal(value: Any) -> Any:
    """A message without what differs from run to run or release to release."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items() if k not in ("elapsed_ms", "arena_version")}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _is_subsequence(short: list[Any], long: list[Any]) -> bool:
    it = iter(long)
    return all(any(x == y for y in it) for x in short)


#: The lists an example may shorten (saying so on its direction line).
SHORTENED = ("legal", "history", "hands_seen")


def _matches(doc: dict[str, Any], real: dict[str, Any], note: str = "") -> bool:
    """Equal, except that the doc may shorten `legal`, `history` and `hands_seen` when
    its direction line (``note``) says so, e.g. "line 9, legal shortened"."""
    if doc.keys() != real.keys():
        return False
    shortened = re.search(r", ([\w ]+) shortened$", note)
    said = shortened.group(1).split(" and ") if shortened else []
    for key, value in doc.items():
        if key in SHORTENED and key in said and value != real[key]:
            if not (len(value) < len(real[key]) and _is_subsequence(value, real[key])):
                return False
        elif value != real[key]:
            return False
    return True


@pytest.fixture(scope="module")
def games() -> dict[str, tuple[Any, list[tuple[str, dict[str, Any]]]]]:
    """The two games of the docs, played again: the record and seat 0's transcript."""
    cap = _capture_module()
    out = {}
    for name, seed, variant in (("standard", cap.DEFAULT_SEED, "standard"), ("dummy", cap.DUMMY_SEED, "dummy")):
        record, entries = cap.capture(seed, variant)
        assert record.status == "complete", record.void_reason
        transcript = [
            (TO_BOT if e["dir"] == "referee->bot" else TO_REFEREE, _normal(json.loads(e["line"]))) for e in entries
        ]
        out[name] = (record, transcript)
    return out


@pytest.fixture(scope="module")
def captures(games: dict[str, Any]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    return {name: transcript for name, (_, transcript) in games.items()}


def test_every_example_is_a_line_the_real_referee_exchanged(captures: dict[str, Any]) -> None:
    """The examples come from tests/bench/tools/capture_exchange.py; re-run it if this fails."""
    positions = []
    for block in BLOCKS:
        transcript = captures["dummy" if "dummy variant" in block.section else "standard"]
        doc = _normal(json.loads(block.body))
        found = [i for i, (d, real) in enumerate(transcript) if d == block.direction and _matches(doc, real, block.before)]
        assert found, f"{block}: not a message of the captured game (re-capture with tests/bench/tools/capture_exchange.py)"
        if "annotated game" in block.section:
            positions.append(found[0])
    assert positions == sorted(positions), "the annotated game is shown in the order it was played"
    assert len(positions) >= 15


def test_the_annotated_game_ends_with_game_over_ack_and_shutdown(captures: dict[str, Any]) -> None:
    tail = [b for b in BLOCKS if "annotated game" in b.section][-3:]
    assert [json.loads(b.body)["type"] for b in tail] == ["game_over", "ack", "shutdown"]
    assert captures["standard"][-1][1]["type"] == "shutdown"


# -- the minimal bot of the doc works ---------------------------------------------------


def _minimal_bot_source() -> str:
    blocks = [body for body, section, _, _ in _blocks("python") if "minimal bot" in section]
    assert len(blocks) == 1, "one ```python block in the minimal bot's section"
    source = blocks[0]
    assert len(source.splitlines()) <= 40, "the minimal bot stays about 30 lines"
    return source


@pytest.mark.parametrize("variant", ["standard", "dummy"])
def test_the_minimal_bot_plays_a_clean_game(tmp_path: Path, variant: str) -> None:
    import trio

    from arena.bots import BotSpec
    from arena.engine import GameConfig, Variant
    from arena.game.players import open_pool
    from arena.game.referee import play_game

    (tmp_path / "main.py").write_text(_minimal_bot_source(), encoding="utf-8")
    testbot = ROOT / "tests" / "data" / "bots" / "testbot.py"

    async def main() -> Any:
        async with open_pool() as pool:
            players = [
                pool.player(BotSpec(name="minimal", argv=(sys.executable, "main.py"), cwd=tmp_path)),
                pool.player(BotSpec(name="testbot", argv=(sys.executable, str(testbot), "--mode", "ok"), cwd=ROOT)),
            ]
            first = await play_game(players, GameConfig(2, Variant(variant)), 11)
            second = await play_game(players, GameConfig(2, Variant(variant)), 12)  # the same process again
            return first, second, players[0].starts

    first, second, starts = trio.run(main)
    for record in (first, second):
        assert record.status == "complete", record.void_reason
        assert not any(record.faults[0].values()), record.replay.faults
        assert not record.autopilot[0]
    assert starts == 1, "one process plays game after game"
    assert re.search(r"\bgame \w+: I am seat 0 of", first.replay.stderr[0]), "stderr is kept in the replay"


# -- REPLAY.md ------------------------------------------------------------------------


def test_every_replay_field_is_documented() -> None:
    from arena.game import replay as replay_module

    structs = [
        replay_module.Replay, replay_module.SeatInfo, replay_module.TurnRecord, replay_module.ActionRecord,
        replay_module.FaultRecord, replay_module.RoundSummary, replay_module.ResultSummary, replay_module.SeatUsage,
    ]
    missing = sorted(
        f"{s.__name__}.{name}" for s in structs for name in s.__struct_fields__ if f"`{name}`" not in REPLAY_TEXT
    )
    assert not missing, f"fields never mentioned (as `name`) in REPLAY.md: {missing}"
    for key in ("hello_ms", "turn_ms", "bank_ms", "time_scale", "no_timeout", "started", "duration_s", "mean_ms", "max_ms"):
        assert f"`{key}`" in REPLAY_TEXT, key
    for status in ("ok", "timeout", "illegal", "malformed", "protocol", "crash", "autopilot", "auto"):
        assert f'`"{status}"`' in REPLAY_TEXT, status


def _replay_builtins(record: Any) -> dict[str, Any]:
    return msgspec.to_builtins(record.replay)


def _normal_replay(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _normal_replay(v)
            for k, v in value.items()
            if k not in ("elapsed_ms", "bank_ms", "arena_version", "timing", "usage")  # measured: differ per run
        }
    if isinstance(value, list):
        return [_normal_replay(v) for v in value]
    return value


def test_replay_examples_are_real_replay_data(games: dict[str, Any]) -> None:
    from arena.game.replay import Replay, TurnRecord

    blocks = [body for body, _, _, _ in _blocks("json", REPLAY_TEXT)]
    assert len(blocks) == 2
    whole, dummy_turns = (json.loads(b) for b in blocks)
    msgspec.json.decode(blocks[0], type=Replay)  # (its events are kept as raw JSON: decoded from text only)
    msgspec.convert(dummy_turns, list[TurnRecord])

    real = _normal_replay(json.loads(msgspec.json.encode(games["standard"][0].replay)))
    doc = _normal_replay(whole)
    assert doc.keys() == real.keys(), "the example shows every top-level field"
    for key, value in doc.items():
        if key in ("turns", "events", "rounds"):  # shortened, as the doc says
            assert value and _is_subsequence(value, real[key]) and len(value) < len(real[key]), key
        else:
            assert value == real[key], key
    real_dummy = _normal_replay(json.loads(msgspec.json.encode(games["dummy"][0].replay)))["turns"]
    assert _is_subsequence(_normal_replay(dummy_turns), real_dummy)


def test_the_replay_reader_of_the_doc_runs_on_a_real_replay(games: dict[str, Any], tmp_path: Path) -> None:
    import subprocess

    from arena.game.replay import write_replay

    sources = [body for body, section, _, _ in _blocks("python", REPLAY_TEXT)]
    assert len(sources) == 1
    script = tmp_path / "read.py"
    script.write_text(sources[0], encoding="utf-8")
    for name in ("standard", "dummy"):
        record = games[name][0]
        path = tmp_path / f"{record.game_id}.json.gz"
        write_replay(path, record.replay)
        out = subprocess.run([sys.executable, str(script), str(path)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert f"game {record.game_id}" in out.stdout
        assert "round 3:" in out.stdout and "final:" in out.stdout
        assert "round 1 turn 3, seat 0: illegal" in out.stdout
