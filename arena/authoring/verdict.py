"""The verdict of `arena validate`: a check for the hello, for each scripted game, for each
situation a bot must handle (chopsticks, wasabi, the last card, both sides of the dummy),
for a fault reported in ``last_action`` and for the time, each judged from what the
validator saw (:class:`Seen`), and a failure naming the exchange that shows it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from arena.authoring.checks import (
    DUMMY,
    EVENTS,
    LEGAL,
    MESSAGES,
    RULES_BRIEF,
    SHARED,
    TIME,
    Check,
    Exchange,
    Section,
)
from arena.authoring.situations import (
    AFTER_FAULT,
    CHOPSTICKS,
    CONTROLLER,
    LAST_CARD,
    OTHER,
    RETURNED,
    WASABI_PAIR,
    WASABI_SHOWN,
    GameScript,
)
from arena.engine import Variant
from arena.game.players import TimeSettings


@dataclass(slots=True)
class Seen:
    """What the validator saw of the bot, for the verdict."""

    time_settings: TimeSettings
    exchanges: list[Exchange] = field(default_factory=list)  # every request and answer, in order
    decisions_ms: list[float] = field(default_factory=list)  # the time of every act answered in time
    hello_check: Check | None = None  # None: the handshake was never tried
    games_played: set[str] = field(default_factory=set)  # labels of the games begun
    unplayed: dict[str, str] = field(default_factory=dict)  # label -> why the game was not played


def judge(games: list[GameScript], seen: Seen) -> list[Check]:
    """Every check of the report after the bot found and built: the hello, each scripted
    game, each situation, the fault in last_action and the time, in that order."""
    checks = [seen.hello_check] if seen.hello_check is not None else []
    for g in games:
        checks.append(_game_check(seen, g))
    chop = next(g.label for g in games if g.force_chopsticks)
    fault_game = next(g.label for g in games if g.set_aside)
    dummy = next(g.label for g in games if g.config.variant is Variant.DUMMY)
    first = games[0].label
    checks += [
        _situation_check(seen,
            "chopsticks offered", (CHOPSTICKS,), chop, LEGAL,
            "offered two-card plays (chopsticks in its tableau)"),
        _situation_check(seen,
            "wasabi before nigiri", (WASABI_PAIR, WASABI_SHOWN), chop, RULES_BRIEF,
            "offered a wasabi-then-nigiri chopsticks pair (R7a), and shown another seat playing one"),
        _situation_check(seen,
            "chopsticks returned", (RETURNED,), chop, EVENTS,
            "shown reveals where chopsticks were used and went back into the hand passed on (R8)"),
        _situation_check(seen,
            "last card of a round", (LAST_CARD,), first, EVENTS,
            "shown the last_card event (the last card played for every seat, R6a) with the round_end"),
        _situation_check(seen,
            "dummy: controller turn", (CONTROLLER,), dummy, DUMMY,
            "asked as the dummy's controller (act.dummy true: every play names a dummy_card)"),
        _situation_check(seen,
            "dummy: other player's turn", (OTHER,), dummy, DUMMY,
            "asked while the other player controls the dummy (act.dummy false: no dummy_card)"),
        _fault_check(seen, fault_game),
        _time_check(seen),
    ]
    return checks


def _not_reached(seen: Seen, name: str, label: str, section: Section, what: str = "") -> Check:
    prefix = f"{what}: " if what else ""
    if label in seen.unplayed:
        return Check(name, False, prefix + seen.unplayed[label], str(section), summary="not played: no handshake")
    bad = next((e for e in seen.exchanges if e.game == label and not e.ok), None)
    if bad is not None:
        return Check(name, False, f"{prefix}not reached, because the bot failed earlier: {bad.describe()}",
                     str(bad.section), summary=f"not reached: {bad.summary}",
                     details=(("not reached", f"the bot failed earlier in '{label}'"), *bad.details(what)))
    return Check(name, False, f"{prefix}not reached in '{label}'", str(section), summary="not reached")


def _game_check(seen: Seen, g: GameScript) -> Check:
    name = g.label
    mine = [e for e in seen.exchanges if e.game == g.label]
    bad = next((e for e in mine if not e.ok), None)
    if bad is not None:
        return Check(name, False, bad.describe(), str(bad.section), summary=bad.summary, details=bad.details())
    if not any(e.what == "game_over" for e in mine):
        return _not_reached(seen, name, g.label, MESSAGES)
    decisions = sum(1 for e in mine if e.what == "act")
    extra = ", passing right in round 2" if g.config.variant is Variant.ALTERNATE else ""
    text = f"seat {g.seat} of {g.config.seats}{extra}: {decisions} decisions, all accepted"
    return Check(name, True, f"{text}; game_start and game_over answered", str(MESSAGES), summary=text)


def _situation_check(seen: Seen, name: str, keys: tuple[str, ...], home: str, section: Section, what: str) -> Check:
    shown = [e for e in seen.exchanges if any(k in e.situations for k in keys)]
    bad = next((e for e in shown if not e.ok), None)
    if bad is not None:
        # A crash or an illegal answer here is about the situation; a timeout or a bad line is not.
        where = section if bad.status in ("crash", "illegal") and bad.section is not DUMMY else bad.section
        return Check(name, False, f"{what}: {bad.describe()}", str(where), summary=bad.summary,
                     details=bad.details(what))
    if any(not any(k in e.situations for e in shown) for k in keys):
        return _not_reached(seen, name, home, section, what)
    text = f"{len(shown)}×, first at {shown[0].where}; all accepted"
    return Check(name, True, f"{what}: {text}", str(section), summary=text)


def _fault_check(seen: Seen, label: str) -> Check:
    name = "fault in last_action"
    what = "after its answer was set aside on purpose (reported in last_action as a timeout)"
    after = [e for e in seen.exchanges if AFTER_FAULT in e.situations]
    bad = next((e for e in after if not e.ok), None)
    if bad is not None:
        return Check(name, False, f"{what}: {bad.describe()}", str(bad.section), summary=bad.summary,
                     details=bad.details(what))
    aside = next((e for e in seen.exchanges if e.game == label and e.status == "set_aside"), None)
    if aside is None or not any(e.what == "game_over" for e in after):
        return _not_reached(seen, name, label, SHARED, what)
    text = f"set aside at {aside.where}; the bot played on: {len(after)} more request(s) answered"
    return Check(
        name, True,
        f"its answer at {aside.where} was set aside on purpose (last_action.status 'timeout' in the next act); "
        f"it answered that act and the remaining {len(after) - 1} request(s) of the game correctly",
        str(SHARED), summary=text,
    )


def _time_check(seen: Seen) -> Check:
    name = "time"
    ts = seen.time_settings
    late = [e for e in seen.exchanges if e.status == "timeout"]
    if late:
        return Check(name, False, f"{len(late)} request(s) not answered in time; the first: {late[0].describe()}",
                     str(TIME), summary=f"{len(late)} timeout(s), the first at {late[0].where}",
                     details=late[0].details(f"{len(late)} request(s) not answered in time; the first:"))
    if not seen.decisions_ms:
        why = "not reached: no game was played" if not seen.games_played else "no decision was answered"
        return Check(name, False, why, str(TIME))
    if ts.no_timeout:
        return Check(name, True, "deadlines were off (--no-timeout): nothing was timed", str(TIME))
    turn_ms = ts.scaled_ms(ts.turn_ms)
    text = (f"median {statistics.median(seen.decisions_ms):.2f} ms, worst {max(seen.decisions_ms):.2f} ms "
            f"(turn_ms {turn_ms})")
    over = sum(1 for d in seen.decisions_ms if d > turn_ms)
    if over:
        text += f"; {over} over turn_ms, paid from the bank"
    message = f"{len(seen.decisions_ms)} decisions, every one in time: {text}"
    if over:
        message += ": a loaded tournament machine could time such answers out"
    return Check(name, True, message, str(TIME), summary=text)
