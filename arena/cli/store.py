"""`arena store`: rebuild the results store from the replay files, and move its secret
deal key (export, import); arena.store and arena.store_rebuild do the work."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.cli.console import HELP, err, out, say_waiting
from arena.cli.options import JsonOption, ResultsArgument

store_app = typer.Typer(
    help="The results store (RESULTS/arena.db): rebuild it from the replay files, or move its secret deal key.",
    no_args_is_help=True,
    **HELP,
)
store_key_app = typer.Typer(
    help="The store's secret deal key: every deal, set id and card id of its games is keyed with it.",
    no_args_is_help=True,
    **HELP,
)
store_app.add_typer(store_key_app, name="key")


@store_app.command("rebuild")
def store_rebuild_command(
    results: ResultsArgument = Path("results"),
    json_output: JsonOption = False,
) -> None:
    """Make RESULTS/arena.db again from the replay files (every replay re-simulated), e.g.
    after it was damaged: the old file is moved aside, never deleted; what could not be
    recovered is listed. Holds the results folder like a run (waits for one going on)."""
    from arena.store_rebuild import rebuild_store

    spinner = err.is_terminal and not json_output
    try:
        with err.status("rebuilding the store from the replays…", spinner="dots") if spinner else nullcontext():
            report = rebuild_store(results, on_wait=say_waiting)
    except KeyboardInterrupt:
        err.print("\n[yellow]interrupted[/yellow]: the store was not changed.", highlight=False)
        raise typer.Exit(130) from None
    if json_output:
        print(json.dumps(report.to_dict()))
    else:
        _print_rebuild(report)
    if report.not_recovered or report.lost:  # (a lost meta table is said above: the games are all there)
        raise typer.Exit(1)


def _print_rebuild(r) -> None:  # noqa: ANN001 - a RebuildReport
    db = r.root / "arena.db"
    if r.moved_to is not None:
        said = "damaged" if r.old_damaged else "the old database"
        err.print(f"{escape(str(db))}: {said}, moved aside to {escape(str(r.moved_to))}", highlight=False)
    out.print(
        f"[green]✓[/green] {escape(str(db))} rebuilt: {r.games} game(s) from their replays, {r.tournaments} tournament(s), "
        f"in {r.seconds:.1f} s",
        highlight=False,
    )
    if r.kept_meta:
        err.print(f"kept from the old database: {escape(', '.join(r.kept_meta))}", highlight=False)
    if r.meta_lost:
        err.print(
            "[yellow]warning:[/yellow] the old database's settings (its meta table) could not be read in full: "
            "a key the store held (e.g. its deal key) is lost; import it again (`arena store key import`)",
            highlight=False,
        )
    if r.unreadable_tables:
        err.print(
            f"[yellow]warning:[/yellow] the old database could be read only in part ({escape(', '.join(r.unreadable_tables))})",
            highlight=False,
        )
    if r.unlinked:
        err.print(
            f"[yellow]warning:[/yellow] {r.unlinked} game(s) recorded without their tournament (its rows were lost): "
            "run the same `arena run` again, it counts them in again without playing them",
            highlight=False,
        )
    if r.guessed_sets:
        err.print(f"{r.guessed_sets} game(s) put in a duplicate set by their deal (their set's row was lost)", highlight=False)
    if r.void:
        err.print(f"{r.void} void game(s) left out: the next run plays them again", highlight=False)
    for _, reason in r.not_recovered[:20]:
        err.print(f"[bold red]✗[/bold red] not recovered: {escape(reason)}", highlight=False)
    if len(r.not_recovered) > 20:
        err.print(f"… and {len(r.not_recovered) - 20} more replay file(s) not recovered", highlight=False)
    if r.lost:
        shown = ", ".join(r.lost[:10]) + (f" and {len(r.lost) - 10} more" if len(r.lost) > 10 else "")
        err.print(
            f"[bold red]✗[/bold red] {len(r.lost)} game(s) of the old database have no usable replay: {shown} "
            "(the next run plays them again)",
            highlight=False,
        )



@store_key_app.command("export")
def store_key_export_command(
    results: ResultsArgument = Path("results"),
) -> None:
    """Print the store's deal key (64 hex digits). Keep it secret: whoever has it can compute every
    deal of the store's games. `arena store key import` puts it into a fresh results folder, whose
    runs then play the very same games with the same --seed."""
    from arena.store import open_store

    # Read-only first (a read-only folder's key can be exported too); a store without a key
    # yet is opened to make one.
    with open_store(results, create=False, read_only=True) as store:
        key = store.stored_deal_key()
    if key is None:
        with open_store(results, create=False) as store:
            key = store.deal_key()
    print(key.hex())


@store_key_app.command("import")
def store_key_import_command(
    key: Annotated[str, typer.Argument(help="A deal key, as `arena store key export` printed it.", metavar="KEY")],
    results: Annotated[Path, typer.Argument(help="The results folder (made if missing).", metavar="RESULTS")] = Path("results"),
) -> None:
    """Make KEY the deal key of the store in RESULTS: only a store with no games yet (or a new one).
    Holds the results folder like a run (waits for one going on, then checks its games)."""
    from arena.store import open_store, parse_deal_key, results_lock

    parse_deal_key(key, "the key to import")  # checked before any folder is made
    # A run reads the key once, under this lock, and deals every game with it: replacing it
    # under a run would record games dealt with a key gone from the store.
    try:
        with results_lock(results, "arena store key import", on_wait=say_waiting), open_store(results) as store:
            store.import_deal_key(key)
    except KeyboardInterrupt:
        err.print("\n[yellow]interrupted[/yellow]: the deal key was not changed.", highlight=False)
        raise typer.Exit(130) from None
    err.print(f"deal key imported into {escape(str(store.path))}", highlight=False)
