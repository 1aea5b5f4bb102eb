"""Tools for bot authors: validate and submit a bot, ask it about a position, play it (or a person) in one game, doctor, starters.
May import the game package, the bots, the engine, the protocol and the shared basics; not the tournament, store or command line."""
