"""What a game is: its static rules (:class:`GameConfig`), one playthrough in progress
(:class:`GameState`) and its outcome (:class:`GameResult`), with the names they share.

Data only: how a game is set up and played is in :mod:`arena.engine.game`, what a
seat may play in :mod:`arena.engine.plays`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .cards import DUMMY_HAND_SIZE, HAND_SIZE, KINDS, PUDDING

#: Stamped on every replay and game record: bump it whenever a rule's effect changes.
RULES_VERSION = "sushigo-rules/1.0"

#: A play names card ids in order. For the dummy's controller (R15) the last id
#: is the card given to the dummy: ``(own,) + (dummy,)`` or ``(own1, own2, dummy)``.
Play = tuple[int, ...]

LEFT, RIGHT = 1, -1

_copy = list.copy


class Variant(StrEnum):
    STANDARD = "standard"  # every round passes left (R6)
    ALTERNATE = "alternate"  # rounds 1 and 3 pass left, round 2 right (R14)
    DUMMY = "dummy"  # two players and a dummy third seat (R15)


@dataclass(frozen=True, slots=True)
class GameConfig:
    """The static rules of a game: how many players and which variant."""

    players: int = 4
    variant: Variant = Variant.STANDARD

    def __post_init__(self) -> None:
        object.__setattr__(self, "variant", Variant(self.variant))
        if type(self.players) is not int or not 2 <= self.players <= 5:
            raise ValueError(f"players must be 2 to 5 (R2), not {self.players!r}")
        if self.variant is Variant.DUMMY and self.players != 2:
            raise ValueError(f"the dummy variant is for 2 players (R15), not {self.players}")

    @property
    def seats(self) -> int:
        """Seats at the table: the players, plus the dummy in that variant (its seat is last)."""
        return 3 if self.variant is Variant.DUMMY else self.players

    @property
    def hand_size(self) -> int:
        return DUMMY_HAND_SIZE if self.variant is Variant.DUMMY else HAND_SIZE[self.players]

    def direction(self, round: int) -> int:
        """Passing direction of a round (1-based): ``LEFT`` (+1) or ``RIGHT`` (-1) (R6, R14)."""
        if self.variant is Variant.ALTERNATE and round == 2:
            return RIGHT
        return LEFT


class GameState:
    """A game in progress. Read it through :func:`observe` and the properties below;
    change it only through :func:`apply_turn`."""

    __slots__ = (
        "config",
        "seed",
        "kind_of",
        "pile",
        "round",
        "turn",
        "direction",
        "hands",
        "singles",
        "tableaus",
        "counts",
        "nigiri_points",
        "free_wasabi",
        "chopsticks",
        "wasabi_of",
        "kept_puddings",
        "discard",
        "scores",
        "round_points",
        "controller",
        "log",
        "over",
        "_result",
    )

    config: GameConfig
    seed: int
    kind_of: list[int]  # card id -> kind
    pile: list[int]  # the draw pile, top first (R3)
    round: int  # 1..3
    turn: int  # 1.. within the round
    direction: int
    hands: list[list[int]]  # per table seat; the dummy's pile in that variant (top first)
    #: Per seat, the one-card plays of its hand, in hand order: what legal_plays lists
    #: without chopsticks, kept beside the hands as they change so that listing costs
    #: one list copy. The tuples are the shared ones of ``plays.SINGLES``. ``None``
    #: in the dummy variant, whose plays all name the dummy's card too.
    singles: list[list[tuple[int]]] | None
    tableaus: list[list[int]]  # per table seat, in the order cards entered (R16)
    counts: list[list[int]]  # per table seat, per kind, what the tableau holds
    nigiri_points: list[int]  # per table seat, this round, wasabi included
    free_wasabi: list[list[int]]  # per table seat, empty wasabi, oldest first (R7)
    chopsticks: list[list[int]]  # per table seat, chopsticks in the tableau, oldest first
    wasabi_of: dict[int, int]  # nigiri id -> the wasabi it sits on, this round
    kept_puddings: list[list[int]]  # per table seat, puddings of finished rounds (R11)
    discard: list[int]
    scores: list[int]  # per table seat, points of finished rounds (pudding at the end)
    round_points: list[list[int]]  # one list per finished round
    controller: int  # the seat controlling the dummy this turn (R15); -1 otherwise
    log: list[tuple[Any, ...]]  # compact events; see arena.engine.view.events
    over: bool
    _result: GameResult | None

    # -- derived facts -------------------------------------------------------------
    @property
    def seats(self) -> int:
        return len(self.hands)

    @property
    def players(self) -> int:
        return self.config.players

    def kind(self, card: int) -> str:
        """The wire name of a card id."""
        return KINDS[self.kind_of[card]]

    def puddings(self) -> list[int]:
        """Puddings per table seat: kept from earlier rounds plus this round's tableau."""
        return [len(k) + c[PUDDING] for k, c in zip(self.kept_puddings, self.counts, strict=True)]

    def deciding_seats(self) -> list[int]:
        """The seats that choose this turn. Everyone in the standard game (the last
        card of a round is played for them, R6a); in the dummy variant the
        controller, and the other player while holding two or more cards (R15)."""
        if self.over:
            return []
        if self.controller < 0:
            return list(range(len(self.hands)))
        other = 1 - self.controller
        if len(self.hands[other]) >= 2:
            return [0, 1]
        return [self.controller]

    def clone(self) -> GameState:
        """An independent copy, for search. Costs a few list copies, no deep copy
        (``[*map(list.copy, ...)]``: no Python-level loop per seat)."""
        new = GameState.__new__(GameState)
        new.config = self.config
        new.seed = self.seed
        new.kind_of = self.kind_of  # never changes during a game: shared
        new.pile = self.pile[:]
        new.round = self.round
        new.turn = self.turn
        new.direction = self.direction
        new.hands = [*map(_copy, self.hands)]
        new.singles = None if self.singles is None else [*map(_copy, self.singles)]
        new.tableaus = [*map(_copy, self.tableaus)]
        new.counts = [*map(_copy, self.counts)]
        new.nigiri_points = self.nigiri_points[:]
        new.free_wasabi = [*map(_copy, self.free_wasabi)]
        new.chopsticks = [*map(_copy, self.chopsticks)]
        new.wasabi_of = dict(self.wasabi_of)
        new.kept_puddings = [*map(_copy, self.kept_puddings)]
        new.discard = self.discard[:]
        new.scores = self.scores[:]
        new.round_points = [*map(_copy, self.round_points)]
        new.controller = self.controller
        new.log = self.log[:]
        new.over = self.over
        new._result = self._result
        return new

    def __repr__(self) -> str:
        status = "over" if self.over else f"round {self.round} turn {self.turn}"
        return (
            f"<GameState {self.config.players}p {self.config.variant.value} "
            f"seed={self.seed} {status}>"
        )


@dataclass(frozen=True, slots=True)
class GameResult:
    """The outcome (R12–R13), per table seat. In the dummy variant the dummy is the
    last seat: it is scored like a player but can win nothing, so its rank is
    always ``players + 1`` and the real players are ranked between themselves."""

    scores: tuple[int, ...]  # totals, pudding included
    puddings: tuple[int, ...]
    pudding_points: tuple[int, ...]
    round_points: tuple[tuple[int, ...], ...]
    ranks: tuple[int, ...]

    @property
    def winners(self) -> tuple[int, ...]:
        return tuple(i for i, r in enumerate(self.ranks) if r == 1)
