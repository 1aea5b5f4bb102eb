"""Text from bots and files, made safe to show: the one place that decides which
characters may reach a terminal or a file meant for people.

A bot writes its own ``version``, its stderr and its build log, and a replay file
carries seat names and fault messages that quote what a bot sent. Any of them may hold
escape sequences (a window title, the clipboard through OSC 52, cursor moves, a cleared
screen) or characters that reorder what a reader sees (the Unicode bidi controls of
"Trojan source"). :func:`printable` shows each such character as a visible escape
(``\\x1b``, ``\\u202e``) instead, so that the reader still sees what the bot wrote and the
terminal does nothing with it. The output boundaries apply it: the CLI's consoles
(:class:`arena.cli.render.SafeConsole`), leaderboard.md (:mod:`arena.tournament.standings`) and the
report's data (:func:`visible_json`).
"""

from __future__ import annotations

import json
import re

__all__ = ["LINE_LIMIT", "NAME_LIMIT", "has_unsafe", "plural", "printable", "unsafe_positions", "visible_json"]

#: How much of a field meant to be short (a bot's name or version, a seat name) is shown.
NAME_LIMIT = 64
#: How much of one line of a message (a skip reason, a fault message) is shown.
LINE_LIMIT = 2000

# What is never shown raw: C0 controls but the tab (the newline apart, see below), DEL,
# the C1 controls (0x9b is a CSI on some terminals), the bidi controls (U+061C, U+200E/F,
# U+202A-U+202E, U+2066-U+2069) and the deprecated format controls next to them
# (U+206A-U+206F), the line and paragraph separators (U+2028/9), the byte order mark,
# the interlinear annotation controls, the invisible tag characters, and lone
# surrogates (which cannot even be encoded to UTF-8 for output).
_UNSAFE_CLASS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u206f"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f\ud800-\udfff"
)
_UNSAFE_MULTILINE = re.compile(f"[{_UNSAFE_CLASS}]")
_UNSAFE_LINE = re.compile(f"[\n{_UNSAFE_CLASS}]")


_NAMED = {"\n": "\\n", "\r": "\\r"}


def plural(count: int, word: str, many: str | None = None) -> str:
    """``count`` and ``word``, in the plural unless ``count`` is one: "1 symbol", "3 symbols"
    (``many``: a plural that is not ``word + "s"``)."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def has_unsafe(text: str, *, multiline: bool = True) -> bool:
    """Whether :func:`printable` would change ``text`` (its length limit aside)."""
    return (_UNSAFE_MULTILINE if multiline else _UNSAFE_LINE).search(text) is not None


def unsafe_positions(text: str, *, multiline: bool = True) -> list[int]:
    """Where in ``text`` the characters are that :func:`printable` escapes."""
    return [m.start() for m in (_UNSAFE_MULTILINE if multiline else _UNSAFE_LINE).finditer(text)]


def printable(text: str, *, multiline: bool = False, limit: int | None = None) -> str:
    """``text`` with every character that could drive a terminal or reorder what a reader
    sees replaced by a visible escape: ``"\\x1b]0;t\\x07"`` becomes the 12 characters
    ``\\x1b]0;t\\x07``; U+202E becomes ``\\u202e``. Tabs stay; newlines stay only with
    ``multiline`` (else they show as ``\\n``). With ``limit``, at most that many
    characters come back, cut at a whole character or escape and ended by ``…``.

    Only printable text and the allowed whitespace come back, so applying it again
    changes nothing. A backslash already in ``text`` is left as it is: the escapes are
    there to be seen, not to be decoded."""
    pattern = _UNSAFE_MULTILINE if multiline else _UNSAFE_LINE
    cut = limit is not None and len(text) > limit
    if cut:
        text = text[:limit]  # the work stays bounded by the limit, whatever came in
    if not cut and pattern.search(text) is None:
        return text
    if limit is None:
        return pattern.sub(lambda m: _escape(m.group()), text)
    # Runs of safe text (which may be cut anywhere) and escapes (kept whole or not at all).
    pieces: list[tuple[str, bool]] = []
    pos = 0
    for m in pattern.finditer(text):
        pieces += [(text[pos : m.start()], True), (_escape(m.group()), False)]
        pos = m.end()
    pieces.append((text[pos:], True))
    if not cut and sum(len(piece) for piece, _ in pieces) <= limit:
        return "".join(piece for piece, _ in pieces)
    room = max(limit - 1, 0)  # one for the ellipsis
    out: list[str] = []
    for piece, divisible in pieces:
        if len(piece) > room:
            if divisible:
                out.append(piece[:room])
            break
        out.append(piece)
        room -= len(piece)
    return "".join(out) + "…"


# Inside a JSON text: an escaped backslash (kept as it is, so that what follows it is not
# read as an escape), a character escaped as a surrogate pair, one escaped alone, or a raw
# character that printable() escapes.
_JSON_TOKEN = re.compile(
    r"\\\\"
    r"|\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\u([0-9a-fA-F]{4})"
    r"|\\([bfr])"
    rf"|[{_UNSAFE_CLASS}]"
)
_SHORT_ESCAPES = {"b": "\b", "f": "\f", "r": "\r"}


def visible_json(encoded: str) -> str:
    """A JSON text in which every string (key or value) reads as :func:`printable` with
    ``multiline`` would show it: a control character escaped by the encoder
    (``\\u001b``, ``\\r``) or left raw (DEL, the C1 controls, the bidi controls, U+2028)
    becomes its visible escape, spelled so that the decoded string holds the backslash
    (``"\\\\x1b"``). Newlines and tabs stay. Works on the output of any JSON encoder, at
    the speed of one regular-expression scan when nothing needs it."""

    def visible(m: re.Match[str]) -> str:
        token = m.group()
        if token == "\\\\":
            return token
        high, low, single, short = m.groups()
        if high is not None:
            char = chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))
        elif single is not None:
            char = chr(int(single, 16))
        elif short is not None:
            char = _SHORT_ESCAPES[short]
        else:
            char = token
        if not has_unsafe(char):
            return token
        return json.dumps(printable(char, multiline=True))[1:-1]

    return _JSON_TOKEN.sub(visible, encoded)
