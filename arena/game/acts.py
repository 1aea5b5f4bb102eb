"""The ``act`` a seat receives (protocol/PROTOCOL.md): the reference build, and the
referee's fast encoder of a whole turn's acts.

:func:`build_act` makes the :class:`protocol.Act` message from :func:`arena.engine.observe`
(the one definition of what a seat may see); anything that wants to show a seat its act
(a replay tool asking a bot about a recorded position, say) uses it.

:class:`ActWriter` writes the same acts as lines, byte for byte what
``encode_line(build_act(...))`` gives, for the referee's hot path: the parts every seat
shares (tableaus, puddings, scores, hand sizes, banks, events since the previous turn, the
history before them) are built once per turn, and per seat only its own parts (id, seat,
time, hand, legal plays, last action, the hands it held earlier this round: each hand's
JSON is made once, and a seat's earlier hands grow by one each turn). Each event's JSON
is made once, straight from the engine's log (no dicts), and the replay keeps those same
bytes. Tests hold the two to byte equality over whole games of every variant.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Any

import msgspec

from arena.engine import DECK_SIZE, KINDS, GameState, Variant, legal_plays, observe
from protocol import Act, Card, LastAction, Play

__all__ = ["ActWriter", "build_act"]

_encode = msgspec.json.Encoder().encode
_PAIR = b'{"cards":[%d,%d]}'
_DUMMY_PAIR = b'{"cards":[%d],"dummy_card":%d}'
_DUMMY_TRIPLE = b'{"cards":[%d,%d],"dummy_card":%d}'
_ID_PART = [b'{"id":%d,"card":"' % c for c in range(DECK_SIZE)]
_KIND_PART = [kind.encode() + b'"}' for kind in KINDS]
_SINGLE = [b'{"cards":[%d]}' % c for c in range(DECK_SIZE)]  # a one-card play


@functools.lru_cache(maxsize=8)
def _deck_json(kind_of: tuple[int, ...]) -> tuple[bytes, ...]:
    return tuple(map(bytes.__add__, _ID_PART, map(_KIND_PART.__getitem__, kind_of)))


def _card_json(kind_of: Sequence[int]) -> list[bytes]:
    """Every card as JSON, e.g. {"id":17,"card":"dumpling"}; made once per deck."""
    return list(_deck_json(tuple(kind_of)))


def _wasabi_json(attached: Sequence[tuple[int, int, int]] | None) -> bytes:
    if not attached:
        return b"[]"
    return b"[" + b",".join([b'{"seat":%d,"nigiri":%d,"wasabi":%d}' % a for a in attached]) + b"]"


def build_act(
    state: GameState,
    seat: int,
    *,
    request_id: int,
    game_id: str,
    time_ms: int,
    banks_ms: list[int],
    last_action: LastAction | None,
    events: list[dict[str, Any]],
    history: list[dict[str, Any]],
    hands_seen: Sequence[Sequence[int]],
) -> Act:
    """The ``act`` for ``seat`` now: what :func:`~arena.engine.observe` lets it see, with
    the referee's request id, the seat's ``time_ms``, every seat's bank, what was applied
    for the seat at its previous decision, the public ``events`` since its previous
    request (``arena.engine.events(state, cursor)``), the ``history`` before them
    (``arena.engine.events(state)[:cursor]``) and the card ids of the seat's hands at the
    earlier turns of this round (``hands_seen``, turn 1 first)."""
    obs = observe(state, seat)
    dummy = obs.dummy
    legal = [Play(cards=p[:-1], dummy_card=p[-1]) if dummy else Play(cards=p) for p in obs.legal]
    return Act(
        id=request_id,
        game_id=game_id,
        seat=seat,
        round=obs.round,
        turn=obs.turn,
        direction=obs.direction,
        hand=obs.hand,  # engine Card structs encode exactly like protocol Cards
        tableaus=obs.tableaus,
        puddings=obs.puddings,
        scores=obs.scores,
        hand_sizes=obs.hand_sizes,
        banks_ms=banks_ms,
        events=events,
        history=history,
        hands_seen=[[Card(id=c, card=KINDS[state.kind_of[c]]) for c in hand] for hand in hands_seen],
        last_action=last_action,
        legal=legal,
        dummy=dummy,
        controller=obs.controller,
        time_ms=time_ms,
    )


class ActWriter:
    """One game's acts as wire lines, equal byte for byte to
    ``encode_line(build_act(...))``, with what all seats share built once per turn.

    Call :meth:`begin_turn` after each change of the state (each applied turn, every
    turn: it notes each seat's hand for the later acts' ``hands_seen``), then
    :meth:`line` for each seat asked this turn. Reads the state, never changes it.
    """

    def __init__(self, state: GameState, game_id: str) -> None:
        self.state = state
        # Every card as JSON, e.g. {"id":17,"card":"dumpling"} (the Card struct's encoding).
        self._card = _card_json(state.kind_of)
        self._single = _SINGLE
        self._open = b'{"type":"act","id":'
        self._game = b',"game_id":' + _encode(game_id) + b',"seat":'
        self._dummy_variant = state.config.variant is Variant.DUMMY
        self._turn_part = b""
        self._shared_part = b""
        self._controller: int | None = None
        self._legal: dict[int, list[tuple[int, ...]]] = {}
        # The game's events so far as JSON, one per log entry, each made once straight
        # from the log (no dicts): every act's events are a slice of them.
        self._event_json: list[msgspec.Raw] = []
        self._events_since: dict[int, bytes] = {}
        # Every card as it shows in a tableau: as in a hand, plus its wasabi for a nigiri on one.
        self._tcard = list(self._card)
        self._wasabi_of: dict[int, int] | None = None
        self._wasabi_seen = 0
        self._history_before: dict[int, bytes] = {}
        self._history_prefix: tuple[int, bytes] = (0, b"")  # (n, the first n events' JSON comma-joined)
        # Per player seat: its hand's JSON at this turn, and the JSON of its hands at the
        # earlier turns of this round, comma-joined (``hands_seen`` without its brackets).
        players = state.config.players
        self._hand_now: list[bytes] = [b""] * players
        self._hands_before: list[bytes] = [b""] * players
        self._hands_at: tuple[int, int] = (0, 0)  # the (round, turn) of _hand_now

    def begin_turn(self, banks_ms: Sequence[int]) -> None:
        """Build the parts every seat shares this turn; ``banks_ms`` is every seat's bank."""
        state = self.state
        self._sync_wasabi()
        tcard = self._tcard.__getitem__
        tableaus = [b"[" + b",".join(map(tcard, tableau)) + b"]" for tableau in state.tableaus]
        controller = state.controller if self._dummy_variant and not state.over else None
        self._controller = controller
        self._turn_part = b',"round":%d,"turn":%d,"direction":"%s","time_ms":' % (
            state.round,
            state.turn,
            b"left" if state.direction > 0 else b"right",
        )
        self._shared_part = b"".join(
            (
                b',"controller":',
                b"null" if controller is None else b"%d" % controller,
                b',"tableaus":[',
                b",".join(tableaus),
                b'],"puddings":',
                _encode(state.puddings()),
                b',"scores":',
                _encode(state.scores),
                b',"hand_sizes":',
                _encode([len(h) for h in state.hands]),
                b',"banks_ms":',
                _encode(banks_ms),
                b',"last_action":',
            )
        )
        self._events_since.clear()
        self._history_before.clear()
        self._legal.clear()
        self._sync_hands()

    def _sync_hands(self) -> None:
        """Note every player's hand at this turn; move last turn's into its earlier hands."""
        state = self.state
        at = (state.round, state.turn)
        if at == self._hands_at:
            return
        players = len(self._hand_now)
        if at[0] != self._hands_at[0]:
            self._hands_before = [b""] * players
        elif at[1] != self._hands_at[1] + 1:
            raise ValueError(f"begin_turn skipped a turn: at {at[0]}.{at[1]}, after {self._hands_at[0]}.{self._hands_at[1]}")
        else:
            before = self._hands_before
            for seat, hand in enumerate(self._hand_now):
                before[seat] = before[seat] + b"," + hand if before[seat] else hand
        card = self._card.__getitem__
        hands = state.hands
        self._hand_now = [b"[" + b",".join(map(card, hands[seat])) + b"]" for seat in range(players)]
        self._hands_at = at

    def _sync_wasabi(self) -> None:
        """Give each nigiri that sits on a wasabi its tableau JSON with the wasabi's id.
        The engine only adds to ``wasabi_of`` during a round (R7: fixed when the nigiri
        enters) and starts a new dict each round; a card enters a tableau once a game."""
        wasabi_of = self.state.wasabi_of
        if wasabi_of is not self._wasabi_of:
            self._wasabi_of, self._wasabi_seen = wasabi_of, 0
        if len(wasabi_of) > self._wasabi_seen:
            card, tcard = self._card, self._tcard
            for c, w in itertools.islice(wasabi_of.items(), self._wasabi_seen, None):
                tcard[c] = b'%s,"wasabi":%d}' % (card[c][:-1], w)
            self._wasabi_seen = len(wasabi_of)

    def event_json(self, cursor: int = 0) -> list[msgspec.Raw]:
        """The JSON of each event from log position ``cursor`` on, byte for byte what
        encoding ``events(state, cursor)`` gives, event by event (what the replay keeps)."""
        self._sync_events()
        return self._event_json[cursor:]

    def _sync_events(self) -> None:
        done = len(self._event_json)
        log = self.state.log
        if done < len(log):
            self._event_json += map(self._entry_json, log[done:])

    def _entry_json(self, entry: tuple[Any, ...]) -> msgspec.Raw:
        """One log entry's event as JSON (the shapes of :func:`arena.engine.events`)."""
        tag = entry[0]
        card = self._card
        if tag == "reveal":
            _, rnd, turn, plays, returned, attached, controller = entry
            back = dict(returned) if returned else {}
            parts = [
                b'{"seat":%d,"cards":[%s],"chopsticks_returned":%s}'
                % (s, b",".join(map(card.__getitem__, play)), b"%d" % back[s] if s in back else b"null")
                for s, play in enumerate(plays)
            ]
            data = b'{"type":"reveal","round":%d,"turn":%d,"plays":[%s],"wasabi":%s,"controller":%s}' % (
                rnd, turn, b",".join(parts), _wasabi_json(attached),
                b"null" if controller < 0 else b"%d" % controller,
            )
        elif tag == "round":
            _, rnd, direction, size = entry
            data = b'{"type":"round_start","round":%d,"direction":"%s","hand_size":%d}' % (
                rnd, b"left" if direction > 0 else b"right", size,
            )
        elif tag == "last":
            _, rnd, turn, last, attached = entry
            cards = b",".join([b'{"seat":%d,%s' % (s, card[c][1:]) for s, c in enumerate(last)])
            data = b'{"type":"last_card","round":%d,"turn":%d,"cards":[%s],"wasabi":%s}' % (
                rnd, turn, cards, _wasabi_json(attached),
            )
        elif tag == "scored":
            _, rnd, points, symbols, maki, scores = entry
            data = b'{"type":"round_end","round":%d,"points":%s,"maki_symbols":%s,"maki_points":%s,"scores":%s}' % (
                rnd, _encode(points), _encode(symbols), _encode(maki), _encode(scores),
            )
        elif tag == "over":
            _, extra, scores, puddings, ranks = entry
            data = b'{"type":"game_end","pudding_points":%s,"scores":%s,"puddings":%s,"ranks":%s}' % (
                _encode(extra), _encode(scores), _encode(puddings), _encode(ranks),
            )
        else:
            raise ValueError(f"unknown engine log entry {tag!r}")
        return msgspec.Raw(data)

    def _events_line_part(self, cursor: int) -> bytes:
        part = self._events_since.get(cursor)
        if part is None:
            self._sync_events()
            part = self._events_since[cursor] = b"[" + b",".join(self._event_json[cursor:]) + b"]"
        return part

    def _history_line_part(self, cursor: int) -> bytes:
        part = self._history_before.get(cursor)
        if part is None:
            self._sync_events()
            # The log only grows: extend the longest prefix made so far rather than join
            # the whole history again (most seats' cursors move on one turn at a time).
            done, joined = self._history_prefix
            if cursor >= done:
                more = b",".join(self._event_json[done:cursor])
                joined = joined + b"," + more if joined and more else joined or more
                self._history_prefix = (cursor, joined)
            else:
                joined = b",".join(self._event_json[:cursor])
            part = self._history_before[cursor] = b"[" + joined + b"]"
        return part

    def legal(self, seat: int) -> list[tuple[int, ...]]:
        """``legal_plays(state, seat)`` this turn, computed once (the act lists it, and
        the referee checks the reply against it)."""
        plays = self._legal.get(seat)
        if plays is None:
            plays = self._legal[seat] = legal_plays(self.state, seat)
        return plays

    def line(
        self, seat: int, request_id: int, time_ms: int, last_action: LastAction | None, events_since: int
    ) -> bytes:
        """``seat``'s act as one ``\\n``-terminated line; ``events_since`` is the seat's
        event cursor (the events are those of ``events(state, events_since)``, the history
        the ones before)."""
        state = self.state
        dummy = seat == self._controller
        plays = self.legal(seat)
        if dummy:  # (own, dummy) or (own1, own2, dummy)
            legal = b",".join([(_DUMMY_PAIR if len(p) == 2 else _DUMMY_TRIPLE) % p for p in plays])
        else:  # (card,) for each card in hand order, then (card1, card2) pairs with chopsticks (R16)
            single = self._single
            hand = state.hands[seat]
            if len(plays) == len(hand) and (not hand or plays[0] == (hand[0],)):  # no chopsticks: singles
                legal = b",".join(map(single.__getitem__, hand))
            else:
                legal = b",".join([single[p[0]] if len(p) == 1 else _PAIR % p for p in plays])
        evs = self._events_line_part(events_since)
        # The dummy's pile is face down (R15): nobody sees it, not even "its" seat.
        if seat < len(self._hand_now):
            hand, before = self._hand_now[seat], self._hands_before[seat]
        else:
            hand, before = b"[]", b""
        return b"".join(
            (
                self._open,
                b"%d" % request_id,
                self._game,
                b"%d" % seat,
                self._turn_part,
                b"%d" % time_ms,
                b',"hand":',
                hand,
                b',"legal":[',
                legal,
                b'],"dummy":true' if dummy else b'],"dummy":false',
                self._shared_part,
                b"null" if last_action is None else _encode(last_action),
                b',"events":',
                evs,
                b',"history":',
                self._history_line_part(events_since),
                b',"hands_seen":[',
                before,
                b"]}\n",
            )
        )
