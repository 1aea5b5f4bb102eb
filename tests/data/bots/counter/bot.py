"""A deterministic card-counting test bot, written with the SDK.

Every choice depends on what the bot has counted so far this game: it takes the play
whose cards are of the kinds with the fewest copies still in play (unseen, plus known
to sit in the other hands, plus in its own hand), the earliest such play on a tie. It
uses no random numbers, so a process started at any act (``arena replay --ask``) must
make the recorded choice again, and its ``debug`` shows what it counted.
"""

from protocol.sdk import Bot, run


class CounterBot(Bot):
    name = "counter"
    version = "1"

    def act(self, view):
        unseen = view.unseen_counts()
        known = view.known_hands()
        in_play = dict(unseen)
        for cards in [view.hand, *known.values()]:
            for c in cards:
                in_play[c.card] = in_play.get(c.card, 0) + 1

        def cost(play):
            return sum(in_play[view.kind(card_id)] for card_id in play.cards) / len(play.cards)

        best = min(view.legal, key=cost)  # min keeps the first of equals
        view.debug = {
            "unseen": {kind: n for kind, n in sorted(unseen.items()) if n},
            "known": {str(seat): sorted(c.id for c in cards) for seat, cards in sorted(known.items())},
            "turns_seen": sorted(view.hands_seen),
        }
        return best


if __name__ == "__main__":
    run(CounterBot())
