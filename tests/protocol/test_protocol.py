"""The wire contract: every message round-trips, bad lines get errors a bot author
can act on, the schema covers every message, and the engine's events and views
fit the messages exactly."""

from __future__ import annotations

import ast
import contextlib
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import protocol
from arena.engine import Card as EngineCard
from arena.engine import GameConfig, apply_turn, events, legal_plays, new_game
from arena.engine import TableauCard as EngineTableauCard
from protocol import (
    EVENT_TYPES,
    EXPECTED_REPLY,
    REPLY_TYPES,
    REQUEST_TYPES,
    Ack,
    Act,
    Action,
    Card,
    Event,
    GameEnd,
    GameOver,
    GameStart,
    Hello,
    HelloReply,
    LastAction,
    LastCard,
    Limits,
    Play,
    ProtocolDecodeError,
    Ready,
    Reveal,
    RevealedPlay,
    RoundEnd,
    RoundStart,
    Rules,
    SeatCard,
    Shutdown,
    TableauCard,
    TimeControl,
    WasabiPlacement,
    decode_reply,
    decode_request,
    encode_line,
    encode_line_into,
    json_schema,
    play_from_ids,
    schema_json,
)
from protocol.schema import field_docs

PROTOCOL_DIR = Path(protocol.__file__).parent


def tag(cls: type[msgspec.Struct]) -> str:
    return str(cls.__struct_config__.tag)


# -- sample messages -----------------------------------------------------------------

SAMPLE_EVENTS: list[Any] = [
    RoundStart(round=1, direction="left", hand_size=9),
    Reveal(
        round=1,
        turn=2,
        plays=[
            RevealedPlay(seat=0, cards=[Card(id=7, card="wasabi"), Card(id=3, card="squid_nigiri")], chopsticks_returned=44),
            RevealedPlay(seat=1, cards=[Card(id=9, card="maki2")], chopsticks_returned=None),
            RevealedPlay(seat=2, cards=[Card(id=1, card="pudding")], chopsticks_returned=None),
        ],
        wasabi=[WasabiPlacement(seat=0, nigiri=3, wasabi=7)],
        controller=1,
    ),
    LastCard(
        round=1,
        turn=8,
        cards=[SeatCard(seat=0, id=5, card="egg_nigiri"), SeatCard(seat=1, id=6, card="tempura")],
        wasabi=[WasabiPlacement(seat=0, nigiri=5, wasabi=17)],
    ),
    RoundEnd(round=1, points=[12, 7], maki_symbols=[3, 0], maki_points=[6, 0], scores=[12, 7]),
    GameEnd(pudding_points=[6, 0], scores=[40, 31], puddings=[2, 0], ranks=[1, 2]),
]

LAST_OK = LastAction(status="ok", cards=[3, 7], dummy_card=None, message="", elapsed_ms=12.5)
LAST_TIMEOUT = LastAction(status="timeout", cards=[4], dummy_card=11, message="no answer in 1000 ms", elapsed_ms=1000.0)
LIMITS = Limits(max_line_bytes=65536, hello_ms=10000, turn_ms=1000, bank_ms=10000)

