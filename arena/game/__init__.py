"""One game among bots: the referee that plays it, the acts it sends, its replay and game id.
May import the engine, the bots, the protocol and the shared basics (text, errors); nothing above."""
