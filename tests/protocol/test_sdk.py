"""The Python bot SDK (protocol.sdk): the protocol it speaks, how it treats a bot's own
mistakes, and its card counting, checked against real engine games.

The scripted referee around the engine it plays against is in helpers/sdk_helpers.py.
"""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest
from sdk_helpers import ROOT, InProcess, act_message, game_start_message, hello_message, play_game

import protocol
from arena.engine import (
    GameConfig,
    apply_turn,
    deck_composition,
    events,
    legal_plays,
    new_game,
)
from protocol import (
    Ack,
    Act,
    Action,
    Card,
    GameOver,
    GameStart,
    HelloReply,
    LastAction,
    LastCard,
    Play,
    Ready,
    Request,
    Reveal,
    RevealedPlay,
    RoundStart,
    Shutdown,
    TableauCard,
    decode_reply,
    encode_line,
)
from protocol import cards as card_table
from protocol.sdk import Bot, GameMemory, Session, View, run

# -- bots for the tests --------------------------------------------------------------


class FirstBot(Bot):
    name = "first"
    version = "7"

    def act(self, view: View) -> Play:
        return view.legal[0]


class LastIdsBot(Bot):
    """Answers with plain ids: the last legal play, spelled the engine's way."""

    def act(self, view: View) -> list[int]:
        return list(view.legal[-1].ids())


def one_card_act(dummy: bool = False, last: LastAction | None = None, time_ms: int = 1000) -> Act:
    hand = [Card(id=11, card="tempura"), Card(id=12, card="wasabi"), Card(id=13, card="squid_nigiri")]
    if dummy:
        legal = [Play(cards=[a.id], dummy_card=b.id) for a in hand for b in hand if a != b]
    else:
        legal = [Play(cards=[c.id]) for c in hand]
    return Act(
        id=5,
        game_id="g",
        seat=0,
        round=1,
        turn=1,
        direction="left",
        time_ms=time_ms,
        hand=hand,
        legal=legal,
        dummy=dummy,
        controller=0 if dummy else None,
        tableaus=[[], [], []] if dummy else [[], []],
        puddings=[0, 0],
        scores=[0, 0],
        hand_sizes=[3, 3],
        banks_ms=[0, 0],
        last_action=last,
        events=[],
    )


# -- the protocol, in process --------------------------------------------------------


def test_hello_picks_a_common_version_and_names_the_bot() -> None:
    session = Session(FirstBot())
    reply = session.handle(msgspec.structs.replace(hello_message(), id=3, versions=[1, 2]))
    assert reply == HelloReply(re=3, version=1, name="first", bot_version="7")


def test_hello_without_a_common_version_still_answers_and_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    reply = Session(FirstBot()).handle(msgspec.structs.replace(hello_message(), id=1, versions=[9]))
    assert isinstance(reply, HelloReply) and reply.version == protocol.PROTOCOL_VERSION
    assert "[9]" in capsys.readouterr().err


def test_game_start_stores_the_game_and_seeds_rng() -> None:
    bot = FirstBot()
    start = msgspec.structs.replace(game_start_message(GameConfig(3), seat=2, seed=4), id=8)
    assert Session(bot).handle(start) == Ready(re=8)
    assert (bot.seat, bot.seed, bot.names, bot.rules) == (2, 42, ["bot0", "bot1", "bot2"], start.rules)
    assert bot.rng.random() == random.Random(42).random()


def test_shutdown_gets_no_reply() -> None:
    assert Session(FirstBot()).handle(Shutdown(id=9)) is None


@pytest.mark.parametrize(
    ("choice", "dummy", "expected"),
    [
        (Play(cards=[12]), False, Action(re=5, cards=[12])),
        ([13], False, Action(re=5, cards=[13])),
        (11, False, Action(re=5, cards=[11])),
        ([Card(id=12, card="wasabi")], False, Action(re=5, cards=[12])),
        ([11, 13], True, Action(re=5, cards=[11], dummy_card=13)),  # R15: the last id is the dummy's
        (Play(cards=[13], dummy_card=12), True, Action(re=5, cards=[13], dummy_card=12)),
    ],
)
def test_act_answers_a_play_or_ids_as_an_action(choice: Any, dummy: bool, expected: Action) -> None:
    class Chooser(Bot):
        def act(self, view: View) -> Any:
            return choice

    assert Session(Chooser()).handle(one_card_act(dummy)) == expected


