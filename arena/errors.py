"""The one error type a user can cause: caught once by the CLI and printed without a traceback."""

from __future__ import annotations


class ArenaError(Exception):
    """Something the user can fix (a bad file, option or bot). The message names it."""
