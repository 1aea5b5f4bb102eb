"""Monte-Carlo search on the engine, written with the SDK: the strongest example bot.

Each decision it samples a full game state consistent with what it has seen
(arena.engine.determinize: its hand, every tableau, the hands it held this round;
the unseen cards dealt at random), tries each candidate play on it and plays the
round out with a fast greedy-ish policy for every seat. The end of the round is
scored exactly, with the puddings estimated. Every candidate is tried on the same
samples (a fairer comparison than fresh luck each time), and the weaker half is
dropped after 16, 32, 64... samples: a one-level search tree over determinizations.

Modes: by default it thinks for up to THINK_MS (80 ms, set by the MCTS_THINK_MS
environment variable) and never more than half of the act's time. With
MCTS_ITERATIONS=N (env in bot.toml) it runs a fixed number of playouts instead and
is fully deterministic: its generator is seeded by game_start.
"""

import os
import random
import time

from arena.engine import apply_turn, determinize, pudding_points
from protocol.sdk import Bot, run

THINK_MS = float(os.environ.get("MCTS_THINK_MS", "80"))
ITERATIONS = int(os.environ.get("MCTS_ITERATIONS", "0"))  # 0: think by the clock
MAX_CANDIDATES = 12
EPSILON = 0.1  # how often a playout picks a random card instead of the greedy one
DUMPLING_GAIN = (1, 2, 3, 4, 5, 0)
# Kinds, in the engine's order: tempura sashimi dumpling maki1 maki2 maki3 salmon squid
# egg pudding wasabi chopsticks.
NIGIRI = {6: 2, 7: 3, 8: 1}
MAKI = {3: 1, 4: 2, 5: 3}


def quick(kind, counts, wasabi, left):
    """A rough worth of one card to a tableau, `left` picks before the round ends."""
    if kind in NIGIRI:
        return NIGIRI[kind] * (3 if wasabi else 1)
    if kind in MAKI:
        return MAKI[kind] * 1.1
    if kind == 0:
        return 5.0 if counts[0] % 2 else 2.5 * (left > 0)
    if kind == 1:
        have = counts[1] % 3
        return 10.0 if have == 2 else (3.5 * (left > 0) if have else 2.0 * (left > 1))
    if kind == 2:
        return DUMPLING_GAIN[min(counts[2], 5)] + 0.5 * (left > 0)
    if kind == 9:
        return 2.2
    if kind == 10:
        return 0.0 if wasabi else (3.5 if left > 3 else 1.5 * (left > 1))
    return 1.0 * (left > 3)  # chopsticks: playouts never use them


def pick(state, seat, hand, rng, exclude=-1):
    if rng.random() < EPSILON:
        return rng.choice([c for c in hand if c != exclude])
    kind_of, counts, wasabi, left = state.kind_of, state.counts[seat], bool(state.free_wasabi[seat]), len(hand) - 1
    best, value = -1, -1.0
    for c in hand:
        v = quick(kind_of[c], counts, wasabi, left)
        if v > value and c != exclude:
            best, value = c, v
    return best


def policy(state, seat, rng):
    """A playout's play for one seat: its best card (and, controlling the dummy, the
    card the opponent would like most goes to the dummy)."""
    hand = state.hands[seat]
    own = pick(state, seat, hand, rng)
    if seat != state.controller:
        return (own,)
    return own, pick(state, 1 - seat, hand, rng, exclude=own)


def playout(state, me, play, rng):
    """Play `play` for `me`, the rest of the round by the policy; my margin at its end."""
    rnd, players = state.round, state.config.players
    plays = [None] * players
    while True:
        for s in state.deciding_seats():
            plays[s] = play if s == me and play else policy(state, s, rng)
        apply_turn(state, plays)
        play, plays = None, [None] * players
        if state.round != rnd or state.over:
            break
    scores = state.scores
    if not state.over:  # the puddings are scored after round 3: count them, discounted
        extra = pudding_points(state.puddings(), penalty=state.config.seats > 2)
        scores = [s + e * rnd / 3 for s, e in zip(scores, extra, strict=True)]
    others = [scores[s] for s in range(players) if s != me]
    return scores[me] - max(others)


def candidates(view):
    """Plays that differ in what they do: one per sequence of kinds (ids do not matter)."""
    seen = {}
    for play in view.legal:
        ids = (*play.cards, play.dummy_card) if view.dummy else tuple(play.cards)
        seen.setdefault(tuple(view.kind(c) for c in ids), ids)
    return list(seen.values())


def first_guess(state, view, play):
    """The policy's worth of a play, to choose which to search when there are many."""
    me, left = view.seat, len(view.hand) - 1
    own, given = (play[:-1], play[-1]) if view.dummy else (play, None)
    counts, wasabi = state.counts[me][:], bool(state.free_wasabi[me])
    worth = -1.5 * (len(own) - 1)  # the chopsticks go back into the hand
    for c in own:
        kind = state.kind_of[c]
        worth += quick(kind, counts, wasabi, left)
        counts[kind] += 1
        wasabi = kind == 10 or wasabi and kind not in NIGIRI
    if given is not None:  # the dummy takes a card the opponent would have liked
        other = 1 - me
        worth += 0.5 * quick(state.kind_of[given], state.counts[other], bool(state.free_wasabi[other]), left)
    return worth


class MctsBot(Bot):
    name = "mcts"
    version = "1"

    def act(self, view):
        plays = candidates(view)
        if len(plays) == 1:
            return list(plays[0])
        if len(plays) > MAX_CANDIDATES:  # chopsticks or the dummy: keep the likeliest
            sample = determinize(view, self.rng)  # only its tableaus are read
            plays.sort(key=lambda p: -first_guess(sample, view, p))
            plays = plays[:MAX_CANDIDATES]
        turn_ms = self.game.time.turn_ms if self.game and self.game.time.turn_ms > 0 else 2 * THINK_MS
        deadline = view.received + min(THINK_MS, turn_ms / 2, view.time_left_ms() / 2) / 1000
        totals, alive, samples, done = [0.0] * len(plays), list(range(len(plays))), 0, 0
        while True:
            began = time.monotonic()
            state = determinize(view, self.rng)
            seed = self.rng.getrandbits(32)
            for i in alive:
                totals[i] += playout(state.clone(), view.seat, plays[i], random.Random(seed))
            samples, done = samples + 1, done + len(alive)
            now = time.monotonic()
            if ITERATIONS and done >= ITERATIONS or not ITERATIONS and 2 * now - began >= deadline:
                break  # (by the clock: when another sample like this one would end late)
            if samples & (samples - 1) == 0 and samples >= 16 and len(alive) > 2:  # 16, 32, 64...
                alive = sorted(alive, key=lambda i: -totals[i])[: max(2, len(alive) // 2)]
        best = max(alive, key=lambda i: totals[i])
        view.debug = {"samples": samples, "playouts": done, "margin": round(totals[best] / samples, 2)}
        return list(plays[best])


if __name__ == "__main__":
    run(MctsBot())
