"""How the commands on one game's files print what they did: a played game (`arena play`),
a recorded one (`arena replay`, `--ask`, `--html`), replays verified (`arena verify`: a line
per file as it is checked, then the verdict), and the store's rebuild and deal key; each as
rich text or lines for a person, or one JSON object for a script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from arena.cli.render import render_ask, render_game, replay_summary
from arena.cli.render_results import print_rebuild
from arena.game.replay import Replay

#: One replay file as `arena verify` judged it: the file, "" (verified) or why not
#: ("unreadable" or "differs"), the message naming the file, and a note on a good one.
Verified = tuple[str, str, str, str]


def print_interrupted(err: Console, what: str) -> None:
    """An interrupted command that changed nothing: ``what`` was not changed."""
    err.print(f"\n[yellow]interrupted[/yellow]: {what} was not changed.", highlight=False)


def print_stopped(err: Console, what: str, exc: BaseException) -> None:
    """An interrupted command that stopped its bots: ``what``, then the signal if one is named."""
    by = f" ({exc})" if str(exc) else ""
    err.print(f"interrupted: {what}{by}", highlight=False)


def print_played(out: Console, err: Console, replay: Replay, path: Path, *, verbose: bool, json_output: bool) -> None:
    """`arena play`: the game (every turn with ``verbose``) and where its replay is, or the
    replay's summary with its path as one JSON object."""
    if json_output:
        summary = replay_summary(replay)
        summary["replay"] = str(path)
        print(json.dumps(summary))
    else:
        render_game(out, replay, verbose=verbose)
        err.print(f"replay: {path}", highlight=False)


def print_replay(out: Console, replay: Replay, *, only: tuple[int, int] | None, json_output: bool) -> None:
    """`arena replay`: the game turn by turn (only turn ``only`` if given), or its summary as JSON."""
    if json_output:
        print(json.dumps(replay_summary(replay)))
        return
    render_game(out, replay, verbose=True, only=only)


def print_viewer(err: Console, page: Path) -> None:
    """`arena replay --html`: where the page was written."""
    err.print(f"replay viewer: {page}", highlight=False)


def print_asked(out: Console, report: Any, *, json_output: bool) -> None:  # noqa: ANN401 - an AskReport
    """`arena replay --ask`: the bot's answer to the recorded act, as a person or a script reads it."""
    if json_output:
        print(json.dumps(report.to_dict()))
    else:
        render_ask(out, report)


def print_verified(out: Console, err: Console, verified: Verified) -> None:
    """One replay's line, as soon as it is checked: a tick on ``out``, or a cross and why on ``err``."""
    file, kind, message, note = verified
    if kind:
        err.print(f"[bold red]✗[/bold red] {escape(message)}", highlight=False)
    else:
        out.print(f"[green]✓[/green] {escape(file)}" + (f" [dim]({escape(note)})[/dim]" if note else ""),
                  highlight=False)


def print_verify_end(
    out: Console, err: Console, results: list[Verified], *, in_store: bool, json_output: bool
) -> None:
    """The verdict of `arena verify` after its lines (or, with ``json_output``, the whole
    of it as one JSON object: every file, and the failures apart); outside a results
    folder, that the store was not checked."""
    failures = [(file, message, kind) for file, kind, message, _ in results if kind]
    if json_output:
        listed = [
            {"file": file, "status": kind, "error": message} if kind
            else {"file": file, "status": "ok", **({"note": note} if note else {})}
            for file, kind, message, note in results
        ]
        print(
            json.dumps(
                {
                    "checked": len(results),
                    "failed": len(failures),
                    "failures": [{"file": f, "error": e, "kind": k} for f, e, k in failures],
                    "files": listed,
                }
            )
        )
        return
    if not failures:
        out.print(f"[green]✓[/green] {len(results)} replay(s) verified: every game re-simulates exactly", highlight=False)
    else:
        err.print(verify_summary(len(results), failures), highlight=False)
    if not in_store:
        err.print("[dim](not in a results folder: seats, versions and hashes not checked against a store)[/dim]", highlight=False)


def verify_summary(checked: int, failures: list[tuple[str, str, str]]) -> str:
    """The last line of a failed ``arena verify``: the files that are not readable
    replays apart from the replays that differ from the engine."""
    unreadable = sum(1 for *_, kind in failures if kind == "unreadable")
    differ = len(failures) - unreadable
    replays = checked - unreadable
    parts = []
    if unreadable:
        parts.append(f"{unreadable} file is not a readable replay" if unreadable == 1
                     else f"{unreadable} files are not readable replays")
    if differ:
        parts.append(f"{differ} of {replays} replay(s) differ from the engine")
    elif replays:
        parts.append(f"the other {replays} replay(s) verified: every game re-simulates exactly")
    return "; ".join(parts) if checked == 1 else f"{checked} files checked: " + "; ".join(parts)


def print_rebuilt(out: Console, err: Console, report: Any, *, json_output: bool) -> None:  # noqa: ANN401 - a RebuildReport
    """`arena store rebuild`: what it did, for a person or as one JSON object."""
    if json_output:
        print(json.dumps(report.to_dict()))
    else:
        print_rebuild(out, err, report)


def print_deal_key(key: bytes) -> None:
    """`arena store key export`: the key, as the 64 hex digits `store key import` takes."""
    print(key.hex())


def print_key_imported(err: Console, database: Path) -> None:
    """`arena store key import`: which store has the key now."""
    err.print(f"deal key imported into {escape(str(database))}", highlight=False)
