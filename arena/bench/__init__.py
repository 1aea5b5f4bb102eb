"""Benchmarks of `arena bench`: the engine, the referee, the sandbox, a tournament and a Dask cluster, each against a baseline.
May import every part below the command line (engine, bots, game, store, tournament, executors); nothing imports it but the command line."""
