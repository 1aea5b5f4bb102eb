"""Errors split by cause, in the manner of python-chess's InvalidMoveError/IllegalMoveError."""

from __future__ import annotations


class PlayError(ValueError):
    """A play the engine refused. The state is left exactly as it was.

    Attributes name everything a referee or a bot author needs: the seat, the
    round and turn, the cards as given, and the rule broken (e.g. ``"R8"``).
    """

    def __init__(
        self,
        message: str,
        *,
        seat: int | None,
        round: int,
        turn: int,
        cards: object,
        rule: str,
    ) -> None:
        where = f"seat {seat}, " if seat is not None else ""
        super().__init__(f"{where}round {round} turn {turn}: {message} [{rule}]")
        self.reason = message
        self.seat = seat
        self.round = round
        self.turn = turn
        self.cards = cards
        self.rule = rule


class InvalidPlayError(PlayError):
    """Not a well-formed play at all: not a list of card ids, wrong length, repeats."""


class IllegalPlayError(PlayError):
    """A well-formed play that the rules do not allow here: a card not in the hand,
    two cards without chopsticks, a dummy card in the wrong place."""