SAMPLE_REQUESTS: list[Any] = [
    Hello(id=1, protocol="sushigo-bot", versions=[1], rules_version="sushigo-rules/1.0", arena_version="0.1.0", limits=LIMITS),
    GameStart(
        id=2,
        game_id="g-0001",
        seat=1,
        players=2,
        seats=3,
        names=["alice", "bob", "dummy"],
        rules=Rules(
            rules_version="sushigo-rules/1.0",
            variant="dummy",
            hand_size=9,
            rounds=3,
            directions=["left", "left", "left"],
            deck={"tempura": 14, "wasabi": 6},
        ),
        time=TimeControl(turn_ms=1000, bank_ms=10000),
        seed=123456789,
    ),
    Act(
        id=3,
        game_id="g-0001",
        seat=1,
        round=1,
        turn=2,
        direction="left",
        time_ms=11000,
        hand=[Card(id=4, card="salmon_nigiri"), Card(id=11, card="chopsticks")],
        legal=[Play(cards=[4], dummy_card=11), Play(cards=[11], dummy_card=4)],
        dummy=True,
        controller=1,
        tableaus=[[TableauCard(id=7, card="wasabi"), TableauCard(id=3, card="squid_nigiri", wasabi=7)], [], []],
        puddings=[0, 1, 0],
        scores=[0, 0, 0],
        hand_sizes=[1, 2, 7],
        banks_ms=[10000, 10000, 0],
        last_action=LAST_OK,
        events=SAMPLE_EVENTS[:2],
    ),
    Act(
        id=4,
        game_id="g-0002",
        seat=0,
        round=2,
        turn=1,
        direction="right",
        time_ms=1000,
        hand=[Card(id=4, card="salmon_nigiri")],
        legal=[Play(cards=[4])],
        tableaus=[[], []],
        puddings=[0, 0],
        scores=[3, 4],
        hand_sizes=[1, 1],
        banks_ms=[0, 5],
        last_action=None,
        events=[],
    ),
    GameOver(
        id=5,
        game_id="g-0001",
        scores=[40, 31, 12],
        puddings=[2, 0, 1],
        ranks=[1, 2, 3],
        faults={"timeout": 1},
        reason="complete",
        last_action=LAST_TIMEOUT,
        events=SAMPLE_EVENTS[2:],
    ),
    Shutdown(id=6, reason="tournament over"),
    Shutdown(id=7),
]

SAMPLE_REPLIES: list[Any] = [
    HelloReply(re=1, version=1, name="greedy", bot_version="1.2", capabilities=["debug"]),
    HelloReply(re=1, version=1, name="minimal"),
    Ready(re=2),
    Action(re=3, cards=[4], dummy_card=11, debug={"eval": [0.5, -1], "note": "take the squid"}),
    Action(re=4, cards=[9, 2]),
    Ack(re=5),
]


# -- round trips ---------------------------------------------------------------------


def test_samples_cover_every_message_and_event() -> None:
    assert {type(m) for m in SAMPLE_REQUESTS} == set(REQUEST_TYPES)
    assert {type(m) for m in SAMPLE_REPLIES} == set(REPLY_TYPES)
    assert {type(e) for e in SAMPLE_EVENTS} == set(EVENT_TYPES)


