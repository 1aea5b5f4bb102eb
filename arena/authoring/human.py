"""A person at the table: the ``human`` seat of ``arena play human BOT…``.

The human seat is a protocol-v1 bot process like any other, so the referee,
replays and faults treat it exactly as they treat a bot. The process
(``python -m arena.cli.human_seat``) answers the referee on stdin/stdout and talks to
the person through the terminal the arena was started from; the referee gives
that seat no deadline.

This module holds what needs no terminal UI, so that it can be tested alone:
finding the terminal and the seat's :class:`~arena.bots.BotSpec`, the choice
dialog (:func:`choose`), and the card and tableau descriptions the screen shows.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.bots import BotSpec, minimal_env
from arena.errors import ArenaError
from arena.text import plural
from protocol import Act, Card, Play, TableauCard
from protocol.cards import (
    DUMPLING_POINTS,
    MAKI_SYMBOLS,
    NIGIRI_VALUE,
    SASHIMI_POINTS,
    SASHIMI_SET,
    TEMPURA_POINTS,
    TEMPURA_SET,
    WASABI_FACTOR,
    dumpling_points,
)

#: The word that seats a person instead of a bot.
HUMAN = "human"

#: Card names as a person reads them.
CARD_NAMES: dict[str, str] = {
    "tempura": "Tempura",
    "sashimi": "Sashimi",
    "dumpling": "Dumpling",
    "maki1": "Maki roll (1)",
    "maki2": "Maki roll (2)",
    "maki3": "Maki roll (3)",
    "salmon_nigiri": "Salmon nigiri",
    "squid_nigiri": "Squid nigiri",
    "egg_nigiri": "Egg nigiri",
    "pudding": "Pudding",
    "wasabi": "Wasabi",
    "chopsticks": "Chopsticks",
}

#: What each card is worth, in a few words (RULES R1, R7, R8, R10, R12).
CARD_VALUES: dict[str, str] = {
    "tempura": f"{TEMPURA_POINTS} per pair",
    "sashimi": f"{SASHIMI_POINTS} per set of {SASHIMI_SET}",
    "dumpling": "/".join(str(p) for p in DUMPLING_POINTS[1:]) + " for 1/2/3/4/5+",
    "maki1": "1 maki symbol: most 6, second 3",
    "maki2": "2 maki symbols: most 6, second 3",
    "maki3": "3 maki symbols: most 6, second 3",
    "salmon_nigiri": f"{NIGIRI_VALUE['salmon_nigiri']}, {WASABI_FACTOR * NIGIRI_VALUE['salmon_nigiri']} on wasabi",
    "squid_nigiri": f"{NIGIRI_VALUE['squid_nigiri']}, {WASABI_FACTOR * NIGIRI_VALUE['squid_nigiri']} on wasabi",
    "egg_nigiri": f"{NIGIRI_VALUE['egg_nigiri']}, {WASABI_FACTOR * NIGIRI_VALUE['egg_nigiri']} on wasabi",
    "pudding": "at the end: most +6, fewest -6",
    "wasabi": "triples the next nigiri you take",
    "chopsticks": "later: take two cards in one turn",
}

def pudding_value(players: int, seats: int) -> str:
    """What a pudding is worth at this table (R12): no penalty with two players, but in the
    dummy variant the dummy is a third seat for puddings (R15), and the penalty stands."""
    if seats == 2:
        return "at the end: most +6 (no -6 with two players)"
    if seats > players:
        return "at the end: most +6, fewest -6 (the dummy counts as a third player)"
    return CARD_VALUES["pudding"]


def card_values(players: int, seats: int) -> dict[str, str]:
    """:data:`CARD_VALUES` for this table (the pudding's depends on it)."""
    return {**CARD_VALUES, "pudding": pudding_value(players, seats)}


def _table_of(act: Act) -> tuple[int, int]:
    """(players, seats) of the game an act belongs to: the dummy variant's acts name the
    controller, and the dummy's seat is the last one."""
    seats = len(act.tableaus)
    return (seats - 1 if act.controller is not None else seats), seats


HELP = """\
Type the number of a card and press Enter.
With chopsticks on your table you may take two cards: type two numbers, e.g. "2 5"
(you are asked for the order when it matters: a wasabi and a nigiri).
When you control the dummy you are then asked for the dummy's card.
  ?   this help and the card values
  q   leave the table (your seat then plays seeded random cards to the end)"""


def card_name(kind: str) -> str:
    return CARD_NAMES.get(kind, kind)


# -- the terminal ----------------------------------------------------------------------


def find_terminal() -> str:
    """The device path of the arena's controlling terminal (e.g. ``/dev/pts/3``), which
    the human seat's process opens. Raises :class:`ArenaError` when there is none.

    The path of the device itself is needed, not ``/dev/tty``: bot processes run in a
    session of their own, where ``/dev/tty`` names no terminal.
    """
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError as exc:
        raise ArenaError(
            "the human seat needs a terminal to play in, and this arena has none "
            f"(/dev/tty: {exc.strerror or exc}); run `arena play human …` from an interactive shell"
        ) from None
    try:
        device = _controlling_device()
        candidates = [os.ttyname(f) for f in (0, 1, 2, fd) if _isatty(f)]
        with contextlib.suppress(OSError):
            candidates += sorted(str(p) for p in Path("/dev/pts").iterdir())
        for path in candidates:
            if path == "/dev/tty":
                continue
            with contextlib.suppress(OSError):
                if device is None or os.stat(path).st_rdev == device:
                    return path
    finally:
        os.close(fd)
    raise ArenaError("the human seat needs a terminal: cannot find the device of this terminal (/dev/pts/…)")


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _controlling_device() -> int | None:
    """The device number of this process's controlling terminal (``tty_nr`` in
    /proc/self/stat), or None if it cannot be read."""
    try:
        stat = Path("/proc/self/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # the command name may hold spaces
    try:
        tty_nr = int(fields[4])
    except (IndexError, ValueError):
        return None
    return tty_nr or None


def human_spec(terminal: str) -> BotSpec:
    """How to start the human seat's process, talking to the person on ``terminal``."""
    env = minimal_env()
    for name in ("TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR"):
        if name in os.environ:
            env[name] = os.environ[name]
    # The process imports the arena: make sure it finds this very copy of it.
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([here, *filter(None, [env.get("PYTHONPATH")])])
    return BotSpec(
        name=HUMAN,
        argv=(sys.executable, "-m", "arena.cli.human_seat", "--tty", terminal),
        cwd=Path.cwd(),
        env=env,
    )


# -- describing cards and tableaus -------------------------------------------------------


def free_wasabi(tableau: Sequence[TableauCard]) -> int:
    """Wasabi in ``tableau`` still waiting for a nigiri (R7)."""
    used = {c.wasabi for c in tableau if c.wasabi is not None}
    return sum(1 for c in tableau if c.card == "wasabi" and c.id not in used)


def gain_now(kind: str, tableau: Sequence[TableauCard]) -> str:
    """What taking one card of ``kind`` adds to ``tableau`` this round, in a few words."""
    counts = Counter(c.card for c in tableau)
    if kind == "tempura":
        return f"+{TEMPURA_POINTS}: completes a pair" if counts[kind] % TEMPURA_SET == TEMPURA_SET - 1 else "+0 until paired"
    if kind == "sashimi":
        missing = SASHIMI_SET - 1 - counts[kind] % SASHIMI_SET
        return f"+{SASHIMI_POINTS}: completes a set" if missing == 0 else f"+0, {missing} more for a set"
    if kind == "dumpling":
        n = counts[kind]
        return f"+{dumpling_points(n + 1) - dumpling_points(n)}"
    if kind in MAKI_SYMBOLS:
        mine = maki_symbols(tableau)
        return f"maki {mine} → {plural(mine + MAKI_SYMBOLS[kind], 'symbol')}"
    if kind in NIGIRI_VALUE:
        value = NIGIRI_VALUE[kind]
        return f"+{WASABI_FACTOR * value} on your wasabi" if free_wasabi(tableau) else f"+{value}"
    if kind == "pudding":
        return f"puddings {counts[kind]} → {counts[kind] + 1} (this round)"
    return ""


def maki_symbols(tableau: Sequence[TableauCard]) -> int:
    """The maki symbols in ``tableau`` (R10)."""
    return sum(MAKI_SYMBOLS.get(c.card, 0) for c in tableau)


def round_points(tableau: Sequence[TableauCard]) -> int:
    """The points ``tableau`` holds now, maki and pudding aside (those depend on the others)."""
    counts = Counter(c.card for c in tableau)
    nigiri = sum(
        NIGIRI_VALUE[c.card] * (WASABI_FACTOR if c.wasabi is not None else 1) for c in tableau if c.card in NIGIRI_VALUE
    )
    return (
        TEMPURA_POINTS * (counts["tempura"] // TEMPURA_SET)
        + SASHIMI_POINTS * (counts["sashimi"] // SASHIMI_SET)
        + dumpling_points(counts["dumpling"])
        + nigiri
    )


@dataclass(frozen=True, slots=True)
class Pile:
    """One group of a tableau as the screen shows it: ``text`` about cards of ``kind``."""

    kind: str
    text: str


def tableau_piles(tableau: Sequence[TableauCard]) -> list[Pile]:
    """A tableau grouped for reading at a glance: sets with their points so far, each
    nigiri with its wasabi and value, empty wasabi, chopsticks, puddings. Maki rolls are
    left out: the screen shows every seat's maki symbols side by side (:func:`maki_symbols`)."""
    counts = Counter(c.card for c in tableau)
    piles: list[Pile] = []
    for kind, points in (
        ("tempura", TEMPURA_POINTS * (counts["tempura"] // TEMPURA_SET)),
        ("sashimi", SASHIMI_POINTS * (counts["sashimi"] // SASHIMI_SET)),
        ("dumpling", dumpling_points(counts["dumpling"])),
    ):
        if counts[kind]:
            piles.append(Pile(kind, f"{kind} ×{counts[kind]}" + (f" ({points})" if points else "")))
    for c in tableau:
        if c.card in NIGIRI_VALUE:
            short = c.card.removesuffix("_nigiri")
            if c.wasabi is not None:
                piles.append(Pile(c.card, f"wasabi+{short} ({WASABI_FACTOR * NIGIRI_VALUE[c.card]})"))
            else:
                piles.append(Pile(c.card, f"{short} ({NIGIRI_VALUE[c.card]})"))
    waiting = free_wasabi(tableau)
    if waiting:
        piles.append(Pile("wasabi", "wasabi (empty)" + (f" ×{waiting}" if waiting > 1 else "")))
    if counts["chopsticks"]:
        piles.append(Pile("chopsticks", f"chopsticks ×{counts['chopsticks']}"))
    if counts["pudding"]:
        piles.append(Pile("pudding", f"pudding ×{counts['pudding']}"))
    return piles


# -- choosing cards --------------------------------------------------------------------


class ChoiceError(ValueError):
    """Input that names no legal choice; the message says why, for the person."""


class LeaveTable(Exception):  # noqa: N818 - a request, not an error
    """The person asked to leave the game (``q``, or the end of the terminal's input)."""


Ask = Callable[[str], str]
Tell = Callable[[str], None]


def parse_numbers(text: str, hand: Sequence[Card]) -> list[Card]:
    """The cards that ``text`` names by their numbers (1 = the first card of ``hand``),
    in the order typed. Numbers may be separated by spaces, commas or ``+``."""
    words = text.replace(",", " ").replace("+", " ").split()
    if not words:
        raise ChoiceError(f"type the number of a card, 1 to {len(hand)}")
    picked: list[Card] = []
    for word in words:
        try:
            number = int(word)
        except ValueError:
            raise ChoiceError(f"{word!r} is not a card number: type a number from 1 to {len(hand)} (? for help)") from None
        if not 1 <= number <= len(hand):
            raise ChoiceError(f"there is no card {number}: your hand has cards 1 to {len(hand)}")
        card = hand[number - 1]
        if card in picked:
            raise ChoiceError(f"card {number} is named twice: a card can be taken once")
        picked.append(card)
    return picked


def order_matters(first: Card, second: Card, tableau: Sequence[TableauCard]) -> bool:
    """Whether taking these two cards in one order or the other scores differently:
    a wasabi and a nigiri with no empty wasabi on the table yet (R7a)."""
    kinds = {first.card, second.card}
    has_nigiri = any(k in NIGIRI_VALUE for k in kinds)
    return "wasabi" in kinds and has_nigiri and free_wasabi(tableau) == 0


def choose(act: Act, ask: Ask, tell: Tell) -> Play:
    """Ask the person for this turn's cards until they name a legal play; return it
    (always one of ``act.legal``). Wrong input is answered with the reason and asked
    again. Raises :class:`LeaveTable` when the person leaves."""
    hand = act.hand
    tableau = act.tableaus[act.seat]
    legal_cards = {tuple(p.cards) for p in act.legal}
    pairs = any(len(p.cards) == 2 for p in act.legal)
    what = "your card" + (", or two with chopsticks" if pairs else "")
    if act.dummy:
        what += " (then the dummy's)"
    values = card_values(*_table_of(act))
    while True:
        text = _answer(ask(f"Take {what} [1-{len(hand)}, ? help]: "), tell, values)
        if text is None:
            continue
        try:
            cards = parse_numbers(text, hand)
            ids = _own_cards(cards, act, legal_cards, pairs, tableau, ask, tell, values)
            if act.dummy:
                dummy_card = _dummy_card(act, ids, ask, tell)
                if dummy_card is None:
                    continue  # back to the choice of the person's own cards
                play = Play(cards=list(ids), dummy_card=dummy_card)
            else:
                play = Play(cards=list(ids))
        except ChoiceError as exc:
            tell(f"✗ {exc}")
            continue
        if play in act.legal:
            return play
        tell("✗ that is not a legal play this turn; ? shows the help")  # a safety net: the checks above agree with R8/R15


def _answer(text: str, tell: Tell, values: dict[str, str] | None = None) -> str | None:
    """The person's answer, stripped; None after a help request (the help lists ``values``,
    the card values at this table)."""
    text = text.strip()
    if text.lower() in ("q", "quit", "exit"):
        raise LeaveTable
    if text in ("?", "h", "help"):
        shown = values if values is not None else CARD_VALUES
        tell(HELP + "\n" + "\n".join(f"  {card_name(k):<14} {v}" for k, v in shown.items()))
        return None
    return text


def _own_cards(
    cards: list[Card],
    act: Act,
    legal_cards: set[tuple[int, ...]],
    pairs: bool,
    tableau: Sequence[TableauCard],
    ask: Ask,
    tell: Tell,
    values: dict[str, str] | None = None,
) -> tuple[int, ...]:
    if len(cards) > 2:
        raise ChoiceError("take one card, or two with chopsticks, not more")
    if len(cards) == 2 and not pairs:
        if any(c.card == "chopsticks" for c in tableau):
            need = 3 if act.dummy else 2
            raise ChoiceError(f"chopsticks need at least {need} cards in your hand: take one card")
        raise ChoiceError("two cards need chopsticks on your table (taken in an earlier turn): take one card")
    if len(cards) == 2 and order_matters(cards[0], cards[1], tableau):
        cards = _ask_order(cards, ask, tell, values)
    ids = tuple(c.id for c in cards)
    if ids not in legal_cards:
        raise ChoiceError("that is not a legal play this turn")
    return ids


def _ask_order(cards: list[Card], ask: Ask, tell: Tell, values: dict[str, str] | None = None) -> list[Card]:
    wasabi = next(c for c in cards if c.card == "wasabi")
    nigiri = next(c for c in cards if c is not wasabi)
    value = NIGIRI_VALUE[nigiri.card]
    name = card_name(nigiri.card).lower()
    tell(
        "The order matters here:\n"
        f"  1  wasabi first, then the {name} goes on it: {WASABI_FACTOR * value} points\n"
        f"  2  the {name} first ({value} points); the wasabi waits for a later nigiri"
    )
    while True:
        text = _answer(ask("Which order? [1/2, Enter = 1]: "), tell, values)
        if text is None:
            continue
        if text in ("", "1"):
            return [wasabi, nigiri]
        if text == "2":
            return [nigiri, wasabi]
        tell(f"✗ {text!r}: type 1 or 2")


def _dummy_card(act: Act, own: tuple[int, ...], ask: Ask, tell: Tell) -> int | None:
    """The id of the card the person gives the dummy, or None to choose their own again."""
    allowed = {p.dummy_card for p in act.legal if tuple(p.cards) == own}
    values = card_values(*_table_of(act))
    while True:
        text = _answer(ask(f"Card for the dummy [1-{len(act.hand)}, b = back]: "), tell, values)
        if text is None:
            continue
        if text.lower() in ("b", "back"):
            return None
        try:
            cards = parse_numbers(text, act.hand)
        except ChoiceError as exc:
            tell(f"✗ {exc}")
            continue
        if len(cards) != 1:
            tell("✗ the dummy takes exactly one card")
            continue
        if cards[0].id in own:
            tell("✗ you are taking that card yourself: give the dummy another one")
            continue
        if cards[0].id not in allowed:
            tell("✗ that card cannot go to the dummy this turn")
            continue
        return cards[0].id
