"""`arena match`: is B better than A? Its bots, pairs of duplicate games (schedule, ledger), the runner and their statistics (SPRT, Elo, LOS).
It may import runs, executors, store, game, bots, engine, tournament.settings and the basics; only the command line and bench import it."""
