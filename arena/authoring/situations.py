"""The scripted games of `arena validate` and the situations they put in front of the bot:
which seeds and house plays bring chopsticks, wasabi, the last card, the dummy seats and a
set-aside answer to the bot's seat at a known turn, and how an act is recognised as one."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.engine import (
    GameConfig,
    GameState,
    Variant,
    legal_plays,
    new_game,
)
from protocol import (
    Act,
)

NIGIRI = ("salmon_nigiri", "squid_nigiri", "egg_nigiri")


# -- the scripted games -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameScript:
    """One scripted game: the bot sits at ``seat``; the validator plays the others."""

    label: str
    config: GameConfig
    seat: int
    seed: int
    #: (round, turn) at which the bot's answer is set aside on purpose (as if late).
    set_aside: tuple[int, int] | None = None
    #: (round, turn) at which the bot's seat takes a chopsticks card, whatever it answers.
    force_chopsticks: tuple[int, int] | None = None


def _holds(state: GameState, seat: int, *wanted: Sequence[str]) -> bool:
    kinds = {state.kind(c) for c in state.hands[seat]}
    return all(kinds & set(options) for options in wanted)


def chopsticks_seed(config: GameConfig) -> int:
    """The first seed whose first two hands each hold chopsticks, a wasabi and a nigiri:
    with seat 0 made to take its chopsticks and seat 1 taking its own, seat 0 is offered
    two-card plays (a wasabi-then-nigiri pair among them) at turn 2 and sees seat 1
    play wasabi then nigiri with chopsticks, the chopsticks coming back, at turn 3."""
    for seed in range(1, 100_000):
        state = new_game(config, seed)
        if all(_holds(state, s, ("chopsticks",), ("wasabi",), NIGIRI) for s in (0, 1)):
            return seed
    raise RuntimeError("no seed deals the chopsticks situation")  # the deal would have to have changed


def scripts() -> list[GameScript]:
    """The games of a validation, in the order they are played (one bot process for all)."""
    two = GameConfig(2, Variant.STANDARD)
    return [
        GameScript("2 players, standard", two, seat=0, seed=chopsticks_seed(two), force_chopsticks=(1, 1)),
        GameScript("3 players, alternate", GameConfig(3, Variant.ALTERNATE), seat=2, seed=2, set_aside=(1, 2)),
        GameScript("4 players, standard", GameConfig(4, Variant.STANDARD), seat=1, seed=3),
        GameScript("5 players, alternate", GameConfig(5, Variant.ALTERNATE), seat=4, seed=4),
        GameScript("2 players, dummy variant", GameConfig(2, Variant.DUMMY), seat=0, seed=5),
    ]


def _own_count(play: Sequence[int], controller: bool) -> int:
    return len(play) - 1 if controller else len(play)


def house_play(state: GameState, seat: int, rng: random.Random) -> tuple[int, ...]:
    """The validator's own choice for a seat it plays: use chopsticks for wasabi then
    nigiri when it can, take chopsticks when it has none, else mostly random, so that
    the bot sees chopsticks and wasabi at work in the reveals."""
    legal = legal_plays(state, seat)
    controller = seat == state.controller
    pairs = [p for p in legal if _own_count(p, controller) == 2]
    wasabi_nigiri = [p for p in pairs if state.kind(p[0]) == "wasabi" and state.kind(p[1]) in NIGIRI]
    if wasabi_nigiri:
        return wasabi_nigiri[0]
    if pairs and rng.random() < 0.5:
        return rng.choice(pairs)
    if not state.chopsticks[seat]:
        takes_chopsticks = [p for p in legal if state.kind(p[0]) == "chopsticks" and _own_count(p, controller) == 1]
        if takes_chopsticks:
            return takes_chopsticks[0]
    return rng.choice(legal)


# -- situations: what an act (or game_over) puts in front of the bot ---------------------------

CHOPSTICKS = "chopsticks offered"
WASABI_PAIR = "wasabi then nigiri offered"
WASABI_SHOWN = "wasabi then nigiri revealed"
RETURNED = "chopsticks returned"
LAST_CARD = "last card"
CONTROLLER = "dummy controller"
OTHER = "dummy other player"
AFTER_FAULT = "after a fault"
RIGHT = "passing right"


def situations_of(state: GameState, act: Act, evs: list[dict[str, Any]], after_fault: bool) -> set[str]:
    found: set[str] = set()
    controller = act.dummy
    pairs = [p for p in act.legal if len(p.cards) == 2]
    if pairs:
        found.add(CHOPSTICKS)
        if any(state.kind(p.cards[0]) == "wasabi" and state.kind(p.cards[1]) in NIGIRI for p in pairs):
            found.add(WASABI_PAIR)
    if controller:
        found.add(CONTROLLER)
    elif state.config.variant is Variant.DUMMY:
        found.add(OTHER)
    if act.direction == "right":
        found.add(RIGHT)
    found |= event_situations(evs)
    if after_fault:
        found.add(AFTER_FAULT)
    return found


def event_situations(evs: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()
    for ev in evs:
        if ev["type"] == "last_card":
            found.add(LAST_CARD)
        elif ev["type"] == "reveal":
            for play in ev["plays"]:
                if play["chopsticks_returned"] is not None:
                    found.add(RETURNED)
                kinds = [c["card"] for c in play["cards"]]
                if len(kinds) == 2 and kinds[0] == "wasabi" and kinds[1] in NIGIRI:
                    found.add(WASABI_SHOWN)
    return found