@pytest.mark.parametrize("msg", SAMPLE_REQUESTS, ids=lambda m: tag(type(m)))
def test_every_request_round_trips(msg: Any) -> None:
    line = encode_line(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode_request(line) == msg
    assert json.loads(line)["type"] == tag(type(msg))


@pytest.mark.parametrize("msg", SAMPLE_REPLIES, ids=lambda m: tag(type(m)))
def test_every_reply_round_trips(msg: Any) -> None:
    line = encode_line(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode_reply(line) == msg
    assert decode_reply(line.rstrip(b"\n") + b"\r\n") == msg  # \r\n is accepted too


def test_encode_line_into_reuses_a_buffer() -> None:
    buffer = bytearray(b"left over from a much longer previous line" * 10)
    for msg in [*SAMPLE_REQUESTS, *SAMPLE_REPLIES]:
        encode_line_into(msg, buffer)
        assert bytes(buffer) == encode_line(msg)


def test_every_field_is_written_except_empty_optionals() -> None:
    act = json.loads(encode_line(SAMPLE_REQUESTS[3]))
    assert act["dummy"] is False and act["controller"] is None and act["last_action"] is None
    assert act["legal"] == [{"cards": [4]}]  # no dummy_card outside the dummy's control
    assert "wasabi" not in json.loads(encode_line(SAMPLE_REQUESTS[2]))["tableaus"][0][0]
    assert json.loads(encode_line(Action(re=4, cards=[9]))) == {"type": "action", "re": 4, "cards": [9]}
    assert json.loads(encode_line(HelloReply(re=1, version=1, name="x"))) == {"type": "hello", "re": 1, "version": 1, "name": "x"}


def test_R15_a_minimal_bot_can_answer_with_a_legal_entry_as_is() -> None:
    act = decode_request(encode_line(SAMPLE_REQUESTS[2]))
    assert isinstance(act, Act) and act.dummy
    for play in act.legal:
        line = json.dumps({"type": "action", "re": act.id, **msgspec.to_builtins(play)}).encode()
        action = decode_reply(line)
        assert isinstance(action, Action)
        assert action.ids(dummy=True) == play.ids(dummy=True) == (*play.cards, play.dummy_card)
        assert play.to_action(act.id) == action


def test_R15_play_ids_round_trip_and_dummy_card_checks() -> None:
    assert play_from_ids((5,), dummy=False) == Play(cards=[5])
    assert play_from_ids((5, 6), dummy=False) == Play(cards=[5, 6])
    assert play_from_ids((5, 6), dummy=True) == Play(cards=[5], dummy_card=6)
    assert play_from_ids([5, 6, 7], dummy=True) == Play(cards=[5, 6], dummy_card=7)
    assert Play(cards=[5, 6], dummy_card=7).ids() == (5, 6, 7)
    with pytest.raises(ValueError, match="dummy's card"):
        play_from_ids((5,), dummy=True)
    with pytest.raises(ValueError, match="must name the dummy's card"):
        Action(re=1, cards=[5, 6]).ids(dummy=True)  # else 6 would silently go to the dummy
    with pytest.raises(ValueError, match="only for the player who controls"):
        Action(re=1, cards=[5], dummy_card=6).ids(dummy=False)


def test_every_request_but_shutdown_expects_a_reply() -> None:
    assert set(EXPECTED_REPLY) == set(REQUEST_TYPES) - {Shutdown}
    assert set(EXPECTED_REPLY.values()) == set(REPLY_TYPES)


# -- decode errors -------------------------------------------------------------------

DECODE_ERRORS = [
    # (line, kind, path, fragments of the message)
    (b"", "empty", None, ["empty line"]),
    (b"  \r\n", "empty", None, ["empty line"]),
    (b'{"type":"action","re":1,"cards":["\xff"]}\n', "utf8", None, ["invalid UTF-8 at byte 34", "\\xff"]),
    (b'{"type":"action","re":1,"cards":[1],"x":"\xc3"}', "utf8", None, ["invalid UTF-8"]),
    (b'{"type":"action","re":1,"cards":[1]', "json", None, ["invalid JSON", "truncated"]),
    (b"{'type': 'action'}", "json", None, ["invalid JSON", "one JSON object per line"]),
    (b'{"type":"action","re":1,"cards":[1]} {"type":"ack"}', "json", None, ["trailing characters"]),
    (b'{"type":"action","re":"x", oops', "json", None, ["invalid JSON"]),
    (b"[1, 2]", "not_object", None, ["expected a JSON object", "got an array"]),
    (b'"action"', "not_object", None, ["got a string"]),
    (b"42", "not_object", None, ["got a number"]),
    (b"null", "not_object", None, ["got null"]),
    (b"true", "not_object", None, ["got a boolean"]),
    (b'{"re":1,"cards":[1]}', "type", None, ["missing `type`", '"hello", "ready", "action", "ack"']),
    (b'{"type":7,"re":1}', "type", "$.type", ["`type` must be a string", "got 7"]),
    (b'{"type":"act","re":1}', "type", "$.type", ['unknown reply type "act"', '"action"']),
    (b'{"type":"action","re":1,"cards":["5"]}', "schema", "$.cards[0]", ['invalid "action" reply at $.cards[0]', "expected `int`, got `str`"]),
    (b'{"type":"action","re":1}', "schema", "$", ['invalid "action" reply', "missing required field `cards`"]),
    (b'{"type":"action","re":1,"cards":7}', "schema", "$.cards", ["expected `array`, got `int`"]),
    (b'{"type":"hello","re":1,"version":1,"name":null}', "schema", "$.name", ['invalid "hello" reply at $.name']),
    (b'{"type":"action","re":1,"cards":[1],"debug":' + b"[" * 50000 + b"]" * 50000 + b"}", "json", None, ["nested too deeply"]),
]


@pytest.mark.parametrize(("line", "kind", "path", "fragments"), DECODE_ERRORS, ids=[f"{case[1]}-{i}" for i, case in enumerate(DECODE_ERRORS)])
def test_decode_reply_names_the_problem(line: bytes, kind: str, path: str | None, fragments: list[str]) -> None:
    with pytest.raises(ProtocolDecodeError) as info:
        decode_reply(line)
    error = info.value
    assert isinstance(error, ValueError)
    assert error.kind == kind
    assert error.path == path
    for fragment in fragments:
        assert fragment in str(error)
    assert "; received: " in str(error)


def test_decode_error_quotes_the_line_cut_to_200_characters() -> None:
    line = b'{"type":"action","re":1,"cards":[1],"pad":"' + b"x" * 1000 + b'","dummy_card":"no"}'
    with pytest.raises(ProtocolDecodeError) as info:
        decode_reply(line)
    assert info.value.path == "$.dummy_card"
    assert info.value.message_type == "action"
    assert info.value.received == line[:200].decode() + f"... ({len(line)} bytes in all)"
    assert len(str(info.value)) < 400


def test_decode_request_errors_name_request_types() -> None:
    with pytest.raises(ProtocolDecodeError, match='unknown request type "action".*"act"') as info:
        decode_request(b'{"type":"action","re":1,"cards":[1]}')
    assert info.value.kind == "type"
    with pytest.raises(ProtocolDecodeError, match=r'invalid "act" request at \$.hand\[0\]: object missing required field `card`'):
        decode_request(b'{"type":"act","id":1,"game_id":"g","seat":0,"round":1,"turn":1,"direction":"left","time_ms":1,"hand":[{"id":1}]}')


def test_decode_accepts_bytearray_memoryview_and_str() -> None:
    line = encode_line(SAMPLE_REPLIES[3])
    for form in (bytearray(line), memoryview(line), line.decode()):
        assert decode_reply(form) == SAMPLE_REPLIES[3]
    with pytest.raises(ProtocolDecodeError) as info:
        decode_reply('{"type":"ack","re":1,"x":"\ud800"}')
    assert info.value.kind == "utf8"


@pytest.mark.parametrize(
    ("line", "path"),
    [
        (b'{"type":"action","re":true,"cards":[1]}', "$.re"),
        (b'{"type":"action","re":1,"cards":[false]}', "$.cards[0]"),
        (b'{"type":"action","re":1,"cards":[1],"dummy_card":true}', "$.dummy_card"),
        (b'{"type":"hello","re":1,"version":true,"name":"b"}', "$.version"),
        (b'{"type":"ack","re":1.0}', "$.re"),
    ],
)
def test_bools_and_floats_are_never_ints(line: bytes, path: str) -> None:
    with pytest.raises(ProtocolDecodeError) as info:
        decode_reply(line)
    assert info.value.kind == "schema"
    assert info.value.path == path
    assert "got `bool`" in str(info.value) or "got `float`" in str(info.value)


def test_bools_are_never_ints_in_requests_either() -> None:
    with pytest.raises(ProtocolDecodeError, match=r"at \$.id: expected `int`, got `bool`"):
        decode_request(b'{"type":"shutdown","id":true}')


def test_unknown_fields_are_ignored_at_any_depth() -> None:
    reply = decode_reply(b'{"type":"action","re":3,"cards":[4],"future":{"x":[1,2]},"z":null}')
    assert reply == Action(re=3, cards=[4])
    act = msgspec.to_builtins(SAMPLE_REQUESTS[2])
    act["new_field"] = 1
    act["hand"][0]["new_field"] = "x"
    act["events"][1]["plays"][0]["new_field"] = [1]
    assert decode_request(json.dumps(act)) == SAMPLE_REQUESTS[2]


def test_optional_fields_may_be_left_out() -> None:
    act = msgspec.to_builtins(SAMPLE_REQUESTS[3])
    del act["dummy"], act["controller"]
    assert decode_request(json.dumps(act)) == SAMPLE_REQUESTS[3]
    assert decode_request(b'{"type":"shutdown","id":9}') == Shutdown(id=9, reason="")
    assert decode_reply(b'{"type":"action","re":1,"cards":[2],"dummy_card":null,"debug":null}') == Action(re=1, cards=[2])


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
FIELDS = st.sampled_from(["re", "cards", "dummy_card", "debug", "version", "name", "capabilities", "bot_version", "id"])
TAGS = st.sampled_from(["hello", "ready", "action", "ack", "act", "game_start", "x", ""])
MESSAGE_LIKE = st.builds(
    lambda tag, fields: json.dumps({"type": tag, **fields}).encode(),
    TAGS | JSON,
    st.dictionaries(FIELDS, JSON | st.lists(st.integers(), max_size=3), max_size=5),
)


@given(st.binary(max_size=300) | MESSAGE_LIKE)
def test_decode_reply_raises_nothing_but_protocol_decode_errors(line: bytes) -> None:
    try:
        reply = decode_reply(line)
    except ProtocolDecodeError as error:
        assert error.kind in {"empty", "utf8", "json", "not_object", "type", "schema"}
        assert len(error.received) <= 260
    else:
        assert isinstance(reply, REPLY_TYPES)
        assert decode_reply(encode_line(reply)) == reply


@given(st.binary(max_size=300) | MESSAGE_LIKE)
def test_decode_request_raises_nothing_but_protocol_decode_errors(line: bytes) -> None:
    with contextlib.suppress(ProtocolDecodeError):
        decode_request(line)


# -- schema --------------------------------------------------------------------------

ALL_STRUCTS = [
    cls
    for cls in vars(protocol.messages).values()
    if isinstance(cls, type) and issubclass(cls, msgspec.Struct) and not cls.__name__.startswith("_")
]


def test_schema_holds_every_message_type() -> None:
    schema = json_schema()
    defs = schema["$defs"]
    requests = {d["properties"]["type"]["enum"][0] for d in defs.values() if "id" in d.get("properties", {}) and "type" in d["properties"]}
    replies = {d["properties"]["type"]["enum"][0] for d in defs.values() if "re" in d.get("properties", {})}
    assert requests == {tag(c) for c in REQUEST_TYPES}
    assert replies == {tag(c) for c in REPLY_TYPES}
    assert set(defs["Request"]["discriminator"]["mapping"]) == requests
    assert set(defs["Reply"]["discriminator"]["mapping"]) == replies
    for cls in EVENT_TYPES:
        assert defs[cls.__name__]["properties"]["type"]["enum"] == [tag(cls)]
    assert json.loads(schema_json()) == schema


@pytest.mark.parametrize("cls", ALL_STRUCTS, ids=lambda c: c.__name__)
def test_every_field_is_documented(cls: type[msgspec.Struct]) -> None:
    title, _, fields = field_docs(cls)
    assert title
    assert set(fields) == set(cls.__struct_fields__) - {"type"}
    properties = json_schema()["$defs"][cls.__name__]["properties"]
    assert all(p.get("description") for p in properties.values())


def test_schema_accepts_every_sample_and_rejects_bad_ones() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json_schema())
    for msg in [*SAMPLE_REQUESTS, *SAMPLE_REPLIES]:
        validator.validate(json.loads(encode_line(msg)))
    for bad in [
        {"type": "action", "re": 1},
        {"type": "action", "re": 1, "cards": ["5"]},
        {"type": "act", "id": 1},
        {"type": "nope", "re": 1},
    ]:
        assert not validator.is_valid(bad)


# -- fit with the engine -------------------------------------------------------------

CONFIGS = [GameConfig(players, variant) for players in range(2, 6) for variant in ("standard", "alternate")]
CONFIGS.append(GameConfig(2, "dummy"))


def act_for(state: Any, seat: int, request_id: int, news: list[dict[str, Any]]) -> Act:
    """What a referee would send: the seat's observation, as an Act (built once, in helpers/sdk_helpers.py)."""
    from sdk_helpers import act_message

    return msgspec.structs.replace(act_message(state, seat, news, None), id=request_id)


def play_engine_game(config: GameConfig, seed: int) -> tuple[Any, list[Act]]:
    state = new_game(config, seed)
    rng = random.Random(seed)
    acts: list[Act] = []
    seen = 0
    while not state.over:
        news = events(state, seen)
        seen = len(state.log)
        deciding = state.deciding_seats()
        plays: list[Any] = [None] * config.players
        for seat in deciding:
            act = act_for(state, seat, len(acts), news)
            acts.append(act)
            play = rng.choice(act.legal)
            assert play.ids(dummy=act.dummy) in legal_plays(state, seat)
            plays[seat] = play.ids(dummy=act.dummy)
        apply_turn(state, plays)
    return state, acts


@pytest.fixture(scope="module")
def engine_games() -> list[tuple[GameConfig, Any, list[Act]]]:
    return [(config, *play_engine_game(config, seed)) for config in CONFIGS for seed in (1, 2, 3)]


def test_every_engine_event_decodes_exactly(engine_games: list[Any]) -> None:
    kinds: set[str] = set()
    chopsticks = wasabi = False
    for _, state, _ in engine_games:
        for event in events(state):
            typed = msgspec.convert(event, Event)
            assert msgspec.to_builtins(typed) == event
            assert msgspec.json.decode(msgspec.json.encode(event), type=Event) == typed
            kinds.add(event["type"])
            if isinstance(typed, Reveal):
                chopsticks |= any(p.chopsticks_returned is not None for p in typed.plays)
                wasabi |= bool(typed.wasabi)
    assert kinds == {tag(c) for c in EVENT_TYPES}
    assert chopsticks and wasabi  # the optional shapes were exercised too


def test_every_engine_view_fits_an_act(engine_games: list[Any]) -> None:
    for config, _, acts in engine_games:
        assert acts
        for act in acts:
            assert decode_request(encode_line(act)) == act
            assert act.legal and all((p.dummy_card is not None) == act.dummy for p in act.legal)
            assert len(act.tableaus) == config.seats
        if config.variant == "dummy":
            assert any(a.dummy for a in acts) and any(not a.dummy for a in acts)


def test_engine_views_encode_as_the_protocol_structs() -> None:
    """The referee may pass the engine's Card/TableauCard and event dicts straight through."""
    state, acts = play_engine_game(GameConfig(3), 5)
    assert msgspec.json.encode(EngineCard(3, "wasabi")) == msgspec.json.encode(Card(id=3, card="wasabi"))
    for engine, ours in [
        (EngineTableauCard(3, "squid_nigiri", 8), TableauCard(id=3, card="squid_nigiri", wasabi=8)),
        (EngineTableauCard(3, "squid_nigiri"), TableauCard(id=3, card="squid_nigiri")),
    ]:
        assert msgspec.json.encode(engine) == msgspec.json.encode(ours)
    raw = msgspec.structs.replace(acts[0], events=events(state))
    typed = msgspec.structs.replace(acts[0], events=msgspec.convert(events(state), list[Event]))
    assert encode_line(raw) == encode_line(typed)


# -- layering ------------------------------------------------------------------------


def test_protocol_imports_only_msgspec_and_the_standard_library() -> None:
    for path in PROTOCOL_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = [(node.module or "").split(".")[0]]
            else:
                continue
            for root in roots:
                assert root == "msgspec" or root in sys.stdlib_module_names, f"{path.name} imports {root}"
    code = "import sys, protocol; print(sorted(m for m in sys.modules if m.split('.')[0] == 'arena'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
