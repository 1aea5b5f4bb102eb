"""The referee's act encoder (ActWriter) against the reference act (build_act): byte for byte."""

from __future__ import annotations

import random

import msgspec
import pytest

from arena.engine import GameConfig, apply_turn, events, legal_plays, new_game
from arena.game.acts import ActWriter, build_act
from protocol import LastAction, decode_request, encode_line

_encode = msgspec.json.Encoder().encode

VARIANTS = [(2, "standard"), (3, "alternate"), (4, "standard"), (5, "standard"), (2, "dummy")]


@pytest.mark.parametrize(("players", "variant"), VARIANTS)
def test_every_act_of_random_games_is_byte_equal_to_the_reference(players: int, variant: str) -> None:
    seen = {"pairs": 0, "wasabi": 0, "dummy": 0, "last_action": 0, "old_cursor": 0, "hands_seen": 0}
    for seed in range(12):
        state = new_game(GameConfig(players, variant), seed)
        rng = random.Random(seed)
        game_id = f"game-{seed}\"quoted\""
        writer = ActWriter(state, game_id)
        cursors = [0] * state.seats
        hands: list[list[list[int]]] = [[] for _ in range(players)]  # each seat's hands this round
        while not state.over:
            if state.turn == 1:
                hands = [[] for _ in range(players)]
            banks = [rng.randrange(0, 20_000) for _ in range(state.seats)]
            writer.begin_turn(banks)
            plays: list[tuple[int, ...] | None] = [None] * players
            for seat in state.deciding_seats():
                last = None
                if rng.random() < 0.7:
                    last = LastAction(
                        status=rng.choice(["ok", "timeout"]), cards=[rng.randrange(108)],
                        dummy_card=None, message="a \"quoted\" message", elapsed_ms=rng.random() * 100,
                    )
                # Usually "since the previous request"; sometimes older (a seat that sat out).
                cursor = cursors[seat] if rng.random() < 0.8 else rng.randrange(len(state.log) + 1)
                request_id, time_ms = rng.randrange(1, 10**6), rng.randrange(0, 20_000)
                reference = encode_line(
                    build_act(
                        state, seat, request_id=request_id, game_id=game_id, time_ms=time_ms,
                        banks_ms=banks, last_action=last, events=events(state, cursor),
                        history=events(state)[:cursor], hands_seen=hands[seat],
                    )
                )
                line = writer.line(seat, request_id, time_ms, last, cursor)
                assert line == reference, (seed, state.round, state.turn, seat)
                assert [bytes(e) for e in writer.event_json(cursor)] == [_encode(e) for e in events(state, cursor)]
                assert writer.legal(seat) == legal_plays(state, seat)
                act = decode_request(line)
                seen["pairs"] += any(len(p.cards) == 2 for p in act.legal)
                seen["wasabi"] += any(c.wasabi is not None for t in act.tableaus for c in t)
                seen["dummy"] += act.dummy
                seen["last_action"] += last is not None
                seen["old_cursor"] += cursor != cursors[seat]
                seen["hands_seen"] += len(act.hands_seen) == state.turn - 1 > 0
                cursors[seat] = len(state.log)
                plays[seat] = rng.choice(legal_plays(state, seat))
            for seat in range(players):
                hands[seat].append(list(state.hands[seat]))
            apply_turn(state, plays)
        # The replay's events: each event's JSON, as encoding the engine's dict gives it.
        assert [bytes(e) for e in writer.event_json()] == [_encode(e) for e in events(state)]
    # The games went through the paths that matter (chopsticks, wasabi, the dummy).
    assert seen["pairs"] and seen["wasabi"] and seen["last_action"] and seen["old_cursor"] and seen["hands_seen"]
    assert seen["dummy"] or variant != "dummy"


def test_an_act_shows_the_seat_its_own_hand_only() -> None:
    state = new_game(GameConfig(3), 7)
    writer = ActWriter(state, "g")
    writer.begin_turn([0, 0, 0])
    for seat in range(3):
        act = decode_request(writer.line(seat, 1, 0, None, 0))
        assert [c.id for c in act.hand] == state.hands[seat]
        others = {c for s in range(3) if s != seat for c in state.hands[s]}
        assert not others & {c for p in act.legal for c in p.cards}
