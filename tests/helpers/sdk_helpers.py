"""A scripted referee around the engine, for tests that drive a bot without the real
referee: the messages it sends (hello, game_start, act) and one whole game through them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import msgspec

import protocol
from arena.engine import (
    RULES_VERSION,
    GameConfig,
    apply_turn,
    deck_composition,
    events,
    legal_plays,
    new_game,
    observe,
    result,
)
from protocol import (
    Ack,
    Act,
    Action,
    Card,
    Event,
    GameOver,
    GameStart,
    Hello,
    LastAction,
    Limits,
    Play,
    Ready,
    Reply,
    Request,
    Rules,
    TableauCard,
    TimeControl,
    decode_reply,
    decode_request,
    encode_line,
    play_from_ids,
)
from protocol.sdk import Bot, Session

ROOT = Path(__file__).resolve().parents[2]



class Client(Protocol):
    """One bot process (or an in-process session): answers a request, numbering it."""

    def ask(self, request: Request) -> Reply | None: ...


def hello_message() -> Hello:
    return Hello(
        id=0,
        protocol=protocol.PROTOCOL_NAME,
        versions=list(protocol.SUPPORTED_VERSIONS),
        rules_version=RULES_VERSION,
        arena_version="test",
        limits=Limits(max_line_bytes=protocol.MAX_LINE_BYTES, hello_ms=10_000, turn_ms=1000, bank_ms=10_000),
    )


def game_start_message(config: GameConfig, seat: int, seed: int, game_id: str = "g") -> GameStart:
    names = [f"bot{s}" for s in range(config.players)] + (["dummy"] if config.seats > config.players else [])
    return GameStart(
        id=0,
        game_id=game_id,
        seat=seat,
        players=config.players,
        seats=config.seats,
        names=names,
        rules=Rules(
            rules_version=RULES_VERSION,
            variant=config.variant.value,
            hand_size=config.hand_size,
            rounds=3,
            directions=["left" if config.direction(r) > 0 else "right" for r in (1, 2, 3)],
            deck=deck_composition(),
        ),
        time=TimeControl(turn_ms=1000, bank_ms=10_000),
        seed=seed * 10 + seat,
    )


def act_message(
    state: Any,
    seat: int,
    news: list[dict[str, Any]],
    last: LastAction | None,
    game_id: str = "g",
    history: list[dict[str, Any]] | None = None,
    hands_seen: list[list[int]] | None = None,
) -> Act:
    """What a referee would send: the seat's observation, as an Act (with the public
    events before ``news`` and the seat's earlier hands of the round, when given)."""
    obs = observe(state, seat)
    view = msgspec.to_builtins(obs)
    return Act(
        id=0,
        game_id=game_id,
        seat=seat,
        round=obs.round,
        turn=obs.turn,
        direction=obs.direction,  # type: ignore[arg-type]
        time_ms=1000,
        hand=msgspec.convert(view["hand"], list[Card]),
        legal=[play_from_ids(ids, obs.dummy) for ids in obs.legal],
        dummy=obs.dummy,
        controller=obs.controller,
        tableaus=msgspec.convert(view["tableaus"], list[list[TableauCard]]),
        puddings=obs.puddings,
        scores=obs.scores,
        hand_sizes=obs.hand_sizes,
        banks_ms=[10_000] * obs.seats,
        last_action=last,
        events=msgspec.convert(news, list[Event]),
        history=msgspec.convert(history or [], list[Event]),
        hands_seen=[[Card(id=c, card=state.kind(c)) for c in hand] for hand in hands_seen or []],
    )


def play_game(
    config: GameConfig,
    seed: int,
    clients: dict[int, Client],
    on_act: Callable[[Any, int, Act], None] | None = None,
) -> tuple[Any, list[tuple[Act, Action]]]:
    """One engine game: the seats in ``clients`` are asked (game_start, every act,
    game_over), the others play seeded random legal plays. Every answer must be
    one of the act's legal plays. ``on_act(state, seat, act)`` runs before each ask."""
    state = new_game(config, seed)
    rng = random.Random(seed)
    seen = dict.fromkeys(clients, 0)
    last: dict[int, LastAction | None] = dict.fromkeys(clients)
    for seat, client in clients.items():
        assert isinstance(client.ask(game_start_message(config, seat, seed)), Ready)
    transcript: list[tuple[Act, Action]] = []
    hands: dict[int, list[list[int]]] = {}  # each asked seat's hands at the earlier turns of this round
    while not state.over:
        if state.turn == 1:
            hands = {seat: [] for seat in clients}
        plays: list[Any] = [None] * config.players
        for seat in state.deciding_seats():
            if seat not in clients:
                plays[seat] = rng.choice(legal_plays(state, seat))
                continue
            act = act_message(
                state, seat, events(state, seen[seat]), last[seat],
                history=events(state)[: seen[seat]], hands_seen=hands[seat],
            )
            hands[seat].append(list(state.hands[seat]))
            seen[seat] = len(state.log)
            if on_act is not None:
                on_act(state, seat, act)
            reply = clients[seat].ask(act)
            assert isinstance(reply, Action), reply
            play = Play(cards=reply.cards, dummy_card=reply.dummy_card)
            assert play in act.legal, f"seat {seat} round {act.round} turn {act.turn}: {play} is not legal"
            plays[seat] = play.ids(dummy=act.dummy)
            last[seat] = LastAction(status="ok", cards=reply.cards, dummy_card=reply.dummy_card, message="", elapsed_ms=1.0)
            transcript.append((act, reply))
        apply_turn(state, plays)
    res = result(state)
    for seat, client in clients.items():
        over = GameOver(
            id=0,
            game_id="g",
            scores=list(res.scores),
            puddings=list(res.puddings),
            ranks=list(res.ranks),
            faults={},
            reason="complete",
            last_action=last[seat],
            events=msgspec.convert(events(state, seen[seat]), list[Event]),
        )
        assert isinstance(client.ask(over), Ack)
    return state, transcript


class InProcess:
    """A bot driven through :class:`Session`, every message going through the codec."""

    def __init__(self, bot: Bot) -> None:
        self.session = Session(bot)
        self.next_id = 0

    def ask(self, request: Request) -> Reply | None:
        self.next_id += 1
        request = decode_request(encode_line(msgspec.structs.replace(request, id=self.next_id)))
        reply = self.session.handle(request)
        if reply is None:
            return None
        reply = decode_reply(encode_line(reply))
        assert reply.re == self.next_id
        return reply
