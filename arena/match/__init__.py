"""`arena match`: is B better than A? Paired duplicate-deal games (schedule, runner) and their statistics (SPRT, Elo, LOS).
It may import executors, store, game, bots, engine, tournament.settings and the basics; only the command line and bench import it."""
