"""What a seat may see (RULES "What a bot may know"), and the public events of a game.

:func:`observe` is the only way the rest of the arena reads a state for a bot:
it holds the seat's own hand and public facts, never another seat's hand or a
choice of the current turn (those are not in the state before the reveal).
:func:`events` turns the engine's compact log into plain, JSON-ready dicts.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .cards import KINDS
from .plays import legal_plays
from .state import GameState, Variant


class Card(msgspec.Struct, frozen=True):
    id: int
    card: str  # the kind's wire name (R1)


class TableauCard(msgspec.Struct, frozen=True, omit_defaults=True):
    id: int
    card: str
    #: For a nigiri sitting on a wasabi: that wasabi's id (R7).
    wasabi: int | None = None


class Observation(msgspec.Struct, frozen=True):
    """One seat's view of the game at a decision point."""

    seat: int
    players: int
    seats: int  # players, plus the dummy (last seat) in that variant
    variant: str
    round: int
    turn: int
    direction: str  # "left" or "right" (R6, R14)
    hand: list[Card]
    tableaus: list[list[TableauCard]]  # every seat, in the order cards entered (R16)
    puddings: list[int]
    scores: list[int]  # points of finished rounds
    hand_sizes: list[int]  # the dummy's pile size at its seat in that variant
    legal: list[list[int]]  # R16 order; empty if this seat does not choose this turn
    controller: int | None = None  # who controls the dummy this turn (R15)
    dummy: bool = False  # this seat controls the dummy: each play ends with its card

    @property
    def deciding(self) -> bool:
        return bool(self.legal)


def card_view(state: GameState, card: int) -> Card:
    return Card(card, KINDS[state.kind_of[card]])


def _tableau(state: GameState, seat: int) -> list[TableauCard]:
    kind_of, wasabi_of = state.kind_of, state.wasabi_of
    return [TableauCard(c, KINDS[kind_of[c]], wasabi_of.get(c)) for c in state.tableaus[seat]]


def observe(state: GameState, seat: int) -> Observation:
    """``seat``'s view: its own hand and everything public, nothing else."""
    if type(seat) is not int or not 0 <= seat < state.seats:
        raise ValueError(f"seat must be an int from 0 to {state.seats - 1}, not {seat!r}")
    dummy_variant = state.config.variant is Variant.DUMMY
    controller = state.controller if dummy_variant and not state.over else None
    return Observation(
        seat=seat,
        players=state.config.players,
        seats=state.seats,
        variant=state.config.variant.value,
        round=state.round,
        turn=state.turn,
        direction="left" if state.direction > 0 else "right",
        # The dummy's pile is face down (R15): nobody sees it, not even "its" seat.
        hand=[card_view(state, c) for c in state.hands[seat]] if seat < state.config.players else [],
        tableaus=[_tableau(state, s) for s in range(state.seats)],
        puddings=state.puddings(),
        scores=list(state.scores),
        hand_sizes=[len(h) for h in state.hands],
        legal=[list(p) for p in legal_plays(state, seat)],
        controller=controller,
        dummy=controller == seat,
    )


def events(state: GameState, since: int = 0) -> list[dict[str, Any]]:
    """The public events of the game from log position ``since`` on, as plain dicts.

    Kinds: ``round_start``, ``reveal`` (every seat's cards of a turn, chopsticks
    returned, nigiri placed on wasabi), ``last_card`` (the cards played for the
    players at the end of a round, R6a), ``round_end`` and ``game_end``.
    ``len(state.log)`` is the position to pass next time.
    """
    kinds = KINDS
    kind_of = state.kind_of
    out: list[dict[str, Any]] = []

    def card(c: int) -> dict[str, Any]:
        return {"id": c, "card": kinds[kind_of[c]]}

    def wasabi(found: list[tuple[int, int, int]] | None) -> list[dict[str, int]]:
        return [{"seat": s, "nigiri": n, "wasabi": w} for s, n, w in found or ()]

    for entry in state.log[since:]:
        tag = entry[0]
        if tag == "round":
            _, rnd, direction, size = entry
            out.append({"type": "round_start", "round": rnd, "direction": "left" if direction > 0 else "right", "hand_size": size})
        elif tag == "reveal":
            _, rnd, turn, plays, returned, attached, controller = entry
            back = dict(returned or ())
            out.append(
                {
                    "type": "reveal",
                    "round": rnd,
                    "turn": turn,
                    "plays": [
                        {"seat": s, "cards": [card(c) for c in play], "chopsticks_returned": back.get(s)}
                        for s, play in enumerate(plays)
                    ],
                    "wasabi": wasabi(attached),
                    "controller": controller if controller >= 0 else None,
                }
            )
        elif tag == "last":
            _, rnd, turn, last, attached = entry
            out.append(
                {
                    "type": "last_card",
                    "round": rnd,
                    "turn": turn,
                    "cards": [{"seat": s, **card(c)} for s, c in enumerate(last)],
                    "wasabi": wasabi(attached),
                }
            )
        elif tag == "scored":
            _, rnd, points, symbols, maki, scores = entry
            out.append(
                {
                    "type": "round_end",
                    "round": rnd,
                    "points": list(points),
                    "maki_symbols": list(symbols),
                    "maki_points": list(maki),
                    "scores": list(scores),
                }
            )
        elif tag == "over":
            _, extra, scores, puddings, ranks = entry
            out.append(
                {
                    "type": "game_end",
                    "pudding_points": list(extra),
                    "scores": list(scores),
                    "puddings": list(puddings),
                    "ranks": list(ranks),
                }
            )
    return out
