"""`arena bench search`: the engine on the path a searching bot takes at every decision:
rebuild a whole state from the seat's view (determinize), clone it, and play the round
out at random. Rates are per CPU second of this process, so other load on the machine
slows them less than wall time would.

The views are taken from random games at every decision point of all three rounds.
Each view comes with the card counting a bot can do from public facts alone: the
cards not yet seen are the deck less the earlier rounds' tableaus (discarded or kept
puddings, all shown at the reveals) and less what the view shows now.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import asdict, dataclass

from arena.engine import (
    DECK_COUNTS,
    KINDS,
    GameConfig,
    GameState,
    Observation,
    Variant,
    apply_turn,
    determinize,
    legal_plays,
    new_game,
    observe,
)


@dataclass(frozen=True, slots=True)
class SearchBench:
    players: int
    variant: str
    samples: int  # determinize + clone + playout, each counted once
    cpu_seconds: float
    determinizations_per_s: float  # determinize alone
    playouts_per_s: float  # clone + the round played out at random
    samples_per_s: float  # the three together: one search sample
    determinize_share: float  # of a sample's CPU time

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def decision_views(config: GameConfig, games: int, seed: int) -> list[tuple[Observation, dict[str, int]]]:
    """Every deciding seat's view at every turn of ``games`` random games, each with the
    unseen counts that public facts give (see the module's docstring)."""
    rng = random.Random(seed)
    views: list[tuple[Observation, dict[str, int]]] = []
    for g in range(games):
        state = new_game(config, seed * 1_000_003 + g)
        while not state.over:
            plays: list = [None] * config.players
            for seat in state.deciding_seats():
                views.append((observe(state, seat), _unseen(state, seat)))
                legal = legal_plays(state, seat)
                plays[seat] = legal[rng.randrange(len(legal))]
            apply_turn(state, plays)
    return views


def _unseen(state: GameState, seat: int) -> dict[str, int]:
    obs = observe(state, seat)
    seen = Counter(state.kind(c) for c in state.discard)
    seen.update(state.kind(c) for kept in state.kept_puddings for c in kept)
    seen.update(c.card for c in obs.hand)
    seen.update(c.card for tableau in obs.tableaus for c in tableau)
    return {name: DECK_COUNTS[k] - seen[name] for k, name in enumerate(KINDS)}


def play_round_out(state: GameState, rng: random.Random) -> int:
    """Uniformly random legal plays through the public API until the round ends (or the
    game); returns the number of decisions."""
    rnd = state.round
    players = state.config.players
    randbelow = rng.randrange
    decisions = 0
    while not state.over and state.round == rnd:
        plays: list = [None] * players
        for seat in state.deciding_seats():
            legal = legal_plays(state, seat)
            plays[seat] = legal[randbelow(len(legal))]
            decisions += 1
        apply_turn(state, plays)
    return decisions


def bench_search(players: int, seconds: float = 2.0, variant: str = "standard", seed: int = 0) -> SearchBench:
    """Search samples over the decision views of a few random games, cycled until about
    ``seconds`` of CPU time are spent; the two parts are timed apart."""
    config = GameConfig(players, Variant(variant))
    views = decision_views(config, 20, seed)
    rng = random.Random(seed)
    clock = time.process_time
    samples = 0
    t_det = t_play = 0.0
    start = clock()
    while clock() - start < seconds:
        for view, unseen in views[samples % len(views):][:50]:
            t0 = clock()
            state = determinize(view, rng, unseen=unseen)
            t1 = clock()
            play_round_out(state.clone(), rng)
            t2 = clock()
            t_det += t1 - t0
            t_play += t2 - t1
            samples += 1
    total = t_det + t_play
    return SearchBench(
        players=players,
        variant=config.variant.value,
        samples=samples,
        cpu_seconds=round(total, 3),
        determinizations_per_s=round(samples / t_det, 1),
        playouts_per_s=round(samples / t_play, 1),
        samples_per_s=round(samples / total, 1),
        determinize_share=round(t_det / total, 3),
    )
