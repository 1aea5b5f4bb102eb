"""Fuzzing the bot-reply decoder: whatever bytes a bot sends, the referee gets a reply,
a stale line to skip, or a classified fault, never another exception.

Two sources: arbitrary byte strings, and near-valid messages (real replies, mutated:
truncated, extra fields, wrong types, huge numbers, nested arrays, bad UTF-8, NaN and
Infinity tokens). Each line goes through :func:`protocol.codec.decode_reply` and the
referee's own check of a reply (``check_reply``), and an action that decodes is then
checked against a real game position, as the referee does with a play the act did not
list.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.engine import GameConfig, PlayError, check_play, new_game
from arena.game.players import BotFault, check_reply
from protocol.codec import ProtocolDecodeError, decode_reply
from protocol.messages import Ack, Action, HelloReply, Ready

FUZZ = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)

REQUEST_ID = 7
EXPECTED = (Action, Ready, Ack, HelloReply)

#: Real replies, one of each type, as bots send them.
VALID: list[dict] = [
    {"type": "action", "re": REQUEST_ID, "cards": [3]},
    {"type": "action", "re": REQUEST_ID, "cards": [3, 11], "debug": {"eval": 0.5, "line": [1, 2]}},
    {"type": "action", "re": REQUEST_ID, "cards": [4], "dummy_card": 19},
    {"type": "ready", "re": REQUEST_ID},
    {"type": "ack", "re": REQUEST_ID},
    {"type": "hello", "re": REQUEST_ID, "version": 1, "name": "fuzzy", "bot_version": "1"},
]

#: Values that do not belong where a bot may put them.
ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.lists(st.integers(min_value=-5, max_value=200), max_size=5),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
#: Raw tokens spliced into the JSON text (not JSON, or JSON msgspec refuses).
RAW_TOKENS = [
    b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999", b"1" * 400, b"0x10", b"'a'", b"undefined",
    b'"\\ud800"', b'"\\udc00x"', b'"\\u0000"', b"\xff", b"\xc3(", b"\xed\xa0\x80", b"[" * 3000, b"{" * 3000,
    b"[" * 100 + b"]" * 100, b"{}", b"[]", b"", b",", b":", b"\x00", b"\r", b"\n",
]


def check_line(line: bytes) -> None:
    """What the referee does with one line: decode, match to the request, and (for an
    action) validate the play. Only classified outcomes may come out."""
    try:
        reply = decode_reply(line)
    except ProtocolDecodeError as exc:
        assert exc.kind in {"empty", "utf8", "json", "not_object", "type", "schema"}
        assert str(exc) and len(str(exc)) < 1000  # a message for the author, of bounded length
    else:
        assert isinstance(reply, EXPECTED)
    for expected in EXPECTED:
        outcome = check_reply(line, REQUEST_ID, expected)
        if isinstance(outcome, BotFault):
            assert outcome.kind in {"malformed", "protocol"}, outcome.kind
            assert outcome.message
        elif outcome is not None:
            assert isinstance(outcome, expected) and outcome.re == REQUEST_ID
            if isinstance(outcome, Action):
                play_against_a_real_position(outcome)


STATE = new_game(GameConfig(2), seed=1)


def play_against_a_real_position(action: Action) -> None:
    ids = tuple(action.cards) if action.dummy_card is None else (*action.cards, action.dummy_card)
    try:
        check_play(STATE, 0, ids)
    except PlayError as exc:
        assert str(exc)


@FUZZ
@given(st.binary(max_size=300))
def test_arbitrary_bytes_are_a_reply_or_a_classified_fault(line: bytes) -> None:
    check_line(line)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A real reply, broken in one to three ways."""
    msg = json.loads(json.dumps(draw(st.sampled_from(VALID))))
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["field", "extra", "drop", "nest", "raw", "truncate", "bytes"]))
        keys = sorted(msg) if isinstance(msg, dict) else []
        if how == "field" and keys:
            msg[draw(st.sampled_from(keys))] = draw(ODD_VALUES)
        elif how == "extra" and isinstance(msg, dict):
            msg[draw(st.text(max_size=8))] = draw(ODD_VALUES)
        elif how == "drop" and keys:
            del msg[draw(st.sampled_from(keys))]
        elif how == "nest":
            depth = draw(st.integers(1, 50))
            inner = msg.get("cards", 0) if isinstance(msg, dict) else msg
            nested: object = inner
            for _ in range(depth):
                nested = [nested]
            if isinstance(msg, dict):
                msg[draw(st.sampled_from(["cards", "debug", "re"]))] = nested
            else:
                msg = nested
    text = json.dumps(msg).encode() if not isinstance(msg, bytes) else msg
    how = draw(st.sampled_from(["none", "raw", "truncate", "bytes", "deep"]))
    if how == "raw":  # a raw token in place of some value or anywhere
        token = draw(st.sampled_from(RAW_TOKENS))
        at = draw(st.integers(0, len(text)))
        if b":" in text and draw(st.booleans()):
            colon = text.index(b":", draw(st.integers(0, text.rindex(b":"))))
            end = min((i for i in (text.find(b",", colon), text.find(b"}", colon)) if i >= 0), default=len(text))
            text = text[: colon + 1] + token + text[end:]
        else:
            text = text[:at] + token + text[at:]
    elif how == "truncate":
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]
    elif how == "bytes":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.binary(min_size=1, max_size=4)) + text[at:]
    elif how == "deep":
        depth = draw(st.integers(100, 20000))
        text = text[:-1] + b',"debug":' + b"[" * depth + b"]" * depth + b"}"
    return text + draw(st.sampled_from([b"", b"\n", b"\r\n"]))


@FUZZ
@given(mutated())
def test_near_valid_replies_are_a_reply_or_a_classified_fault(line: bytes) -> None:
    check_line(line)


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (b'{"type":"action","re":7,"cards":[NaN]}', "json"),
        (b'{"type":"action","re":7,"cards":[Infinity]}', "json"),
        (b'{"type":"action","re":7,"cards":[1e999]}', "json"),
        (b'{"type":"action","re":7,"cards":[3],"debug":"\\ud800"}', "json"),
        (b'{"type":"action","re":7,"cards":[3],"debug":"\xed\xa0\x80"}', "utf8"),
        (b'{"type":"action","re":7,"cards":[3],"debug":' + b"[" * 5000 + b"]" * 5000 + b"}", "json"),
        (b'{"type":"action","re":7,"cards":"3"}', "schema"),
        (b'[{"type":"action","re":7,"cards":[3]}]', "not_object"),
        (b'{"type":"action","re":7,"cards":[3]', "json"),
    ],
)
def test_named_near_misses_are_classified(line: bytes, kind: str) -> None:
    with pytest.raises(ProtocolDecodeError) as info:
        decode_reply(line)
    assert info.value.kind == kind
    fault = check_reply(line, REQUEST_ID, Action)
    assert isinstance(fault, BotFault) and fault.kind == "malformed"


def test_huge_numbers_that_decode_are_a_protocol_or_an_illegal_play() -> None:
    stale_or_future = check_reply(b'{"type":"action","re":' + b"9" * 40 + b',"cards":[3]}', REQUEST_ID, Action)
    assert isinstance(stale_or_future, BotFault) and stale_or_future.kind == "protocol"
    assert "expected re=7" in stale_or_future.message
    action = check_reply(b'{"type":"action","re":7,"cards":[' + b"9" * 40 + b"]}", REQUEST_ID, Action)
    assert isinstance(action, Action)
    with pytest.raises(PlayError):
        check_play(STATE, 0, tuple(action.cards))
