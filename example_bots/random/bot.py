"""A uniformly random bot, written with the Python SDK (protocol.sdk).

Every turn it picks one of the legal plays at random. It draws from ``self.rng``,
which the SDK seeds from game_start's ``seed``: the same game then gets the same
answers, so replays and duplicate games are reproducible.
"""

from protocol.sdk import Bot, run


class RandomBot(Bot):
    name = "random"
    version = "1"

    def act(self, view):
        # view.legal lists every legal play, dummy variant included: any of them is fine.
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    run(RandomBot())
