"""The competition server's web application (Litestar, under uvicorn): pages, API, sessions.
May import competition, tournament, store, report, game, engine, protocol; it never plays a game."""
