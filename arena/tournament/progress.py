"""What a run tells as it goes (a :class:`Reporter`: bots ready or skipped, the plan,
each game done) and what it comes to (:class:`RunSummary`). Nothing here prints: the CLI
draws a reporter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from arena.game.record import GameRecord
from arena.runs.common import Entrant
from arena.tournament.schedule import ScheduledGame

__all__ = ["Entrant", "Plan", "Reporter", "RunSummary", "SilentReporter", "Skipped"]


@dataclass(frozen=True, slots=True)
class Skipped:
    name: str
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Plan:
    tournament_id: str
    players: int
    variant: str
    total: int  # games in the schedule
    already: int  # of those, already in the store
    jobs: int
    games_note: str = ""  # what --games N came to, and why, when it is not N


class Reporter(Protocol):
    def bot_ready(self, entrant: Entrant) -> None: ...
    def bot_skipped(self, skipped: Skipped) -> None: ...
    def planned(self, plan: Plan) -> None: ...
    def game_done(self, game: ScheduledGame, record: GameRecord, done: int, total: int) -> None: ...


class SilentReporter:
    def bot_ready(self, entrant: Entrant) -> None:
        pass

    def bot_skipped(self, skipped: Skipped) -> None:
        pass

    def planned(self, plan: Plan) -> None:
        pass

    def game_done(self, game: ScheduledGame, record: GameRecord, done: int, total: int) -> None:
        pass


@dataclass(slots=True)
class RunSummary:
    tournament_id: str
    results: Path
    players: int
    variant: str
    entrants: list[Entrant]
    skipped: list[Skipped]
    total: int
    already: int  # recorded before this run started its games (recovered ones included)
    played: int = 0
    recovered: int = 0  # of those, recorded now from replay files a killed run left
    void: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    play_seconds: float = 0.0  # the games themselves (after every bot's start)
    store_seconds: float = 0.0  # wall time the writer spent on replays and database rows
    store_cpu_seconds: float = 0.0  # CPU time of that writing
    play_cpu_seconds: float = 0.0  # CPU time of the whole arena process while the games ran
    referee_cpu_seconds: float = 0.0  # the part of it spent in referee processes (--jobs 2 and more)
    void_reasons: list[str] = field(default_factory=list)
    games_note: str = ""  # what --games N came to, and why, when it is not N

    @property
    def done(self) -> int:
        return self.already + self.played
