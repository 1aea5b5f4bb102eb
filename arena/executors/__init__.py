"""Where games are executed: game jobs in, game records out (jobs), in this process's pool or on Dask.
May import the one-game package, bots, engine and protocol; never the tournament, the store or the CLI."""
