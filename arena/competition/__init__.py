"""The competition server's core (no HTTP): settings, teams and tokens, uploads and their validation queue, the ladder.
May import the tournament, executors, store, game, bots, authoring, engine and protocol; argon2-cffi (extra `serve`), trio, msgspec."""

# `from arena.competition import Teams` works, and importing the package costs nothing until
# a name is used: each public name is looked up in its module on first use (PEP 562).
_EXPORTS = {
    "Competition": "config", "load_competition": "config",
    "CompetitionError": "errors", "UploadRefused": "errors", "RateLimited": "errors", "NotFound": "errors",
    "Forbidden": "errors",
    "Team": "teams", "Teams": "teams",
    "Submission": "submissions", "Submissions": "submissions",
    "Ladder": "ladder", "LadderState": "ladder", "Challenge": "ladder", "run_ladder": "ladder",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'arena.competition' has no attribute {name!r}")
    return getattr(__import__(f"arena.competition.{module}", fromlist=[name]), name)
