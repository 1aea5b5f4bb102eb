"""Tournaments: the settings, the schedule, the runner (:mod:`.runner`), ratings and standings.

May import the executors, the one-game modules, the store, bots, engine and protocol; never the command line.
"""
