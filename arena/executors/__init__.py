"""Where games are executed: game jobs in, game records out (:mod:`.jobs`), in this process's pool or on Dask.

May import the one-game modules (referee, replay), bots, engine and protocol; never the tournament, the store or the CLI.
"""
