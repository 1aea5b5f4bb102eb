"""Determinization (arena.engine.determinize): a sampled state agrees with everything
one seat has seen, and with nothing it has not.

The seat's knowledge comes from the SDK's card counting, fed the real act messages
of engine games (the scripted referee of helpers/sdk_helpers.py), as a search bot would get it.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import msgspec
import pytest
from sdk_helpers import InProcess, play_game

from arena.engine import (
    DECK_COUNTS,
    KINDS,
    GameConfig,
    GameState,
    apply_turn,
    determinize,
    legal_plays,
    new_game,
    observe,
    result,
)
from protocol import Act
from protocol.sdk import Bot, View

CONFIGS = [
    GameConfig(2),
    GameConfig(2, "alternate"),
    GameConfig(3),
    GameConfig(3, "alternate"),
    GameConfig(4),
    GameConfig(5),
    GameConfig(5, "alternate"),
    GameConfig(2, "dummy"),
]
IDS = [f"{c.players}p-{c.variant.value}" for c in CONFIGS]


def locations(state: GameState) -> list[int]:
    """Every card id wherever it is: hands (the dummy's pile too), tableaus, kept puddings,
    discard, draw pile."""
    ids = [c for h in state.hands for c in h] + [c for t in state.tableaus for c in t]
    ids += [c for k in state.kept_puddings for c in k] + state.discard + state.pile
    return ids


def play_out(state: GameState, rng: random.Random) -> None:
    while not state.over:
        plays: list[Any] = [None] * state.config.players
        for seat in state.deciding_seats():
            plays[seat] = rng.choice(legal_plays(state, seat))
        apply_turn(state, plays)


class Checker(Bot):
    """Plays randomly; at every act, determinizes from its view and checks the sample
    against the true state (which only the test can see). Failures are collected,
    since the SDK turns an exception in act() into a fallback."""

    def __init__(self) -> None:
        super().__init__()
        self.state: Any = None
        self.failures: list[str] = []
        self.checked = 0
        self.known_cards = 0

    def act(self, view: View) -> Any:
        try:
            self.check(view)
        except Exception as exc:  # the SDK would hide it behind a fallback
            self.failures.append(f"round {view.round} turn {view.turn}: {exc!r}")
        return self.rng.choice(view.legal)

    def check(self, view: View) -> None:
        true, me = self.state, view.seat
        sample = determinize(view, random.Random(self.checked))
        self.checked += 1
        # What the seat sees of the sample is exactly what it sees of the game.
        assert observe(sample, me) == observe(true, me)
        assert (sample.config, sample.round, sample.turn, sample.direction, sample.controller) == (
            true.config, true.round, true.turn, true.direction, true.controller,
        )
        assert sample.tableaus == true.tableaus and sample.wasabi_of == true.wasabi_of
        assert sample.counts == true.counts and sample.nigiri_points == true.nigiri_points
        assert sample.free_wasabi == true.free_wasabi and sample.chopsticks == true.chopsticks
        assert sample.puddings() == true.puddings() and sample.scores == true.scores
        assert [len(k) for k in sample.kept_puddings] == [len(k) for k in true.kept_puddings]
        assert sample.hands[me] == true.hands[me]
        assert [len(h) for h in sample.hands] == [len(h) for h in true.hands]
        assert len(sample.pile) == len(true.pile) and len(sample.discard) == len(true.discard)
        assert sum(map(len, sample.round_points)) == sum(map(len, true.round_points))
        for seat, cards in view.known_hands().items():
            assert {c.id for c in cards} <= set(sample.hands[seat])
            assert all(sample.kind(c.id) == c.card for c in cards)
            self.known_cards += len(cards)
        # One deck: every id exactly once, the deck's composition by kind.
        assert sorted(locations(sample)) == list(range(108))
        assert Counter(sample.kind_of) == Counter(dict(enumerate(DECK_COUNTS)))
        # The cards the seat cannot place are dealt from what it has not seen.
        known = {c.id for cs in view.known_hands().values() for c in cs}
        hidden = [c for s, h in enumerate(sample.hands) if s != me for c in h if c not in known] + sample.pile
        assert Counter(sample.kind(c) for c in hidden) == Counter({k: n for k, n in view.unseen_counts().items() if n})
        # The sample is a game: it plays on to a result.
        play_out(sample, random.Random(self.checked))
        assert len(result(sample).scores) == true.seats


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_sample_agrees_with_everything_the_seat_saw(config: GameConfig) -> None:
    for seed in range(12):
        seat = seed % config.players
        bot = Checker()

        def track(state: Any, _seat: int, _act: Act, bot: Checker = bot) -> None:
            bot.state = state

        play_game(config, seed, {seat: InProcess(bot)}, on_act=track)
        assert not bot.failures, bot.failures[0]
        assert bot.checked >= 3 * (config.hand_size - 1) - 2
        assert bot.known_cards > 0


def shuffle_hidden(state: GameState, seat: int, known: set[int], rng: random.Random) -> GameState:
    """Another true state that ``seat`` cannot tell from ``state``: the cards it has not
    seen (other hands' unknown cards, the dummy's pile, the draw pile) moved around."""
    other = state.clone()
    slots = [(s, i) for s, h in enumerate(other.hands) if s != seat for i, c in enumerate(h) if c not in known]
    cards = [other.hands[s][i] for s, i in slots] + other.pile
    rng.shuffle(cards)
    for (s, i), c in zip(slots, cards, strict=False):
        other.hands[s][i] = c
    other.pile = cards[len(slots):]
    if other.singles is not None:  # the engine keeps each hand's one-card plays beside it
        other.singles = [[(c,) for c in h] for h in other.hands]
    return other


class Recorder(Bot):
    """Plays randomly; keeps what it knew at every act, and the sample its view gave."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[dict[int, list[Any]], dict[str, int], GameState]] = []

    def act(self, view: View) -> Any:
        sample = determinize(view, random.Random(len(self.seen)))
        self.seen.append((view.known_hands(), view.unseen_counts(), sample))
        return self.rng.choice(view.legal)


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_sample_never_depends_on_what_the_seat_did_not_see(config: GameConfig) -> None:
    differed = 0
    for seed in range(4):
        seat = (seed + 1) % config.players
        bot, states = Recorder(), []
        play_game(config, seed, {seat: InProcess(bot)}, on_act=lambda state, *_, into=states: into.append(state.clone()))
        assert len(states) == len(bot.seen)
        for n, (true, (known, unseen, c)) in enumerate(zip(states, bot.seen, strict=True)):
            twin = shuffle_hidden(true, seat, {c.id for cs in known.values() for c in cs}, random.Random(n))
            assert observe(twin, seat) == observe(true, seat)
            differed += twin.hands != true.hands
            a = determinize(observe(true, seat), random.Random(n), known_hands=known, unseen=unseen)
            b = determinize(observe(twin, seat), random.Random(n), known_hands=known, unseen=unseen)
            assert (a.hands, a.pile, a.kind_of, a.discard, a.kept_puddings) == (
                b.hands, b.pile, b.kind_of, b.discard, b.kept_puddings,
            )
            # The SDK's View gives the same sample as the observation with its knowledge.
            assert (c.hands, c.pile, c.kind_of) == (a.hands, a.pile, a.kind_of)
    assert differed >= 10  # the twins really held other cards in the other hands


def test_observation_alone_in_round_1_and_what_it_cannot_do_later() -> None:
    state = new_game(GameConfig(3), 5)
    sample = determinize(observe(state, 1), random.Random(0))  # no knowledge: nothing known
    assert observe(sample, 1) == observe(state, 1)
    while state.round == 1:
        apply_turn(state, [legal_plays(state, s)[0] for s in range(3)])
    with pytest.raises(ValueError, match="round 2: pass unseen"):
        determinize(observe(state, 1), random.Random(0))


def test_unseen_cards_are_dealt_uniformly() -> None:
    """Round 1, turn 1 of a 2-player game: the opponent's 10 cards come from the 98 unseen,
    so each kind fills its share of them."""
    state = new_game(GameConfig(2), 9)
    obs = observe(state, 0)
    rng = random.Random(1)
    drawn: Counter[str] = Counter()
    samples = 2000
    for _ in range(samples):
        sample = determinize(obs, rng)
        drawn.update(sample.kind(c) for c in sample.hands[1])
    mine = Counter(c.card for c in obs.hand)
    for k, kind in enumerate(KINDS):
        expected = samples * 10 * (DECK_COUNTS[k] - mine[kind]) / 98
        assert abs(drawn[kind] - expected) < 0.1 * expected + 30, (kind, drawn[kind], expected)


def test_every_field_is_set_and_only_the_given_generator_is_used() -> None:
    state = new_game(GameConfig(4, "alternate"), 2)
    before = random.getstate()
    a = determinize(observe(state, 2), random.Random(3))
    assert random.getstate() == before
    for name in GameState.__slots__:
        assert hasattr(a, name), name
    b = determinize(observe(state, 2), random.Random(4))
    def kinds(state: GameState) -> list[list[str]]:
        return [[state.kind(c) for c in h] for h in state.hands]

    assert kinds(a)[2] == kinds(b)[2] and kinds(a) != kinds(b)  # a different draw, the same own hand
    assert legal_plays(a, 2) == legal_plays(state, 2)


def test_views_and_knowledge_that_do_not_fit_are_refused() -> None:
    state = new_game(GameConfig(2, "dummy"), 4)
    obs = observe(state, 0)
    with pytest.raises(ValueError, match="seat must be a player's seat"):
        determinize(observe(state, 2), random.Random(0))  # the dummy's seat sees nothing
    unseen = {kind: n for kind, n in zip(KINDS, DECK_COUNTS, strict=True)}
    with pytest.raises(ValueError, match="the counts do not add up"):
        determinize(obs, random.Random(0), unseen=unseen)  # forgets the hand it holds
    with pytest.raises(ValueError, match="unknown kinds"):
        determinize(obs, random.Random(0), unseen={"nori": 1})
    mine = obs.hand[0]
    with pytest.raises(ValueError, match=f"known_hands\\[1\\]: card {mine.id} is already placed"):
        determinize(obs, random.Random(0), known_hands={1: [mine]})
    with pytest.raises(ValueError, match="another seat"):
        determinize(obs, random.Random(0), known_hands={0: []})
    play_out(state, random.Random(0))
    with pytest.raises(ValueError, match="the game is over"):
        determinize(observe(state, 0), random.Random(0))
    short = msgspec.structs.replace(obs, hand=obs.hand[1:])
    with pytest.raises(ValueError, match="hand_sizes"):
        determinize(short, random.Random(0))
