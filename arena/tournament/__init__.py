"""Tournaments: the settings and config files, the schedule, the runner, ratings and standings.
May import what runs share (arena.runs), the executors, the game package, the store, bots, engine and protocol; never the command line."""