def test_act_that_raises_answers_legal0_and_reports_the_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    class Broken(Bot):
        def act(self, view: View) -> Play:
            return view.legal[1 // 0]

    reply = Session(Broken()).handle(one_card_act())
    assert reply == Action(re=5, cards=[11])
    err = capsys.readouterr().err
    assert "act() raised in round 1 turn 1" in err and "Traceback" in err and "ZeroDivisionError" in err


@pytest.mark.parametrize(
    ("choice", "dummy", "fragment"),
    [
        ([99], False, "cards=[99], which is not a legal play"),
        ([11, 12], False, "not a legal play"),  # two cards without chopsticks
        ([11], True, "name your card(s), then the dummy's card"),
        (None, False, "must return a Play"),
        (["11"], False, "expected card ids"),
    ],
)
def test_an_illegal_answer_falls_back_to_legal0_and_says_why(
    choice: Any, dummy: bool, fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    class Wrong(Bot):
        def act(self, view: View) -> Any:
            return choice

    act = one_card_act(dummy)
    assert Session(Wrong()).handle(act) == act.legal[0].to_action(5)
    assert fragment in capsys.readouterr().err


def test_a_faulty_last_action_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    last = LastAction(status="timeout", cards=[3], dummy_card=None, message="no answer within 1000 ms", elapsed_ms=1000.5)
    Session(FirstBot()).handle(one_card_act(last=last))
    err = capsys.readouterr().err
    assert "timeout" in err and "no answer within 1000 ms" in err and "cards=[3]" in err


def test_hooks_are_called_and_their_errors_do_not_stop_the_bot(capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[str] = []

    class Hooked(FirstBot):
        def on_game_start(self, game: GameStart) -> None:
            calls.append(game.game_id)
            raise RuntimeError("oops in on_game_start")

        def on_game_over(self, over: GameOver) -> None:
            calls.append(over.reason)

    client = InProcess(Hooked())
    play_game(GameConfig(2), 1, {0: client})
    assert calls == ["g", "complete"]
    assert "oops in on_game_start" in capsys.readouterr().err


def test_debug_set_on_the_view_goes_into_the_action() -> None:
    class Chatty(Bot):
        def act(self, view: View) -> Play:
            view.debug = {"why": "first"}
            return view.legal[0]

    reply = Session(Chatty()).handle(one_card_act())
    assert isinstance(reply, Action) and reply.debug == {"why": "first"}


def test_time_left_counts_down_and_is_infinite_without_deadline() -> None:
    left: list[float] = []

    class Clock(Bot):
        def act(self, view: View) -> Play:
            left.append(view.time_left_ms())
            return view.legal[0]

    session = Session(Clock())
    session.handle(one_card_act(time_ms=1000))
    session.handle(one_card_act(time_ms=0))
    assert 900 < left[0] <= 1000 and left[1] == float("inf")


# -- card counting, against the engine's ground truth --------------------------------


class Counting(Bot):
    """Checks, at every act, what the view remembers against the engine state (which a
    real bot never sees), and plays randomly. The SDK turns an exception in act() into
    a fallback, so failures are collected for the test to assert on."""

    def __init__(self) -> None:
        super().__init__()
        self.state: Any = None
        self.seen_ids: set[int] = set()
        self.checked_known = 0
        self.failures: list[str] = []

    def act(self, view: View) -> Play:
        try:
            self.check(view)
        except AssertionError:
            self.failures.append(f"round {view.round} turn {view.turn}: {traceback.format_exc()}")
        return self.rng.choice(view.legal)

    def check(self, view: View) -> None:
        state = self.state
        me = view.seat
        # What the bot saw: its hands, every tableau, every revealed or last card.
        self.seen_ids.update(c.id for c in view.hand)
        self.seen_ids.update(c.id for t in view.tableaus for c in t)
        for event in view.events:
            if isinstance(event, Reveal):
                self.seen_ids.update(c.id for p in event.plays for c in p.cards)
            elif isinstance(event, LastCard):
                self.seen_ids.update(c.id for c in event.cards)
        for card_id in self.seen_ids:
            assert view.kind(card_id) == state.kind(card_id)
        unseen = view.unseen_counts()
        truth = Counter(state.kind(c) for c in range(108) if c not in self.seen_ids)
        assert unseen == {kind: truth[kind] for kind in card_table.KINDS}
        assert all(unseen[state.kind(c)] > 0 for c in state.pile)  # the pile is never seen
        assert view.hands_seen[view.turn] == view.hand
        assert sorted(view.hands_seen) == list(range(1, view.turn + 1)) or view.variant == "dummy"
        # Every card we think a seat holds, it holds (a subset in the dummy variant, R15).
        known = view.known_hands()
        for seat, cards in known.items():
            assert {c.id for c in cards} <= set(state.hands[seat]), (seat, cards)
        if view.variant != "dummy":
            # Hands we held within the last players-1 turns are known exactly.
            step = 1 if view.direction == "left" else -1
            for back in range(1, min(view.turn, view.players)):
                seat = (me + back * step) % view.players
                assert {c.id for c in known.get(seat, [])} == set(state.hands[seat])
                self.checked_known += 1


@pytest.mark.parametrize(
    "config",
    [GameConfig(2), GameConfig(3, "alternate"), GameConfig(4), GameConfig(5, "alternate"), GameConfig(2, "dummy")],
    ids=lambda c: f"{c.players}p-{c.variant.value}",
)
def test_card_counting_matches_the_engine(config: GameConfig) -> None:
    for seed in (1, 2):
        for seat in range(config.players):
            bot = Counting()

            def track(state: Any, _seat: int, _act: Act, bot: Counting = bot) -> None:
                bot.state = state

            play_game(config, seed, {seat: InProcess(bot)}, on_act=track)
            assert not bot.failures, bot.failures[0]
            if config.variant != "dummy":
                assert bot.checked_known > 0


def test_chopsticks_returned_to_a_hand_are_followed() -> None:
    """R8: the chopsticks that go back into the hand we passed on are known to be there."""
    view_known: dict[int, list[Card]] = {}

    class Peek(Bot):
        def act(self, view: View) -> Play:
            view_known.clear()
            view_known.update(view.known_hands())
            return view.legal[0]

    session = Session(Peek())
    session.handle(msgspec.structs.replace(game_start_message(GameConfig(3), seat=0, seed=1), id=1))
    first = msgspec.structs.replace(
        one_card_act(), id=2, tableaus=[[TableauCard(id=40, card="chopsticks")], [], []], events=[RoundStart(round=1, direction="left", hand_size=3)]
    )
    session.handle(first)
    reveal = Reveal(
        round=1,
        turn=1,
        plays=[
            RevealedPlay(seat=0, cards=[Card(id=11, card="tempura"), Card(id=12, card="wasabi")], chopsticks_returned=40),
            RevealedPlay(seat=1, cards=[Card(id=21, card="dumpling")], chopsticks_returned=None),
            RevealedPlay(seat=2, cards=[Card(id=31, card="pudding")], chopsticks_returned=None),
        ],
        wasabi=[],
        controller=None,
    )
    second = msgspec.structs.replace(
        one_card_act(), id=3, turn=2, hand=[Card(id=32, card="egg_nigiri"), Card(id=33, card="maki2")],
        legal=[Play(cards=[32]), Play(cards=[33])], tableaus=[[], [], []], events=[reveal],
    )
    session.handle(second)
    assert view_known == {1: [Card(id=13, card="squid_nigiri"), Card(id=40, card="chopsticks")]}


def _memory_facts(memory: GameMemory, seat: int) -> tuple[Any, ...]:
    packets = [(p.holder, list(p.cards.items())) for p in memory._packets]
    return (memory.kinds, memory.hands_seen, memory.round, packets, memory.unseen_counts(), memory.known_hands(seat))


class Restarts(Bot):
    """At every act, compares its memory (fed by every request) with that of a bot that
    starts at this very act: a fresh memory fed this act alone. Plays randomly."""

    def __init__(self) -> None:
        super().__init__()
        self.failures: list[str] = []
        self.acts = 0
        self.without_history_differs = 0

    def act(self, view: View) -> Play:
        self.acts += 1
        fresh = GameMemory(self.game)
        fresh.update(view.act)
        if _memory_facts(fresh, view.seat) != _memory_facts(view.memory, view.seat):
            self.failures.append(f"round {view.round} turn {view.turn}")
        blind = GameMemory(self.game)  # what the act's news alone would tell
        blind.update(msgspec.structs.replace(view.act, history=[], hands_seen=[]))
        self.without_history_differs += _memory_facts(blind, view.seat) != _memory_facts(view.memory, view.seat)
        return self.rng.choice(view.legal)


@pytest.mark.parametrize(
    "config",
    [GameConfig(2), GameConfig(3, "alternate"), GameConfig(4), GameConfig(5), GameConfig(2, "dummy")],
    ids=lambda c: f"{c.players}p-{c.variant.value}",
)
def test_a_bot_started_at_any_act_remembers_what_one_that_saw_every_request_does(config: GameConfig) -> None:
    """The act is self-sufficient: its history and hands_seen rebuild the SDK's card
    counting exactly (kinds, hands held, who holds what is left of them, unseen counts)."""
    for seed in (1, 2, 3):
        for seat in range(config.players):
            bot = Restarts()
            play_game(config, seed, {seat: InProcess(bot)})
            assert not bot.failures, (seed, seat, bot.failures)
            # Without the new fields a restarted bot would have known less nearly every time.
            assert bot.without_history_differs >= bot.acts - 1, (seed, seat)


def test_the_card_table_copies_the_engines() -> None:
    from arena.engine import cards as engine

    assert card_table.KINDS == engine.KINDS
    assert deck_composition() == card_table.DECK
    assert {k: s for k, s in zip(engine.KINDS, engine.MAKI_SYMBOLS, strict=True) if s} == card_table.MAKI_SYMBOLS
    assert {k: v for k, v in zip(engine.KINDS, engine.NIGIRI_VALUE, strict=True) if v} == card_table.NIGIRI_VALUE
    assert card_table.DUMPLING_POINTS == engine.DUMPLING_POINTS
    assert card_table.WASABI_FACTOR == engine.WASABI_FACTOR
    assert (card_table.TEMPURA_SET, card_table.TEMPURA_POINTS) == (engine.TEMPURA_SET, engine.TEMPURA_POINTS)
    assert (card_table.SASHIMI_SET, card_table.SASHIMI_POINTS) == (engine.SASHIMI_SET, engine.SASHIMI_POINTS)
    assert (card_table.MAKI_FIRST, card_table.MAKI_SECOND) == (engine.MAKI_FIRST, engine.MAKI_SECOND)
    assert card_table.PUDDING_BONUS == engine.PUDDING_BONUS
    assert [card_table.dumpling_points(n) for n in range(8)] == [0, 1, 3, 6, 10, 15, 15, 15]


def test_ids_answers_play_every_variant_in_process() -> None:
    for config in (GameConfig(2), GameConfig(4, "alternate"), GameConfig(2, "dummy")):
        for seat in range(config.players):
            _, transcript = play_game(config, 3, {seat: InProcess(LastIdsBot())})
            assert all(reply.cards == act.legal[-1].cards for act, reply in transcript)


# -- as a real process ---------------------------------------------------------------

SCRIPT_BOT = textwrap.dedent(
    """
    import sys
    from protocol.sdk import Bot, run

    class Script(Bot):
        name = "script"
        version = "2"

        def act(self, view):
            print("a stray print goes to stderr")
            if view.turn == 2:
                raise ValueError("deliberate bug at turn 2")
            return view.legal[-1]

        def on_game_over(self, over):
            self.log("game over:", over.ranks)

    run(Script())
    print("after run", file=sys.stderr)
    """
)


def test_a_script_bot_speaks_the_protocol_over_pipes(tmp_path: Path) -> None:
    script = tmp_path / "bot.py"
    script.write_text(SCRIPT_BOT)
    config = GameConfig(2)
    state = new_game(config, 5)
    acts = []
    requests: list[Request] = [hello_message(), game_start_message(config, 0, 5)]
    seen = 0
    for _ in range(3):
        act = act_message(state, 0, events(state, seen), None)
        seen = len(state.log)
        acts.append((len(requests), act))
        requests.append(act)
        apply_turn(state, [legal_plays(state, 0)[-1], legal_plays(state, 1)[0]])
    requests.append(GameOver(id=0, game_id="g", scores=[1, 2], puddings=[0, 0], ranks=[2, 1], faults={}, reason="complete", last_action=None, events=[]))
    requests.append(Shutdown(id=0))
    stdin = b"".join(encode_line(msgspec.structs.replace(r, id=i + 1)) for i, r in enumerate(requests))
    out = subprocess.run([sys.executable, str(script)], input=stdin, capture_output=True, timeout=20, cwd=tmp_path, env=_env())
    assert out.returncode == 0, out.stderr.decode()
    replies = [decode_reply(line) for line in out.stdout.splitlines()]  # only protocol lines on stdout
    assert [r.re for r in replies] == list(range(1, len(requests)))  # everything but shutdown
    assert replies[0] == HelloReply(re=1, version=1, name="script", bot_version="2")
    assert replies[1] == Ready(re=2)
    for index, act in acts:
        expected = act.legal[0] if act.turn == 2 else act.legal[-1]
        assert replies[index] == expected.to_action(index + 1)
    assert replies[-1] == Ack(re=len(requests) - 1)
    err = out.stderr.decode()
    assert "a stray print goes to stderr" in err
    assert "deliberate bug at turn 2" in err and "Traceback" in err
    assert "game over: [2, 1]" in err and "after run" in err


def test_the_sdk_returns_at_end_of_input_and_skips_unreadable_lines(tmp_path: Path) -> None:
    import io

    stdin = io.BytesIO(b"not json\n\n" + encode_line(msgspec.structs.replace(hello_message(), id=4)))
    stdout = io.BytesIO()
    run(FirstBot(), stdin, stdout)
    assert decode_reply(stdout.getvalue()) == HelloReply(re=4, version=1, name="first", bot_version="7")


def test_the_sdk_needs_nothing_of_the_arena() -> None:
    code = "import sys, protocol.sdk; print(sorted(m for m in sys.modules if m.split('.')[0] in ('arena', 'trio', 'typer', 'rich')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_env())
    assert out.stdout.strip() == "[]"


def test_every_name_a_bot_author_imported_from_the_sdk_is_still_there() -> None:
    """Bot authors write ``from protocol.sdk import ...``: the SDK's own names (its
    ``__all__``) and the message types a View hands out stay importable from it, now
    that the memory and the view are modules of their own, and they are the same objects."""
    import protocol.sdk as sdk

    assert sdk.__all__ == ["Bot", "GameMemory", "Session", "View", "run"]
    assert (sdk.Bot, sdk.GameMemory, sdk.Session, sdk.View, sdk.run) == (Bot, GameMemory, Session, View, run)
    for name in ("Act", "Action", "Card", "Event", "GameOver", "GameStart", "Hello", "HelloReply",
                 "LastAction", "LastCard", "Play", "Ready", "Reply", "Request", "Reveal", "RoundEnd",
                 "RoundStart", "Rules", "SeatCard", "Shutdown", "TableauCard"):
        assert getattr(sdk, name) is getattr(protocol, name), name


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env
