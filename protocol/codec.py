"""Lines on the wire: one JSON object per line, UTF-8, ``\\n``-terminated.

One module-level encoder and one typed decoder per direction, reused for every
message (msgspec's fast path). Decoding never raises anything but
:class:`ProtocolDecodeError`, whose message is written for a bot author: what is
wrong, where (msgspec's path, e.g. ``$.cards[0]``) and what was received.
Everything here is safe to call from several threads.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from .messages import REPLY_TYPES, REQUEST_TYPES, Reply, Request

_encoder: Final = msgspec.json.Encoder()
_reply_decoder: Final = msgspec.json.Decoder(Reply)
_request_decoder: Final = msgspec.json.Decoder(Request)

#: How much of a bad line an error message quotes.
RECEIVED_CHARS: Final = 200

_JSON_KIND = {ord("["): "an array", ord('"'): "a string", ord("t"): "a boolean", ord("f"): "a boolean", ord("n"): "null"}


def _tags(types: tuple[type[msgspec.Struct], ...]) -> tuple[str, ...]:
    return tuple(str(t.__struct_config__.tag) for t in types)


_REPLY_TAGS: Final = _tags(REPLY_TYPES)
_REQUEST_TAGS: Final = _tags(REQUEST_TYPES)


class ProtocolDecodeError(ValueError):
    """A line that is not a valid message. ``str(error)`` is meant for the bot's author.

    Attributes:
        kind: What is wrong: ``"empty"`` (a blank line), ``"utf8"`` (invalid UTF-8),
            ``"json"`` (invalid JSON, or nested too deeply), ``"not_object"`` (JSON but
            not an object), ``"type"`` (``type`` missing, not a string, or not a message of
            this direction) or ``"schema"`` (a field missing or of the wrong type).
        path: Where in the message, as msgspec spells it (``"$.cards[0]"``), when known.
        message_type: The ``type`` the line claimed, when it named a known one.
        received: The start of the line, as text (invalid bytes escaped).
    """

    def __init__(
        self,
        kind: str,
        problem: str,
        *,
        received: str,
        path: str | None = None,
        message_type: str | None = None,
    ) -> None:
        super().__init__(f"{problem}; received: {received}")
        self.kind = kind
        self.problem = problem
        self.path = path
        self.message_type = message_type
        self.received = received


def encode_line(msg: msgspec.Struct) -> bytes:
    """``msg`` as one line of JSON: compact, ``\\n``-terminated."""
    return _encoder.encode(msg) + b"\n"


def encode_line_into(msg: msgspec.Struct, buffer: bytearray) -> None:
    """Write ``msg`` as one ``\\n``-terminated JSON line into ``buffer``, replacing its
    contents. Reusing one buffer per connection saves an allocation and a copy per
    message; the caller must not reuse it before the previous line is sent."""
    _encoder.encode_into(msg, buffer)
    buffer.append(10)


def decode_reply(line: bytes | bytearray | memoryview | str) -> Reply:
    """A bot's reply from one line (a trailing ``\\n`` or ``\\r\\n`` is fine).

    Raises :class:`ProtocolDecodeError`, and nothing else, for anything that is
    not exactly one valid reply. Unknown fields are ignored.
    """
    return _decode(_reply_decoder, line, "reply", _REPLY_TAGS)


def decode_request(line: bytes | bytearray | memoryview | str) -> Request:
    """A referee's message from one line, for bots and tests; errors as :func:`decode_reply`."""
    return _decode(_request_decoder, line, "request", _REQUEST_TAGS)


def _decode(decoder: msgspec.json.Decoder[Any], line: Any, role: str, tags: tuple[str, ...]) -> Any:
    if isinstance(line, memoryview):
        line = line.tobytes()
    elif isinstance(line, str):
        try:
            line = line.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ProtocolDecodeError(
                "utf8", f"invalid text at character {exc.start}: a line must be UTF-8 encoded JSON",
                received=_quote(line.encode("utf-8", "backslashreplace")),
            ) from None
    # msgspec does not check the UTF-8 of a field it skips, so check it here;
    # isascii() makes that nearly free for the usual all-ASCII line.
    if not line.isascii():
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolDecodeError(
                "utf8",
                f"invalid UTF-8 at byte {exc.start}: a line must be UTF-8 encoded JSON",
                received=_quote(line),
            ) from None
    try:
        return decoder.decode(line)
    except msgspec.ValidationError as exc:
        raise _explain_invalid(line, str(exc), role, tags) from None
    except msgspec.DecodeError as exc:
        raise _explain_malformed(line, str(exc)) from None
    except RecursionError:
        raise _too_deep(line) from None


def _explain_malformed(line: bytes, detail: str) -> ProtocolDecodeError:
    if not line.strip():
        return ProtocolDecodeError("empty", "empty line: expected one JSON object", received=_quote(line))
    return ProtocolDecodeError(
        "json", f"invalid JSON ({_lower_first(detail)}): send exactly one JSON object per line", received=_quote(line)
    )


def _too_deep(line: bytes) -> ProtocolDecodeError:
    return ProtocolDecodeError("json", "invalid JSON: nested too deeply", received=_quote(line))


def _explain_invalid(line: bytes, detail: str, role: str, tags: tuple[str, ...]) -> ProtocolDecodeError:
    """Turn msgspec's ValidationError into the most specific problem we can name.

    The typed decoder stops at the first mismatch, so the rest of the line may not
    even be JSON: parse it untyped to tell a bad message from bad JSON.
    """
    received = _quote(line)
    expected = ", ".join(f'"{t}"' for t in tags)
    try:
        value = msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        return _explain_malformed(line, str(exc))
    except RecursionError:
        return _too_deep(line)
    if not isinstance(value, dict):
        what = _JSON_KIND.get(line.lstrip()[0], "a number")
        return ProtocolDecodeError(
            "not_object", f"expected a JSON object with a `type` field, got {what}", received=received
        )
    tag = value.get("type")
    if "type" not in value:
        return ProtocolDecodeError(
            "type", f"missing `type` field: a {role} is an object whose `type` is one of {expected}", received=received
        )
    if not isinstance(tag, str):
        return ProtocolDecodeError(
            "type", f"`type` must be a string, one of {expected}; got {_short(tag)}", path="$.type", received=received
        )
    if tag not in tags:
        return ProtocolDecodeError(
            "type", f"unknown {role} type {_short(tag)}: expected one of {expected}", path="$.type", received=received
        )
    text, sep, where = detail.rpartition(" - at `")
    if sep:
        path = where.removesuffix("`")
        problem = f'invalid "{tag}" {role} at {path}: {_lower_first(text)}'
    else:
        path = "$"
        problem = f'invalid "{tag}" {role}: {_lower_first(detail)}'
    return ProtocolDecodeError("schema", problem, path=path, message_type=tag, received=received)


def _quote(line: bytes) -> str:
    text = line.decode("utf-8", "backslashreplace").rstrip("\r\n")
    if len(text) > RECEIVED_CHARS:
        return f"{text[:RECEIVED_CHARS]}... ({len(line)} bytes in all)"
    return text


def _short(value: object) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 40 else text[:40] + "..."


def _lower_first(text: str) -> str:
    # "Expected `int`..." reads better mid-sentence as "expected `int`...", but an
    # acronym stays as it is ("JSON is malformed", not "jSON is malformed").
    if text[1:2].isupper():
        return text
    return text[:1].lower() + text[1:]
