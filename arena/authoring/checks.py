"""What `arena validate` reports: the sections of protocol/PROTOCOL.md a failure points to,
each :class:`Check` judged from the recorded :class:`Exchange` s, and the whole
:class:`ValidationReport`."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from arena.authoring.situations import scripts
from arena.bots.manifest import BotManifest

# -- where PROTOCOL.md covers what ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Section:
    """A numbered section of protocol/PROTOCOL.md (its heading is ``## N. title``)."""

    number: int
    title: str

    def __str__(self) -> str:
        return f"§{self.number} {self.title}"


FRAMING = Section(2, "Framing: lines of JSON")
LOCKSTEP = Section(3, "Lock-step: `id` and `re`")
RULES_BRIEF = Section(5, "The rules in brief")
MESSAGES = Section(6, "Messages")
SHARED = Section(7, "Shared objects")
EVENTS = Section(8, "Events")
LEGAL = Section(9, "The `legal` list")
DUMMY = Section(10, "The two-player dummy variant")
TIME = Section(11, "Time")
FAULTS = Section(12, "Faults")
PACKAGING = Section(15, "Packaging your bot")
SECTIONS = (FRAMING, LOCKSTEP, RULES_BRIEF, MESSAGES, SHARED, EVENTS, LEGAL, DUMMY, TIME, FAULTS, PACKAGING)

FAULT_SECTION = {"timeout": TIME, "malformed": FRAMING, "protocol": LOCKSTEP, "illegal": LEGAL, "crash": FAULTS}
FAULT_HINT = {
    "timeout": "answer well within time_ms, and flush stdout after every line (a buffered answer never arrives)",
    "malformed": "stdout carries only protocol lines, one JSON object each, with every field of the right type; log to stderr",
    "protocol": "answer each request exactly once, with re equal to its id and the reply type it asks for",
    "illegal": "answer with a copy of one entry of legal",
    "crash": "the process ended or stopped reading its input; its stderr says why",
}


# -- results ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the verdict: a situation the bot must handle, and how it did."""

    name: str
    passed: bool
    message: str  # the whole story: what was sent, what came back, what was expected
    protocol_section: str
    summary: str = ""  # a few words for a table; the message when empty
    #: The message as labelled parts, for a reader: ("sent", "act id=4 …"), ("got", …)…
    details: tuple[tuple[str, str], ...] = ()

    @property
    def short(self) -> str:
        return self.summary or self.message

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "message": self.message, "protocol_section": self.protocol_section}


@dataclass(slots=True)
class ValidationReport:
    """The verdict on one bot. ``passed`` only if every check passed."""

    bot: str
    path: str
    checks: list[Check]
    startup_ms: float | None = None
    decisions_ms: list[float] = field(default_factory=list)
    manifest: BotManifest | None = None
    sandbox: str = ""  # the sandbox level the bot was built and started at
    #: The last STDERR_KEEP characters of what the bot wrote to stderr during the validation.
    stderr: str = ""

    @property
    def warnings(self) -> list[str]:
        """What passed but deserves a look: a bot that writes to stderr may have hit an
        error it covered up (an SDK falls back to a legal play), which no check sees."""
        if not self.stderr.strip():
            return []
        lines = len(self.stderr.rstrip().splitlines())
        if not self.passed:
            return [f"the bot wrote to stderr during the validation ({lines} line(s) kept, below): it may say what went wrong"]
        aside = next((g.label for g in scripts() if g.set_aside), "")
        return [
            f"the bot wrote to stderr during the validation ({lines} line(s) kept, below): "
            "a bot that recovers from its own errors (say by playing a random card) passes every check, "
            f"so read it (in '{aside}' the validator sets an answer aside on purpose: a note about that is expected)"
        ]

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    @property
    def decision_median_ms(self) -> float | None:
        return round(statistics.median(self.decisions_ms), 3) if self.decisions_ms else None

    @property
    def decision_max_ms(self) -> float | None:
        return round(max(self.decisions_ms), 3) if self.decisions_ms else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "path": self.path,
            "passed": self.passed,
            "checks": [c.to_dict() for c in self.checks],
            "startup_ms": None if self.startup_ms is None else round(self.startup_ms, 3),
            "decision_ms": {"median": self.decision_median_ms, "max": self.decision_max_ms, "count": len(self.decisions_ms)},
            "sandbox": self.sandbox or None,
            "stderr": self.stderr,
            "warnings": self.warnings,
        }


@dataclass(slots=True)
class Exchange:
    """One request to the bot and what came of it."""

    game: str  # the label of the scripted game
    what: str  # "game_start", "act" or "game_over"
    round: int
    turn: int
    sent: str  # the request, summarised
    situations: frozenset[str]
    status: str  # "ok", "set_aside" (the validator's own doing), or a fault kind
    received: str  # the answer, or what went wrong instead
    expected: str
    section: Section
    elapsed_ms: float | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "set_aside")

    @property
    def where(self) -> str:
        if self.what == "act":
            return f"{self.game}, round {self.round} turn {self.turn}"
        return f"{self.game}, {self.what}"

    @property
    def summary(self) -> str:
        return f"{self.status} at {self.where}"

    def describe(self) -> str:
        text = f"{self.where}: sent {self.sent}; got {self.received}; expected {self.expected}"
        if not self.ok:
            text += f" (fault: {self.status}; {FAULT_HINT.get(self.status, '')})"
        return text

    def details(self, situation: str = "") -> tuple[tuple[str, str], ...]:
        parts = [("situation", situation)] if situation else []
        parts += [("at", self.where), ("sent", self.sent), ("got", self.received), ("expected", self.expected)]
        if not self.ok:
            parts.append(("fault", f"{self.status}: {FAULT_HINT.get(self.status, '')}"))
        return tuple(parts)

