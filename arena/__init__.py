"""Sushi Go! Arena: an exact rules engine, a subprocess referee and tournaments for bots."""

__version__ = "0.1.0"
