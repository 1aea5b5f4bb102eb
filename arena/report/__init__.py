"""The tournament as a static web site: the page builder and the scripts and styles it ships (assets/).
May import the store, the ratings and standings, the game package (replays) and the shared basics."""
