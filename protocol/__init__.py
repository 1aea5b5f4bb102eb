"""The wire contract between the arena's referee and bots (protocol v1).

This package imports only msgspec and the standard library, so that Python bots
can use it without the rest of the arena.
"""
