"""What a team or a request can get wrong with the competition, as the arena's error type:
the web application maps each to its HTTP status (UploadRefused 400 or 413, RateLimited 429,
NotFound 404, Forbidden 403); the command line prints any of them as one line."""

from __future__ import annotations

from arena.errors import ArenaError


class CompetitionError(ArenaError):
    """A competition's setting, team or request that cannot be used; the message names it."""


class UploadRefused(CompetitionError):
    """An uploaded archive not taken: too big, not a .zip or .tar.gz, or a team's bot name changed."""

    def __init__(self, reason: str, *, too_large: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.too_large = too_large


class RateLimited(CompetitionError):
    """A team's uploads or challenges past the hourly cap; ``retry_after`` in whole seconds."""

    def __init__(self, what: str, retry_after: int) -> None:
        super().__init__(f"{what}: try again in {retry_after} s")
        self.retry_after = retry_after


class NotFound(CompetitionError):
    """No such team, submission, bot or challenge."""


class Forbidden(CompetitionError):
    """A team asking for what is not its own (or an admin's)."""
