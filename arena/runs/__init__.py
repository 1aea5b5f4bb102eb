"""What every run of games shares (`arena run`, `arena match`): entering the bots, the store's writer, Ctrl-C.
May import the executors, the store, the game package, bots, engine and protocol; never the tournament, the match or the CLI."""
