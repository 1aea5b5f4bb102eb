"""A greedy bot, written with the Python SDK: it scores every legal play with a
hand-written heuristic and takes the best one. No search, no randomness: ties go
to the earliest play in view.legal, so the bot is deterministic.

A card is worth what it adds to your tableau now, plus what it is likely to add
before the round ends. "Likely" comes from card counting: the copies of a kind
still in play this round (in your hand, in the hands you saw pass by, and a share
of the cards you never saw) against the turns you have left.
"""

from collections import Counter

from protocol.cards import MAKI_SYMBOLS, NIGIRI_VALUE, dumpling_points
from protocol.sdk import Bot, run

CHOPSTICKS_COST = 1.0  # using chopsticks gives them away: only for a clearly better pair
DENIAL = 0.3  # dummy variant: how much we like handing the dummy the opponent's best card


def maki_points(symbols, seat):
    """RULES R10 for one seat: 6 for most symbols, 3 for second, ties split, 0 for none."""
    mine = symbols[seat]
    if mine == 0:
        return 0
    above = sum(1 for s in symbols if s > mine)
    tied = sum(1 for s in symbols if s == mine)
    if above == 0:
        return 6 // tied
    return 3 // tied if above == 1 else 0  # no second place after a tie for first


class Table:
    """What the heuristic needs to know about this turn, computed once per act."""

    def __init__(self, view):
        self.view = view
        self.turns = len(view.hand) - 1  # cards we will still take this round after this one
        self.pool = max(1, sum(view.hand_sizes))  # every card still in a hand this round
        self.symbols = [view.maki_symbols(s) for s in range(view.seats)]
        # Kinds still in play that we know of: our hand and the hands we saw pass by...
        known = view.known_hands()
        self.visible = Counter(c.card for c in view.hand)
        for cards in known.values():
            self.visible.update(c.card for c in cards)
        # ...plus a fair share of the cards we never saw: some are in other hands now.
        self.unseen = view.unseen_counts()
        hidden_in_hands = self.pool - len(view.hand) - sum(len(c) for c in known.values())
        self.share = max(0, hidden_in_hands) / max(1, sum(self.unseen.values()))

    def in_play(self, kind):
        """How many cards of `kind` we expect in the hands of this round, ours included."""
        return self.visible[kind] + self.unseen[kind] * self.share

    def more(self, kind):
        """How many more of `kind` may come our way, besides the one we are valuing."""
        return max(0.0, self.in_play(kind) - 1)

    def chance(self, more, turns):
        """A rough chance of picking up one of `more` cards in `turns` turns."""
        if more <= 0 or turns <= 0:
            return 0.0
        return min(0.9, more * turns / self.pool)

    def value(self, kind, counts, free_wasabi, seat):
        """Points that one more `kind` is worth to `seat`, whose tableau is `counts`."""
        n, t, view = counts[kind], self.turns, self.view
        more = self.more(kind)
        if kind == "tempura":  # a pair scores 5: finishing one is sure, starting one is a bet
            return 5.0 if n % 2 else 5 * self.chance(more, t)
        if kind == "sashimi":  # three score 10: count how many are still missing
            p = 1.0
            for i in range(2 - n % 3):
                p *= self.chance(more - i, t - i)
            return 10 * p
        if kind == "dumpling":  # 1, 3, 6, 10, 15: each one is worth more than the last
            bonus = 0.5 * self.chance(more, t) if n < 4 else 0.0
            return dumpling_points(n + 1) - dumpling_points(n) + bonus
        if kind in MAKI_SYMBOLS:  # the maki race against every other tableau
            symbols = list(self.symbols)
            symbols[seat] = sum(MAKI_SYMBOLS.get(k, 0) * c for k, c in counts.items())
            before = maki_points(symbols, seat)
            symbols[seat] += MAKI_SYMBOLS[kind]
            gain = maki_points(symbols, seat) - before
            if t <= 1:  # the race is nearly over: the gain is what counts
                return gain + 0.2 * MAKI_SYMBOLS[kind]
            return 0.3 * gain + 0.8 * MAKI_SYMBOLS[kind]  # early, a lead is easily lost
        if kind in NIGIRI_VALUE:  # tripled on a waiting wasabi (R7)
            return NIGIRI_VALUE[kind] * (3 if free_wasabi else 1)
        if kind == "wasabi":  # good early, if salmon or squid are likely to follow
            good = self.in_play("salmon_nigiri") + self.in_play("squid_nigiri")
            worth = 4.0 * self.chance(good, t)
            return worth * 0.4 if free_wasabi else worth
        if kind == "pudding":  # scored at the end of the game: worth more as it nears
            r = view.round
            mine = view.puddings[seat]
            others = [p for s, p in enumerate(view.puddings) if s != seat]
            worth = (0.8, 1.2, 2.0)[r - 1]
            if view.seats > 2 and mine <= min(others):
                worth += 0.7 * r  # climbing out of the -6
            if abs(mine - max(others)) <= 1:
                worth += 0.5 * r  # in a close race for the +6
            return worth
        if kind == "chopsticks":  # only useful if there are turns left to use them
            worth = 2.0 if t >= 4 else 1.0 if t >= 2 else 0.0
            return worth * 0.5 if counts["chopsticks"] else worth
        return 0.0

    def tableau(self, seat):
        return self.view.counts(seat), self.view.free_wasabi(seat)

    def score(self, play):
        """The value of one legal play: its cards in order, so [wasabi, squid] counts 9."""
        view, me = self.view, self.view.seat
        counts, free = self.tableau(me)
        total = 0.0
        for card_id in play.cards:
            kind = view.kind(card_id)
            total += self.value(kind, counts, free, me)
            counts = counts + Counter([kind])
            if kind == "wasabi":
                free += 1
            elif kind in NIGIRI_VALUE and free:
                free -= 1
        if len(play.cards) > 1:
            total -= CHOPSTICKS_COST
        if play.dummy_card is not None:  # we control the dummy (R15): deny the opponent
            kind = view.kind(play.dummy_card)
            total += DENIAL * self.value(kind, *self.tableau(1 - me), 1 - me)
        return total


class GreedyBot(Bot):
    name = "greedy"
    version = "1"

    def act(self, view):
        table = Table(view)
        best, best_score = view.legal[0], None
        for play in view.legal:  # strictly better only: ties keep the earlier play
            s = table.score(play)
            if best_score is None or s > best_score:
                best, best_score = play, s
        view.debug = {"score": round(best_score, 2)}
        return best


if __name__ == "__main__":
    run(GreedyBot())
